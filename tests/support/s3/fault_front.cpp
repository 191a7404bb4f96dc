// SPDX-License-Identifier: Apache-2.0
#include "s3/fault_front.hpp"

#include "http/client.hpp"
#include "s3/checksum.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <list>

namespace iss::test {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;
namespace {
constexpr auto use_tuple = net::as_tuple(net::use_awaitable);

std::string lower_copy(std::string s) {
    for (char& c : s)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return s;
}

void hard_close(tcp::socket& s) {
    boost::system::error_code ec;
    // SO_LINGER 0: close sends RST instead of FIN (a connection reset as the client sees it).
    s.set_option(net::socket_base::linger{true, 0}, ec);
    s.close(ec);
}
}  // namespace

struct fault_front::impl : std::enable_shared_from_this<impl> {
    net::any_io_executor ex;
    std::optional<http::endpoint> upstream;
    tcp::acceptor acceptor;
    std::unique_ptr<http::client> upstream_client;
    std::vector<fault_rule> rules;
    std::vector<unsigned> seen;  // matches per rule
    std::vector<recorded_request> log;
    std::list<tcp::socket*> open;
    http::response fixed{200, "OK", {}, {}};
    std::optional<net::ssl::context> tls;  // set: the front serves https
    bool stopped = false;

    impl(net::any_io_executor e, std::optional<http::endpoint> up, const std::optional<tls_files>& files)
        : ex{e}, upstream{std::move(up)}, acceptor{e, tcp::endpoint{net::ip::make_address("127.0.0.1"), 0}} {
        if (files) {
            tls.emplace(net::ssl::context::tls_server);
            tls->use_certificate_chain_file(files->certificate_file);  // throws when unreadable: a broken test setup
            tls->use_private_key_file(files->private_key_file, net::ssl::context::pem);
        }
        http::client_options o;
        o.tls.insecure = upstream && upstream->tls;  // the front only forwards to a local test server
        o.timeout.read = std::chrono::milliseconds{120'000};
        upstream_client = std::make_unique<http::client>(ex, o);
    }

    fault pick(const std::string& method, const std::string& target, std::chrono::milliseconds& delay) {
        for (std::size_t i = 0; i < rules.size(); ++i) {
            const auto& r = rules[i];
            if (!r.method.empty() && r.method != method) continue;
            if (target.find(r.target_contains) == std::string::npos) continue;
            const unsigned n = seen[i]++;
            if (n < r.skip) continue;
            const unsigned every = std::max(r.every, 1U);
            if ((n - r.skip) % every != 0 || (n - r.skip) / every >= r.times) continue;
            delay = r.delay;
            return r.action;
        }
        return fault::none;
    }

    net::awaitable<void> accept_loop() {
        auto self = shared_from_this();
        for (;;) {
            auto [ec, sock] = co_await acceptor.async_accept(use_tuple);
            if (ec || stopped) co_return;
            net::co_spawn(ex, session(std::move(sock)), net::detached);
        }
    }

    static std::string serialize(const http::response& r, bool lowercase, bool head, std::size_t body_bytes) {
        std::string out = fmt::format("HTTP/1.1 {} {}\r\n", r.status, r.reason.empty() ? "X" : r.reason);
        for (const auto& [name, value] : r.headers) {
            if (http::iequals(name, "transfer-encoding")) continue;
            if (!head && http::iequals(name, "content-length")) continue;
            out += lowercase ? lower_copy(name) : name;
            out += ": ";
            out += value;
            out += "\r\n";
        }
        if (!head) out += fmt::format("{}: {}\r\n", lowercase ? "content-length" : "Content-Length", r.body.size());
        out += "\r\n";
        if (!head) out.append(r.body, 0, body_bytes);
        return out;
    }

    /// One connection: plain, or TLS first (a failed handshake ends it); then `serve`. The
    /// TCP socket is listed in `open` throughout, so `stop()` closes it even mid-handshake.
    net::awaitable<void> session(tcp::socket sock) {
        auto self = shared_from_this();
        std::optional<net::ssl::stream<tcp::socket>> secured;
        if (tls) secured.emplace(std::move(sock), *tls);
        tcp::socket& low = secured ? secured->next_layer() : sock;
        open.push_back(&low);
        struct unlist {
            impl* i;
            std::list<tcp::socket*>::iterator it;
            ~unlist() { i->open.erase(it); }
        } guard{this, std::prev(open.end())};
        if (!secured) {
            co_await serve(sock, sock);
            co_return;
        }
        auto [hec] = co_await secured->async_handshake(net::ssl::stream_base::server, use_tuple);
        if (hec || stopped) co_return;
        co_await serve(*secured, low);
    }

    /// Requests on `stream` (the socket itself or TLS over it) until the client or a fault
    /// ends the connection; resets and closes act on `sock`, the TCP socket underneath.
    template <class Stream>
    net::awaitable<void> serve(Stream& stream, tcp::socket& sock) {
        beast::flat_buffer buf;
        for (;;) {
            bhttp::request_parser<bhttp::string_body> p;
            p.body_limit(boost::none);
            auto [hec, hn] = co_await bhttp::async_read_header(stream, buf, p, use_tuple);
            if (hec) co_return;
            std::chrono::milliseconds delay{0};
            const std::string method{p.get().method_string()};
            const std::string target{p.get().target()};
            const fault f = pick(method, target, delay);
            recorded_request rec{method, target, {}, 0, f, std::chrono::steady_clock::now()};
            for (const auto& h : p.get()) rec.headers.add(std::string{h.name_string()}, std::string{h.value()});
            if (f == fault::reset_mid_request) {
                // Take a little of the body, then reset: an upload cut in the middle.
                std::array<char, 4096> scratch{};
                co_await stream.async_read_some(net::buffer(scratch), use_tuple);
                log.push_back(std::move(rec));
                hard_close(sock);
                co_return;
            }
            if (f == fault::stall_body) {
                // A small receive buffer, so the client's sends fill up on any host (not only
                // where the default loopback buffers are smaller than the body).
                boost::system::error_code ignored;
                sock.set_option(net::socket_base::receive_buffer_size{64 << 10}, ignored);
                net::steady_timer t{ex};
                t.expires_after(delay);
                co_await t.async_wait(use_tuple);
                if (stopped) co_return;
            }
            auto [bec, bn] = co_await bhttp::async_read(stream, buf, p, use_tuple);
            if (bec) co_return;
            auto& msg = p.get();
            rec.body_size = msg.body().size();
            log.push_back(rec);
            if (f == fault::reset_before_response) {
                hard_close(sock);
                co_return;
            }
            if (f == fault::delay) {
                net::steady_timer t{ex};
                t.expires_after(delay);
                co_await t.async_wait(use_tuple);
                if (stopped) co_return;
            }
            http::response resp;
            if (f == fault::slow_down_503) {
                resp = {503,
                        "Slow Down",
                        {{"Content-Type", "application/xml"}, {"x-amz-request-id", "front-503"}},
                        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>SlowDown</Code>"
                        "<Message>Please reduce your request rate.</Message><RequestId>front-503</RequestId></Error>"};
            } else if (f == fault::verify_crc32c && msg.find("x-amz-checksum-crc32c") != msg.end() &&
                       msg["x-amz-checksum-crc32c"] != s3::crc32c_header_value(s3::crc32c(msg.body()))) {
                resp = {400,
                        "Bad Request",
                        {{"Content-Type", "application/xml"}, {"x-amz-request-id", "front-400"}},
                        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>BadDigest</Code>"
                        "<Message>The CRC32C you specified did not match the calculated checksum.</Message>"
                        "<RequestId>front-400</RequestId></Error>"};
            } else if (f == fault::access_denied_403 || f == fault::kms_access_denied_403) {
                const char* const message = f == fault::access_denied_403
                                                ? "Access Denied"
                                                : "User: arn:aws:iam::000000000000:user/sink is not authorized to "
                                                  "perform: kms:GenerateDataKey on this resource because no "
                                                  "identity-based policy allows the kms:GenerateDataKey action";
                resp = {403,
                        "Forbidden",
                        {{"Content-Type", "application/xml"}, {"x-amz-request-id", "front-403"}},
                        fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>AccessDenied</Code>"
                                    "<Message>{}</Message><RequestId>front-403</RequestId></Error>",
                                    message)};
            } else if (f == fault::kms_disabled_400) {
                resp = {400,
                        "Bad Request",
                        {{"Content-Type", "application/xml"}, {"x-amz-request-id", "front-kms"}},
                        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>KMS.DisabledException</Code>"
                        "<Message>The request was rejected because the specified KMS key is not enabled.</Message>"
                        "<RequestId>front-kms</RequestId></Error>"};
            } else if (f == fault::internal_500_empty) {
                resp = {500, "Internal Server Error", {}, {}};
            } else if (f == fault::unauthorized_401) {
                resp = {401,
                        "Unauthorized",
                        {{"Content-Type", "application/json"}},
                        R"({"error":{"message":"Not authorized - fault front","type":"NotAuthorizedException",)"
                        R"("code":401}})"};
            } else if (f == fault::conflict_409) {
                resp = {409,
                        "Conflict",
                        {{"Content-Type", "application/json"}},
                        R"({"error":{"message":"Requirement failed: branch main has changed - fault front",)"
                        R"("type":"CommitFailedException","code":409}})"};
            } else if (!upstream) {
                resp = fixed;
                resp.headers.add("X-Echo-Host", std::string{msg[bhttp::field::host]});
                resp.headers.add("X-Echo-Body-Size", std::to_string(msg.body().size()));
            } else {
                http::request fwd;
                fwd.method = method;
                fwd.target = target;
                for (const auto& h : msg) fwd.headers.add(std::string{h.name_string()}, std::string{h.value()});
                std::string body = std::move(msg.body());
                if (f == fault::corrupt_body && !body.empty()) body[body.size() / 2] ^= 0x20;
                if (!body.empty()) fwd.body.push_back(body);
                auto r = co_await upstream_client->send(*upstream, std::move(fwd));
                if (!r) {
                    hard_close(sock);
                    co_return;
                }
                resp = std::move(*r);
                if (f == fault::internal_500_after_forward)
                    resp = {
                        500,
                        "Internal Server Error",
                        {{"Content-Type", "application/json"}},
                        R"({"error":{"message":"Internal Server Error - fault front, after the upstream applied it",)"
                        R"("type":"CommitStateUnknownException","code":500}})"};
            }
            if (f == fault::drop_response) {
                hard_close(sock);
                co_return;
            }
            const bool head = method == "HEAD";
            const std::size_t body_bytes = f == fault::truncate_response ? resp.body.size() / 2 : resp.body.size();
            std::string wire = serialize(resp, f == fault::lowercase_headers, head, body_bytes);
            if (f == fault::truncate_response && head) wire.resize(wire.size() / 2);
            auto [wec, wn] = co_await net::async_write(stream, net::buffer(wire), use_tuple);
            if (wec || f == fault::truncate_response) {
                boost::system::error_code ec;
                sock.shutdown(tcp::socket::shutdown_both, ec);
                sock.close(ec);
                co_return;
            }
            if (!msg.keep_alive()) co_return;
        }
    }
};

fault_front::fault_front(net::any_io_executor ex, std::optional<http::endpoint> upstream, std::optional<tls_files> tls)
    : impl_{std::make_shared<impl>(ex, std::move(upstream), tls)} {
    net::co_spawn(ex, impl_->accept_loop(), net::detached);
}

fault_front::~fault_front() { stop(); }

std::uint16_t fault_front::port() const { return impl_->acceptor.local_endpoint().port(); }
std::string fault_front::url() const { return fmt::format("{}://127.0.0.1:{}", impl_->tls ? "https" : "http", port()); }

void fault_front::add_rule(fault_rule r) {
    impl_->rules.push_back(std::move(r));
    impl_->seen.push_back(0);
}

void fault_front::clear_rules() {
    impl_->rules.clear();
    impl_->seen.clear();
}

void fault_front::set_fixed_response(unsigned status, http::header_list headers, std::string body) {
    impl_->fixed = http::response{status, "R", std::move(headers), std::move(body)};
}

const std::vector<recorded_request>& fault_front::requests() const { return impl_->log; }
void fault_front::clear_requests() { impl_->log.clear(); }

void fault_front::stop() {
    if (impl_->stopped) return;
    impl_->stopped = true;
    boost::system::error_code ec;
    impl_->acceptor.close(ec);
    for (auto* s : impl_->open) s->close(ec);
}

}  // namespace iss::test
