// SPDX-License-Identifier: Apache-2.0
#include "http/client.hpp"

#include "common/log.hpp"
#include "common/net/connect.hpp"
#include "http/record_sink.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

namespace iss::http {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using steady = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

constexpr auto use_tuple = net::as_tuple(net::use_awaitable);
constexpr std::size_t write_slice = 1U << 20;  // bytes written per deadline step

const log::logger& logger() {
    static const log::logger l{"http"};
    return l;
}

/// One pooled connection: plain TCP or TLS over TCP, and its read buffer (which may hold
/// bytes past the previous response; none for a well-behaved server).
struct connection {
    std::unique_ptr<beast::tcp_stream> tcp;
    std::unique_ptr<tls_stream> tls;
    beast::flat_buffer buffer;
    steady::time_point idle_since{};

    beast::tcp_stream& lowest() { return tls ? beast::get_lowest_layer(*tls) : *tcp; }
};

struct pool_key {
    bool tls;
    std::string host;
    std::uint16_t port;
    std::string connect_host;
    std::string proxy;  ///< "host:port" of the proxy, or ""
    friend auto operator<=>(const pool_key&, const pool_key&) = default;
};

/// A caller's cancellation throws (docs/architecture.md §8.4.5): never a value, never retried.
void throw_if_cancelled(const boost::system::error_code& ec) {
    if (ec == net::error::operation_aborted) throw boost::system::system_error{ec};
}

/// Plaintext sealed into TLS records per socket write of a request body over TLS.
constexpr std::size_t tls_batch = 256 * 1024;

/// Seals a request body into TLS application-data records in batches, past Asio's TLS
/// engine. That engine moves ciphertext through a BIO pair of one record (17 KiB): one
/// SSL_write, one copy out of the pair, one socket write and one completion per 16 KiB.
/// Here, for the writer's life, the SSL object's write BIO is one of ours: SSL_write seals up
/// to `tls_batch` bytes of plaintext (16 records), and each record OpenSSL hands the BIO goes
/// straight to the socket with a non-blocking send(2) from OpenSSL's own record buffer (no
/// copy of the ciphertext in user space). What the socket does not take now (its send buffer
/// is full) is kept, in order, in `pending()` from then on, and the caller writes it with one
/// Asio write, which waits for room: the back-pressure of a blocking write, at most one batch
/// held.
///
/// Safe between Asio operations only: no Asio write is in flight then (every Asio write
/// completes after its bytes are on the socket), so direct sends cannot interleave with one;
/// the engine holds no output, and the record sequence stays the SSL object's. The engine's
/// own BIO (read and write BIO alike) is put back by the destructor.
class tls_record_writer {
public:
    tls_record_writer(SSL* ssl, int fd) : ssl_{ssl}, engine_bio_{SSL_get_wbio(ssl)}, sink_{fd, {}, 0} {
        BIO_METHOD* const m = method();
        if (m == nullptr || (bio_ = BIO_new(m)) == nullptr) return;
        BIO_set_data(bio_, &sink_);
        BIO_set_init(bio_, 1);
        BIO_up_ref(engine_bio_);  // SSL_set0_wbio drops the SSL's reference to the old write BIO
        SSL_set0_wbio(ssl_, bio_);
    }
    tls_record_writer(const tls_record_writer&) = delete;
    tls_record_writer& operator=(const tls_record_writer&) = delete;
    ~tls_record_writer() {
        if (bio_ != nullptr) SSL_set0_wbio(ssl_, engine_bio_);  // frees bio_, keeps our reference
    }

    /// Seals all of `plain` into records and sends them or keeps them in `pending()`; an
    /// error with what OpenSSL or the socket said when it cannot (the connection is then
    /// unusable: the caller drops it).
    result<void> seal(std::string_view plain) {
        if (bio_ == nullptr) return error{errc::write_failed, "TLS: cannot set up the record BIO"};
        while (!plain.empty()) {
            const int n =
                SSL_write(ssl_, plain.data(), static_cast<int>(std::min<std::size_t>(plain.size(), 1U << 30)));
            if (n <= 0) {
                if (sink_.send_errno != 0) {
                    ERR_clear_error();
                    return error{errc::write_failed, fmt::format("send: {}", std::strerror(sink_.send_errno))};
                }
                const int code = SSL_get_error(ssl_, n);
                char reason[256] = "unknown";
                if (const unsigned long e = ERR_get_error(); e != 0) ERR_error_string_n(e, reason, sizeof reason);
                ERR_clear_error();
                return error{errc::write_failed, fmt::format("TLS: SSL_write failed ({}): {}", code, reason)};
            }
            plain.remove_prefix(static_cast<std::size_t>(n));
        }
        return {};
    }
    /// The records sealed and not yet on the socket (written by the caller, then `clear`).
    [[nodiscard]] std::string_view pending() const noexcept { return sink_.pending; }
    void clear() noexcept { sink_.pending.clear(); }  // (keeps the capacity)

private:
    struct method_deleter {
        void operator()(BIO_METHOD* m) const noexcept { BIO_meth_free(m); }
    };
    /// The record BIO's method: made at the first use, once per process, and freed by this
    /// static's destructor at exit. That runs before OpenSSL's own exit handler
    /// (OPENSSL_cleanup, which OpenSSL registers with atexit when it is first initialised:
    /// by the TLS context of the client, or at the latest inside BIO_meth_new below), because
    /// static destructors and atexit handlers run in the reverse order of their registration
    /// (C++20 [basic.start.term]/3): the method never outlives the library state it came from.
    static BIO_METHOD* method() {
        static const std::unique_ptr<BIO_METHOD, method_deleter> m{make_method()};
        return m.get();
    }
    static BIO_METHOD* make_method() {
        BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "iss tls records");
        if (m == nullptr) return nullptr;
        // One record from OpenSSL: sent now or kept in order (record_sink.hpp); 0 fails SSL_write.
        BIO_meth_set_write_ex(m, [](BIO* b, const char* data, std::size_t len, std::size_t* written) {
            if (!static_cast<detail::record_sink*>(BIO_get_data(b))->write({data, len})) return 0;
            *written = len;
            return 1;
        });
        BIO_meth_set_ctrl(m, [](BIO*, int cmd, long, void*) -> long { return cmd == BIO_CTRL_FLUSH ? 1 : 0; });
        return m;
    }

    SSL* ssl_;
    BIO* engine_bio_;
    BIO* bio_ = nullptr;
    detail::record_sink sink_;
};

error timeout_error(std::string_view step, const endpoint& ep) {
    return error{errc::timeout, fmt::format("{} to {}", step, ep.to_string())};
}

/// The error of a failed body write (none when `ec` is success).
std::optional<error> write_error(const boost::system::error_code& ec, const endpoint& ep) {
    if (!ec) return std::nullopt;
    throw_if_cancelled(ec);
    if (ec == beast::error::timeout) return timeout_error("write", ep);
    return error{errc::write_failed, fmt::format("{}: {}", ep.to_string(), ec.message())};
}

}  // namespace

struct client::impl {
    net::any_io_executor ex;
    client_options opts;
    std::unique_ptr<net::ssl::context> ssl_ctx;
    mutable std::mutex mu;
    std::map<pool_key, std::vector<std::unique_ptr<connection>>> idle;
    client_stats stats;

    impl(net::any_io_executor e, client_options o) : ex{std::move(e)}, opts{std::move(o)} {
        if (opts.tls.insecure)
            logger().warn("TLS certificate verification is OFF (tls insecure switch): use only with test stores");
        auto ctx = make_tls_context({opts.tls.ca_file, !opts.tls.insecure});
        if (!ctx) throw error_exception{error{errc::tls_setup_failed, ctx.error().detail}};
        ssl_ctx = std::move(*ctx);
    }

    std::unique_ptr<connection> take_idle(const pool_key& key) {
        std::lock_guard lock{mu};
        auto it = idle.find(key);
        if (it == idle.end()) return nullptr;
        auto& list = it->second;
        const auto now = steady::now();
        while (!list.empty()) {
            auto c = std::move(list.back());
            list.pop_back();
            if (now - c->idle_since < opts.idle_timeout) return c;
            // Too old: the server has likely closed it. Dropping it closes the socket.
        }
        return nullptr;
    }

    void put_idle(const pool_key& key, std::unique_ptr<connection> c) {
        std::lock_guard lock{mu};
        auto& list = idle[key];
        if (list.size() >= opts.max_idle_per_endpoint) return;
        c->idle_since = steady::now();
        list.push_back(std::move(c));
    }

    net::awaitable<result<std::unique_ptr<connection>>> connect(const endpoint& ep,
                                                                const std::optional<proxy_route>& route,
                                                                std::optional<steady::time_point> deadline) {
        // Through a proxy, TCP goes to the proxy; the proxy resolves the endpoint's host.
        const std::string& target_host = route                     ? route->proxy.host
                                         : ep.connect_host.empty() ? ep.host
                                                                   : ep.connect_host;
        const std::uint16_t target_port = route ? route->proxy.port : ep.port;
        const connect_timeouts steps{opts.timeout.resolve, opts.timeout.connect, opts.timeout.handshake};
        auto t = co_await open_tcp(ex, target_host, target_port, steps, deadline);
        if (!t) {
            const auto& f = t.error();
            const bool resolving = f.where == connect_failure::step::resolve;
            if (f.timed_out) co_return timeout_error(resolving ? "resolve" : "connect", ep);
            if (resolving) co_return error{errc::resolve_failed, fmt::format("{}: {}", target_host, f.reason)};
            co_return error{errc::connect_failed,
                            fmt::format("{}:{}{}: {}", target_host, target_port, route ? " (proxy)" : "", f.reason)};
        }
        auto c = std::make_unique<connection>();
        c->tcp = std::move(*t);
        {
            std::lock_guard lock{mu};
            ++stats.connections_opened;
        }
        if (!ep.tls) co_return c;
        if (route) {
            // HTTPS through the proxy: a CONNECT tunnel to host:port, then TLS end to end.
            auto tn = co_await tunnel(*c->tcp, ep, *route, deadline);
            if (!tn) co_return tn.error();
        }
        auto h = co_await tls_handshake(std::move(c->tcp), *ssl_ctx, ep.host, !opts.tls.insecure,
                                        opts.timeout.handshake, deadline);
        if (!h) {
            const auto& f = h.error();
            if (f.timed_out) co_return timeout_error("TLS handshake", ep);
            if (f.certificate)
                co_return error{errc::certificate_rejected, fmt::format("{}: {}", ep.to_string(), f.reason)};
            co_return error{errc::tls_handshake_failed, fmt::format("{}: {}", ep.to_string(), f.reason)};
        }
        c->tls = std::move(*h);
        co_return c;
    }

    /// Asks the proxy for a tunnel to `ep` (RFC 9110 §9.3.6) and reads its answer (any 2xx).
    net::awaitable<result<void>> tunnel(beast::tcp_stream& s, const endpoint& ep, const proxy_route& route,
                                        std::optional<steady::time_point> deadline) {
        const std::string authority = ep.host.find(':') != std::string::npos ? fmt::format("[{}]:{}", ep.host, ep.port)
                                                                             : fmt::format("{}:{}", ep.host, ep.port);
        std::string req = fmt::format("CONNECT {0} HTTP/1.1\r\nHost: {0}\r\n", authority);
        if (!route.authorization.empty()) req += "Proxy-Authorization: " + route.authorization + "\r\n";
        req += "\r\n";
        s.expires_after(step_expiry(opts.timeout.write, deadline));
        auto [wec, wn] = co_await net::async_write(s, net::buffer(req), use_tuple);
        (void)wn;
        if (wec) {
            throw_if_cancelled(wec);
            co_return error{errc::connect_failed,
                            fmt::format("proxy {}: CONNECT: {}", route.to_string(), wec.message())};
        }
        beast::flat_buffer buf;
        bhttp::response_parser<bhttp::empty_body> parser;
        parser.skip(true);  // a 2xx answer to CONNECT has no body: the tunnel starts after the header
        s.expires_after(step_expiry(opts.timeout.read, deadline));
        auto [rec, rn] = co_await bhttp::async_read_header(s, buf, parser, use_tuple);
        (void)rn;
        if (rec) {
            throw_if_cancelled(rec);
            if (rec == beast::error::timeout) co_return timeout_error("proxy CONNECT", ep);
            co_return error{errc::connect_failed,
                            fmt::format("proxy {}: CONNECT {}: {}", route.to_string(), authority, rec.message())};
        }
        const unsigned status = parser.get().result_int();
        if (status < 200 || status > 299)
            co_return error{
                errc::connect_failed,
                fmt::format(
                    "proxy {} refused CONNECT {}: HTTP {}{}", route.to_string(), authority, status,
                    status == 407 ? " (proxy authentication: check the user and password in the proxy URL)" : "")};
        co_return result<void>{};
    }

    /// Writes the records `sealer` could not send at once on `lowest` (one write step; none
    /// when the socket took them all) and clears them.
    net::awaitable<std::optional<error>> send_records(beast::tcp_stream& lowest, tls_record_writer& sealer,
                                                      const endpoint& ep, std::optional<steady::time_point> deadline) {
        const std::string_view records = sealer.pending();
        if (records.empty()) co_return std::nullopt;
        {
            std::lock_guard lock{mu};
            ++stats.body_waits;
        }
        lowest.expires_after(step_expiry(opts.timeout.write, deadline));
        auto [ec, n] = co_await net::async_write(lowest, net::buffer(records.data(), records.size()), use_tuple);
        (void)n;
        sealer.clear();
        co_return write_error(ec, ep);
    }

    /// Writes the request and reads the response on `stream`. `got_bytes` tells the caller
    /// whether any response byte arrived (a dead pooled connection fails before that).
    template <class Stream>
    net::awaitable<result<response>> exchange(Stream& stream, connection& c, const endpoint& ep, const request& req,
                                              const std::optional<proxy_route>& route,
                                              std::optional<steady::time_point> deadline, bool& got_bytes,
                                              bool& keep_alive) {
        auto& lowest = c.lowest();
        bhttp::request<bhttp::empty_body> head;
        head.version(11);
        head.method_string(req.method);
        // Plain http through a proxy: the absolute form, and the proxy's credentials.
        const bool absolute = route && !ep.tls;
        head.target(absolute ? "http://" + ep.host_header() + req.target : req.target);
        for (const auto& [name, value] : req.headers) head.insert(name, value);
        if (absolute && !route->authorization.empty())
            head.set(bhttp::field::proxy_authorization, route->authorization);
        if (!req.headers.contains("host")) head.set(bhttp::field::host, ep.host_header());
        const std::size_t body_size = req.body_size();
        if (!req.headers.contains("content-length") && (body_size > 0 || req.method == "PUT" || req.method == "POST"))
            head.set(bhttp::field::content_length, std::to_string(body_size));

        bhttp::request_serializer<bhttp::empty_body> sr{head};
        lowest.expires_after(step_expiry(opts.timeout.write, deadline));
        auto [wec, wn] = co_await bhttp::async_write(stream, sr, use_tuple);
        (void)wn;
        if (wec) {
            throw_if_cancelled(wec);
            if (wec == beast::error::timeout) co_return timeout_error("write", ep);
            // A dead keep-alive connection usually fails here or on the first read.
            co_return error{errc::closed_before_response, fmt::format("{}: write: {}", ep.to_string(), wec.message())};
        }
        if constexpr (std::is_same_v<Stream, tls_stream>) {
            if (body_size > 0) {  // (a GET, a HEAD: no record writer to set up)
                tls_record_writer sealer{stream.native_handle(), lowest.socket().native_handle()};
                // Views are gathered: one socket write per `tls_batch` of plaintext, whatever
                // the views' sizes.
                std::size_t batched = 0;
                for (std::string_view part : req.body) {
                    while (!part.empty()) {
                        const std::size_t n = std::min(part.size(), tls_batch - batched);
                        if (auto sealed = sealer.seal(part.substr(0, n)); !sealed)
                            co_return error{sealed.error().code(),
                                            fmt::format("{}: {}", ep.to_string(), sealed.error().detail())};
                        if (req.body_sent) req.body_sent(part.substr(0, n));  // (sealed: not read again)
                        batched += n;
                        part.remove_prefix(n);
                        if (batched == tls_batch) {
                            std::optional<error> e = co_await send_records(lowest, sealer, ep, deadline);
                            if (e) co_return std::move(*e);
                            batched = 0;
                        }
                    }
                }
                if (batched > 0) {
                    std::optional<error> e = co_await send_records(lowest, sealer, ep, deadline);
                    if (e) co_return std::move(*e);
                }
            }
        } else {
            for (std::string_view part : req.body) {
                while (!part.empty()) {
                    const std::size_t n = std::min(part.size(), write_slice);
                    lowest.expires_after(step_expiry(opts.timeout.write, deadline));
                    auto [bec, bn] = co_await net::async_write(stream, net::buffer(part.data(), n), use_tuple);
                    (void)bn;
                    if (auto e = write_error(bec, ep)) co_return std::move(*e);
                    if (req.body_sent) req.body_sent(part.substr(0, n));
                    part.remove_prefix(n);
                }
            }
        }

        bhttp::response_parser<bhttp::string_body> parser;
        parser.body_limit(boost::none);
        parser.header_limit(64 * 1024);
        if (req.method == "HEAD") parser.skip(true);
        if (c.buffer.size() > 0) got_bytes = true;
        while (!parser.is_done()) {
            lowest.expires_after(step_expiry(opts.timeout.read, deadline));
            auto [rec, rn] = co_await bhttp::async_read_some(stream, c.buffer, parser, use_tuple);
            if (rn > 0 || parser.got_some()) got_bytes = true;
            if (!rec) continue;
            throw_if_cancelled(rec);
            if (rec == beast::error::timeout) co_return timeout_error("read", ep);
            const bool closed = rec == bhttp::error::end_of_stream || rec == net::error::eof ||
                                rec == net::error::connection_reset || rec == net::ssl::error::stream_truncated ||
                                rec == bhttp::error::partial_message || rec == net::error::broken_pipe;
            if (closed && !got_bytes)
                co_return error{errc::closed_before_response, fmt::format("{}: {}", ep.to_string(), rec.message())};
            if (closed) co_return error{errc::truncated_response, fmt::format("{}: {}", ep.to_string(), rec.message())};
            co_return error{errc::bad_response, fmt::format("{}: {}", ep.to_string(), rec.message())};
        }
        auto& msg = parser.get();
        response out;
        out.status = msg.result_int();
        out.reason = std::string{msg.reason()};
        for (const auto& f : msg) out.headers.add(std::string{f.name_string()}, std::string{f.value()});
        out.body = std::move(msg.body());
        keep_alive = msg.keep_alive() && !iequals(req.headers.get("connection"), "close");
        co_return out;
    }
};

client::client(net::any_io_executor ex, client_options opts)
    : impl_{std::make_unique<impl>(std::move(ex), std::move(opts))} {}

client::~client() = default;

net::awaitable<result<response>> client::send(endpoint ep, request req,
                                              std::optional<std::chrono::milliseconds> time_left) {
    // The caller measured its budget on its own (injected) clock; the steps run on Beast's.
    std::optional<steady::time_point> deadline;
    if (time_left) deadline = steady::now() + *time_left;
    auto route = route_for(impl_->opts.proxy, ep);
    if (!route) co_return route.error();
    const pool_key key{ep.tls, ep.host, ep.port, ep.connect_host,
                       *route ? fmt::format("{}:{}", (*route)->proxy.host, (*route)->proxy.port) : std::string{}};
    for (;;) {
        auto conn = impl_->take_idle(key);
        const bool reused = conn != nullptr;
        if (!conn) {
            auto c = co_await impl_->connect(ep, *route, deadline);
            if (!c) co_return c.error();
            conn = std::move(*c);
        }
        bool got_bytes = false;
        bool keep_alive = false;
        // (No co_await inside ?: here: GCC 12 miscompiles it and destroys frame members twice.)
        result<response> r = error{errc::bad_response};
        if (conn->tls)
            r = co_await impl_->exchange(*conn->tls, *conn, ep, req, *route, deadline, got_bytes, keep_alive);
        else r = co_await impl_->exchange(*conn->tcp, *conn, ep, req, *route, deadline, got_bytes, keep_alive);
        if (!r && reused && !got_bytes && r.error() == errc::closed_before_response) {
            // The server closed the idle keep-alive connection: send again on a fresh one.
            std::lock_guard lock{impl_->mu};
            ++impl_->stats.stale_retries;
            continue;
        }
        if (r) {
            {
                std::lock_guard lock{impl_->mu};
                ++impl_->stats.requests;
                if (reused) ++impl_->stats.connections_reused;
            }
            if (keep_alive) impl_->put_idle(key, std::move(conn));
        }
        co_return r;
    }
}

void client::close_idle() {
    std::lock_guard lock{impl_->mu};
    impl_->idle.clear();
}

client_stats client::stats() const {
    std::lock_guard lock{impl_->mu};
    return impl_->stats;
}

const client_options& client::options() const noexcept { return impl_->opts; }

}  // namespace iss::http
