#include "iggy/client.hpp"

#include "common/log.hpp"
#include "proto/commands.hpp"
#include "proto/g2_commands.hpp"
#include "proto/poll.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/stream_traits.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include <array>
#include <deque>
#include <map>
#include <random>
#include <variant>

namespace iss::iggy {

namespace beast = boost::beast;
using tcp = net::ip::tcp;
using net::use_awaitable;
constexpr auto use_tuple = net::as_tuple(net::use_awaitable);

namespace {

iss::error transport(errc e, const boost::system::error_code& ec, std::string_view what) {
    return iss::error{e, fmt::format("{}: {}", what, ec.message())};
}

// ---- G2 (issue 9): G1 request structs whose G2 body differs --------------------------------
namespace g2 = proto::g2;
template <class R>
const R& to_g2(const R& r) {
    return r;
}
g2::store_offset_request to_g2(const proto::store_consumer_offset_request& r) {
    return {r.consumer, r.stream, r.topic, r.partition_id, r.offset, 1};
}
g2::delete_offset_request to_g2(const proto::delete_consumer_offset_request& r) {
    return {r.consumer, r.stream, r.topic, r.partition_id, 1};
}
g2::create_stream_request to_g2(const proto::create_stream_request& r) { return {r.name, {}}; }
g2::create_topic_request to_g2(const proto::create_topic_request& r) {
    return {r.stream, r.partitions_count, r.name, {}};
}

proto::u128 random_client_id() {
    std::random_device rd;
    proto::u128 v = 0;
    for (int i = 0; i < 4; ++i) v = (v << 32) | rd();
    return v == 0 ? 1 : v;
}

/// An eviction as an error a caller can classify: credentials -> 42/53/47 (fail, never
/// retried), version gate -> 14003 (fail), a dead session -> 30 StaleClient (retry: reconnect,
/// log in, re-join), the rest -> protocol_error (retry on a new connection).
iss::error eviction_error(const g2::eviction_header& e) {
    std::string detail = fmt::format("evicted by the server: {} ({})", g2::eviction_reason_name(e.reason),
                                     g2::eviction_reason_hint(e.reason));
    if (e.reason == g2::eviction_reason::incompatible_protocol)
        detail += fmt::format("; the server accepts binary protocol {} to {}",
                              g2::version_text(e.server_protocol_version_min),
                              g2::version_text(e.server_protocol_version));
    auto server = [&](std::uint32_t code) { return iss::error{proto::server_error(code), detail}; };
    switch (e.reason) {
        case g2::eviction_reason::invalid_credentials: return server(42);
        case g2::eviction_reason::invalid_token: return server(53);
        case g2::eviction_reason::user_inactive: return server(47);
        case g2::eviction_reason::incompatible_protocol: return server(14003);
        case g2::eviction_reason::stale_client:
        case g2::eviction_reason::no_session:
        case g2::eviction_reason::session_too_low:
        case g2::eviction_reason::session_release_mismatch:
        case g2::eviction_reason::session_error: return server(30);
        default: return iss::error{errc::protocol_error, detail};
    }
}

}  // namespace

struct client::impl : std::enable_shared_from_this<client::impl> {
    impl(net::any_io_executor ex, client_options o) : ex_{std::move(ex)}, opts_{std::move(o)} {
        if (opts_.tls.enabled) {
            ssl_ctx_ = std::make_unique<net::ssl::context>(net::ssl::context::tls_client);
            if (opts_.tls.verify) {
                ssl_ctx_->set_verify_mode(net::ssl::verify_peer);
                boost::system::error_code ec;
                if (opts_.tls.ca_file.empty())
                    ssl_ctx_->set_default_verify_paths(ec);
                else
                    ssl_ctx_->load_verify_file(opts_.tls.ca_file, ec);
                if (ec) ca_error_ = fmt::format("tls ca_file {}: {}", opts_.tls.ca_file, ec.message());
            } else {
                ssl_ctx_->set_verify_mode(net::ssl::verify_none);
            }
        }
    }

    net::any_io_executor ex_;
    client_options opts_;
    log::logger log_{"iggy", {log::kv("server", fmt::format("{}:{}", opts_.host, opts_.port))}};
    std::unique_ptr<net::ssl::context> ssl_ctx_;
    std::string ca_error_;
    std::unique_ptr<beast::tcp_stream> tcp_;
    std::unique_ptr<net::ssl::stream<beast::tcp_stream>> tls_;
    bool connected_ = false;
    bool closed_ = false;
    std::uint64_t generation_ = 0;
    unsigned failures_ = 0;
    std::mt19937_64 rng_{std::random_device{}()};

    // The connection lock: one request in flight.
    bool busy_ = false;
    std::deque<std::shared_ptr<net::steady_timer>> waiters_;

    proto::byte_buffer out_;      // the request being sent
    proto::byte_buffer in_;       // replies other than polls
    proto::byte_buffer poll_in_;  // poll replies: views handed out point here
    proto::poll_reply poll_;
    std::vector<proto::message_fields> send_fields_;

    struct group_ref {
        identifier stream, topic, group;
    };
    std::vector<group_ref> groups_;
    std::shared_ptr<net::steady_timer> ping_timer_;

    // ---- G2 (issue 9)
    wire_protocol gen_ = wire_protocol::g1_0_8;  // the protocol of the current connection
    std::optional<wire_protocol> detected_;       // automatic: what the server spoke
    bool redo_ = false;                           // login asks for a new connection in another protocol
    g2::session_state g2s_{random_client_id()};
    g2::operation last_op_ = g2::operation::reserved;
    std::uint32_t last_code_ = 0;  // the command code of the last G2 request built
    client_stats stats_;

    /// Counts one request of command `code` with its answer (a status, or "error").
    void count_request(std::uint32_t code, std::string answer) {
        stats_.requests[{std::string{proto::command_name(code)}, std::move(answer)}] += 1;
    }
    struct g2_assignment {
        bool synced = false;
        std::uint64_t generation = 0;
        std::vector<std::uint32_t> partitions;
        std::size_t cursor = 0;
    };
    std::map<std::string, g2_assignment> assignments_;  // by "stream/topic/group"
    [[nodiscard]] bool g2() const noexcept {
        return gen_ == wire_protocol::g2_0_9 || gen_ == wire_protocol::g2_0_10;
    }

    /// Builds the G2 frame of a request into `out` (header from the session's numbering).
    template <class Request>
    result<void> build_g2(proto::byte_buffer& out, const Request& req) {
        const auto& g = to_g2(req);
        last_code_ = g2::code_of<std::decay_t<decltype(g)>>();
        auto h = g2s_.next(last_code_);
        last_op_ = h.op;
        return g2::append_request(out, h, g);
    }
    template <class Request>
    result<void> build_any(proto::byte_buffer& out, const Request& req) {
        if (g2()) return build_g2(out, req);
        return proto::append_request(out, req);
    }

    /// Writes `out_`, reads one whole G2 frame into `in` and returns it. With `probe`, the
    /// first 8 bytes are read first: a G1 answer (non-zero bytes 0..3) sets `g1_answer`.
    template <class Stream>
    net::awaitable<result<proto::bytes_view>> g2_roundtrip_on(Stream& s, proto::byte_buffer& in, bool probe,
                                                             bool& g1_answer) {
        auto& lowest = beast::get_lowest_layer(s);
        lowest.expires_after(probe ? opts_.detect_timeout : opts_.request_timeout);
        auto [wec, wn] = co_await net::async_write(s, net::buffer(out_.data(), out_.size()), use_tuple);
        if (wec) co_return io_failure(wec, "write request");
        in.resize(g2::header_size);
        std::size_t have = 0;
        if (probe) {
            auto [pec, pn] = co_await net::async_read(s, net::buffer(in.data(), 8), use_tuple);
            if (pec) {
                g1_answer = true;  // closed or silent: not a G2 server
                co_return io_failure(pec, "read G2 probe reply");
            }
            for (int i = 0; i < 4; ++i) g1_answer = g1_answer || in[static_cast<std::size_t>(i)] != std::byte{0};
            if (g1_answer) {
                disconnect();
                co_return iss::error{errc::protocol_error, "the server answered in G1 framing"};
            }
            have = 8;
        }
        auto [hec, hn] = co_await net::async_read(s, net::buffer(in.data() + have, g2::header_size - have), use_tuple);
        if (hec) co_return io_failure(hec, "read reply header");
        const std::size_t size = proto::load_le<std::uint32_t>(in.data() + g2::off::size);
        if (size < g2::header_size || size > opts_.max_reply_bytes + g2::header_size) {
            disconnect();
            co_return iss::error{errc::protocol_error, fmt::format("G2 reply size {} out of range", size)};
        }
        in.resize(size);
        if (size > g2::header_size) {
            auto [bec, bn] = co_await net::async_read(
                s, net::buffer(in.data() + g2::header_size, size - g2::header_size), use_tuple);
            if (bec) co_return io_failure(bec, "read reply body");
        }
        lowest.expires_never();
        co_return proto::bytes_view{in.data(), size};
    }
    net::awaitable<result<proto::bytes_view>> g2_roundtrip(proto::byte_buffer& in, bool probe, bool& g1_answer) {
        if (tls_) co_return co_await g2_roundtrip_on(*tls_, in, probe, g1_answer);
        co_return co_await g2_roundtrip_on(*tcp_, in, probe, g1_answer);
    }

    /// One G2 request/reply (`out_` built by `build_g2`): evictions end the connection; 57 and 58
    /// resend the IDENTICAL frame (same session and request number: a 57 request's outcome is
    /// unknown, so it is only ever replayed, never re-numbered), 59 is success; result-framed
    /// replies are unwrapped. Returns the payload (a view into `in`).
    net::awaitable<result<proto::bytes_view>> g2_exchange(proto::byte_buffer& in) {
        const auto op = last_op_;
        const auto delay = std::max<std::chrono::milliseconds>(opts_.transient_retry_delay, std::chrono::milliseconds{1});
        const auto attempts = std::max<std::int64_t>(1, opts_.transient_retry_budget / delay);
        for (std::int64_t attempt = 1;; ++attempt) {
            bool g1 = false;
            auto frame = co_await g2_roundtrip(in, false, g1);
            if (!frame) {
                if (frame.error() != net::error::operation_aborted) count_request(last_code_, "error");
                co_return frame.error();
            }
            auto f = g2::decode_server_frame(*frame);
            if (!f) {
                disconnect();
                co_return iss::error{errc::protocol_error, "G2 reply: " + f.error().message()};
            }
            if (f->is_eviction()) {
                disconnect();
                auto e = eviction_error(f->eviction());
                if (classify(e) == outcome::retry) session_lost(e);
                co_return e;
            }
            const auto st = f->reply().status;
            count_request(last_code_, std::to_string(st));
            if (st == 8 || st == 30 || st == 100) {
                // As in G1: the session is over (server going away, stale or unknown client).
                disconnect();
                session_lost(iss::error{proto::server_error(st)});
                co_return iss::error{proto::server_error(st)};
            }
            if (st == 0) {
                if (!g2::reply_is_result_framed(op)) co_return f->body;
                auto p = g2::decode_result_framed(f->body);
                if (!p && p.error().code().category() != proto::server_category()) {
                    disconnect();
                    co_return iss::error{errc::protocol_error, "G2 reply: " + p.error().message()};
                }
                co_return p;
            }
            const auto rule = g2::retry_rule_for(st);
            if (rule == g2::retry_rule::already_applied) co_return proto::bytes_view{};
            if (rule == g2::retry_rule::none || attempt >= attempts) co_return iss::error{proto::server_error(st)};
            log_.debug("G2 {} ({}): resending the same request (attempt {})", proto::server_error_name(st), st,
                       attempt + 1);
            net::steady_timer t{ex_, delay};
            co_await t.async_wait(use_awaitable);
        }
    }

    net::awaitable<result<void>> g2_login(std::uint32_t version);
    net::awaitable<result<void>> open_transport();

    // ---- lock
    class guard {
    public:
        explicit guard(impl* i) : i_{i} {}
        guard(guard&& o) noexcept : i_{std::exchange(o.i_, nullptr)} {}
        guard& operator=(guard&&) = delete;
        ~guard() {
            if (i_) i_->unlock();
        }

    private:
        impl* i_;
    };

    net::awaitable<guard> acquire() {
        while (busy_) {
            auto t = std::make_shared<net::steady_timer>(ex_, net::steady_timer::time_point::max());
            waiters_.push_back(t);
            co_await t->async_wait(use_tuple);  // woken by cancel() from unlock() or close()
            std::erase(waiters_, t);
            auto cs = co_await net::this_coro::cancellation_state;
            if (cs.cancelled() != net::cancellation_type::none)
                throw boost::system::system_error{net::error::operation_aborted};
        }
        busy_ = true;
        co_return guard{this};
    }
    void unlock() {
        busy_ = false;
        if (!waiters_.empty()) {
            auto t = waiters_.front();
            waiters_.pop_front();
            t->cancel();
        }
    }

    // ---- connection
    /// The server ended this session (an eviction, 8, 30 or 100; the connection is closed):
    /// said at warn, since group work held for it is now someone else's.
    void session_lost(const iss::error& why) {
        log_.warn({log::kv("generation", generation_)}, "the server ended the session: {}; the next call reconnects{}",
                  describe(why), groups_.empty() ? "" : " and joins the consumer group(s) again (a new member)");
    }

    void disconnect() {
        connected_ = false;
        boost::system::error_code ec;
        if (tls_) beast::get_lowest_layer(*tls_).socket().close(ec);
        if (tcp_) tcp_->socket().close(ec);
    }

    void shutdown() {
        closed_ = true;
        if (ping_timer_) ping_timer_->cancel();
        disconnect();
        for (auto& w : waiters_) w->cancel();
    }

    /// Maps a failed I/O step: our own close, a caller's cancellation (rethrown: never retried,
    /// docs/architecture.md §8.4.5), a deadline, or a broken connection. The connection is closed in all cases.
    iss::error io_failure(const boost::system::error_code& ec, std::string_view step) {
        disconnect();
        if (closed_) return iss::error{errc::closed, std::string{step}};
        if (ec == beast::error::timeout) return transport(errc::timeout, ec, step);
        if (ec == net::error::operation_aborted) throw boost::system::system_error{ec};
        return transport(errc::connection_lost, ec, step);
    }

    template <class Stream>
    net::awaitable<result<proto::bytes_view>> exchange_on(Stream& s, proto::byte_buffer& in) {
        const std::uint32_t code = out_.size() >= 8 ? proto::load_le<std::uint32_t>(out_.data() + 4) : 0;
        auto r = co_await exchange_on_uncounted(s, in);
        if (r) count_request(code, "0");
        else if (r.error().code().category() == proto::server_category()) count_request(code, std::to_string(r.error().code().value()));
        else if (r.error() != net::error::operation_aborted) count_request(code, "error");
        co_return r;
    }
    template <class Stream>
    net::awaitable<result<proto::bytes_view>> exchange_on_uncounted(Stream& s, proto::byte_buffer& in) {
        auto& lowest = beast::get_lowest_layer(s);
        lowest.expires_after(opts_.request_timeout);
        auto [wec, wn] = co_await net::async_write(s, net::buffer(out_.data(), out_.size()), use_tuple);
        if (wec) co_return io_failure(wec, "write request");
        std::array<std::byte, 8> hdr{};
        auto [hec, hn] = co_await net::async_read(s, net::buffer(hdr), use_tuple);
        if (hec) co_return io_failure(hec, "read reply header");
        const auto status = proto::load_le<std::uint32_t>(hdr.data());
        const auto length = proto::load_le<std::uint32_t>(hdr.data() + 4);
        if (length > opts_.max_reply_bytes) {
            disconnect();
            co_return iss::error{errc::protocol_error,
                                 fmt::format("reply of {} bytes over max_reply_bytes {}", length, opts_.max_reply_bytes)};
        }
        in.resize(length);
        if (length > 0) {
            auto [pec, pn] = co_await net::async_read(s, net::buffer(in.data(), length), use_tuple);
            if (pec) co_return io_failure(pec, "read reply payload");
        }
        lowest.expires_never();
        if (status != 0) {
            // 8: the server is going away; 30 / 100: it closes the socket after this reply.
            if (status == 8 || status == 30 || status == 100) {
                disconnect();
                session_lost(iss::error{proto::server_error(status)});
            }
            co_return iss::error{proto::server_error(status)};
        }
        co_return proto::bytes_view{in.data(), length};
    }

    /// Sends `out_` and reads the reply into `in`. The lock is held by the caller.
    net::awaitable<result<proto::bytes_view>> exchange(proto::byte_buffer& in) {
        if (tls_) co_return co_await exchange_on(*tls_, in);
        co_return co_await exchange_on(*tcp_, in);
    }

    template <class Request>
    net::awaitable<result<proto::bytes_view>> exchange_request(const Request& req, proto::byte_buffer& in) {
        out_.clear();
        if (auto r = build_any(out_, req); !r) co_return iss::error{errc::invalid_request, r.error().message()};
        if (g2()) co_return co_await g2_exchange(in);
        co_return co_await exchange(in);
    }

    net::awaitable<result<void>> connect_once_impl();
    net::awaitable<result<void>> login();
    net::awaitable<result<void>> rejoin();
    net::awaitable<result<void>> reconnect();
    void start_pings();
    static net::awaitable<void> ping_loop(std::shared_ptr<impl> self, std::uint64_t gen,
                                          std::shared_ptr<net::steady_timer> timer);

    /// Takes the lock, connects if needed, sends the request built by `build` into `out_`, and
    /// reads the reply into `in`.
    template <class Build>
    net::awaitable<result<proto::bytes_view>> call(Build build, proto::byte_buffer& in) {
        auto g = co_await acquire();
        if (closed_) co_return iss::error{errc::closed};
        if (!connected_) {
            if (auto r = co_await reconnect(); !r) co_return r.error();
        }
        out_.clear();
        if (auto r = build(out_); !r) co_return iss::error{errc::invalid_request, r.error().message()};
        if (g2()) co_return co_await g2_exchange(in);
        co_return co_await exchange(in);
    }

    template <class Request>
    net::awaitable<result<proto::bytes_view>> call_request(const Request& req) {
        co_return co_await call([&](proto::byte_buffer& out) { return build_any(out, req); }, in_);
    }
    template <class Request>
    net::awaitable<result<proto::bytes_view>> call_request_into(const Request& req, proto::byte_buffer& in) {
        co_return co_await call([&](proto::byte_buffer& out) { return build_any(out, req); }, in);
    }
    /// Connects if needed (so that `g2()` tells the protocol of the connection).
    net::awaitable<result<void>> ensure_connected() {
        auto g = co_await acquire();
        if (closed_) co_return iss::error{errc::closed};
        if (!connected_) co_return co_await reconnect();
        co_return result<void>{};
    }
    net::awaitable<result<poll_batch>> g2_poll(consumer c, identifier stream, identifier topic,
                                               std::optional<std::uint32_t> partition, polling_strategy strategy,
                                               std::uint32_t count, bool auto_commit);
    net::awaitable<result<bool>> g2_sync(const identifier& stream, const identifier& topic, const identifier& group,
                                         g2_assignment& a);
    iss::error not_a_member(const identifier& stream, const identifier& topic, const identifier& group,
                            g2_assignment& a);
};

// ---------------------------------------------------------------------------------------------

net::awaitable<result<void>> client::impl::connect_once_impl() {
    // automatic: a login may ask for a new connection in another protocol (G1 answer, or an
    // Eviction 14 naming another version); at most two such passes.
    for (int pass = 0;; ++pass) {
        redo_ = false;
        if (auto t = co_await open_transport(); !t) co_return t.error();
        auto r = co_await login();
        if (r) break;
        disconnect();
        if (redo_ && pass < 2) continue;
        co_return r.error();
    }
    connected_ = true;
    ++generation_;
    if (generation_ > 1) ++stats_.reconnects;
    if (auto r = co_await rejoin(); !r) {
        disconnect();
        co_return r.error();
    }
    log_.info({log::kv("generation", generation_), log::kv("tls", opts_.tls.enabled),
               log::kv("protocol", wire_protocol_name(gen_))},
              "connected and logged in");
    start_pings();
    co_return result<void>{};
}

net::awaitable<result<void>> client::impl::open_transport() {
    tls_.reset();
    tcp_.reset();
    if (!ca_error_.empty()) co_return iss::error{errc::connection_failed, ca_error_};

    tcp::resolver::results_type endpoints;
    {
        using namespace net::experimental::awaitable_operators;
        tcp::resolver resolver{ex_};
        net::steady_timer deadline{ex_, opts_.connect_timeout};
        auto which = co_await (resolver.async_resolve(opts_.host, std::to_string(opts_.port), use_tuple) ||
                               deadline.async_wait(use_tuple));
        if (which.index() == 1)
            co_return iss::error{errc::connection_failed, fmt::format("resolving {}: timed out", opts_.host)};
        auto [ec, results] = std::get<0>(which);
        if (ec) co_return transport(errc::connection_failed, ec, fmt::format("resolving {}", opts_.host));
        endpoints = std::move(results);
    }

    tcp_ = std::make_unique<beast::tcp_stream>(ex_);
    tcp_->expires_after(opts_.connect_timeout);
    auto [cec, ep] = co_await tcp_->async_connect(endpoints, use_tuple);
    if (cec) {
        disconnect();
        co_return transport(errc::connection_failed, cec, fmt::format("connecting to {}:{}", opts_.host, opts_.port));
    }
    boost::system::error_code ignored;
    tcp_->socket().set_option(tcp::no_delay{true}, ignored);

    if (ssl_ctx_) {
        tls_ = std::make_unique<net::ssl::stream<beast::tcp_stream>>(std::move(*tcp_), *ssl_ctx_);
        tcp_.reset();
        const std::string name = opts_.tls.server_name.empty() ? opts_.host : opts_.tls.server_name;
        if (!SSL_set_tlsext_host_name(tls_->native_handle(), name.c_str()))
            co_return iss::error{errc::connection_failed, "TLS: cannot set SNI " + name};
        if (opts_.tls.verify) tls_->set_verify_callback(net::ssl::host_name_verification(name));
        beast::get_lowest_layer(*tls_).expires_after(opts_.connect_timeout);
        auto [hec] = co_await tls_->async_handshake(net::ssl::stream_base::client, use_tuple);
        if (hec) {
            disconnect();
            co_return transport(errc::connection_failed, hec, "TLS handshake");
        }
    }
    co_return result<void>{};
}

net::awaitable<result<void>> client::impl::g2_login(std::uint32_t version) {
    g2s_.reset();
    assignments_.clear();
    out_.clear();
    const bool probe = opts_.protocol == wire_protocol::automatic && !detected_;
    const g2::client_version_info info{version, opts_.sdk_name, opts_.sdk_version};
    g2::bind_secret secret{};
    for (auto& b : secret) b = static_cast<std::byte>(rng_());  // PROVISIONAL (0.12.0 only)
    result<void> built;
    if (!opts_.token.empty()) {
        g2::register_pat_request q{info, secret, opts_.token.reveal(), {}};
        built = build_g2(out_, q);
    } else {
        g2::register_request q{info, secret, opts_.username, opts_.password.reveal(), {}};
        built = build_g2(out_, q);
    }
    if (!built) co_return iss::error{errc::invalid_request, built.error().message()};
    bool g1_answer = false;
    auto frame = co_await g2_roundtrip(in_, probe, g1_answer);
    if (!frame) {
        if (probe && (g1_answer || classify(frame.error()) == outcome::retry)) {
            log_.info("iggy.protocol auto: no G2 answer ({}); speaking 0.8 (G1)", describe(frame.error()));
            detected_ = wire_protocol::g1_0_8;
            redo_ = true;
        }
        co_return frame.error();
    }
    auto f = g2::decode_server_frame(*frame);
    if (!f) co_return iss::error{errc::protocol_error, "G2 login reply: " + f.error().message()};
    if (f->is_eviction()) {
        const auto& e = f->eviction();
        if (e.reason == g2::eviction_reason::incompatible_protocol) {
            const auto minor = (e.server_protocol_version >> 10) & 0x3ff;
            log_.warn("the server accepts binary protocol {} .. {} (we sent {})",
                      g2::version_text(e.server_protocol_version_min), g2::version_text(e.server_protocol_version),
                      g2::version_text(version));
            if (opts_.protocol == wire_protocol::automatic && (e.server_protocol_version >> 20) == 0) {
                const auto next = minor == 12 ? wire_protocol::g2_0_10 : minor == 11 ? wire_protocol::g2_0_9
                                                                                     : wire_protocol::automatic;
                if (next != wire_protocol::automatic && next != gen_) {
                    log_.info("iggy.protocol auto: moving to {}", wire_protocol_name(next));
                    detected_ = next;
                    redo_ = true;
                }
            }
        }
        co_return eviction_error(e);
    }
    if (f->reply().status != 0) co_return iss::error{proto::server_error(f->reply().status)};
    auto r = g2::decode_register_reply(f->body);
    if (!r) {
        if (r.error().code().category() == proto::server_category()) co_return r.error();
        co_return iss::error{errc::protocol_error, "G2 login reply: " + r.error().message()};
    }
    g2s_.bind(r->session);
    if (probe) {
        detected_ = gen_;
        log_.info("iggy.protocol auto: the server speaks {} (server {}, protocol {})", wire_protocol_name(gen_),
                  r->server_version, g2::version_text(r->server_protocol_version));
    }
    co_return result<void>{};
}

net::awaitable<result<void>> client::impl::login() {
    // Which protocol this connection speaks: configured, detected, or probed (G2 first).
    gen_ = opts_.protocol != wire_protocol::automatic ? opts_.protocol : detected_.value_or(wire_protocol::g2_0_9);
    if (g2()) co_return co_await g2_login(gen_ == wire_protocol::g2_0_10 ? g2::protocol_0_12_0 : g2::protocol_0_11_0);
    result<proto::bytes_view> r = proto::bytes_view{};
    if (!opts_.token.empty()) {
        const proto::login_with_token_request req{opts_.token.reveal()};
        r = co_await exchange_request(req, in_);
    } else {
        const proto::login_user_request req{opts_.username, opts_.password.reveal(), opts_.client_version, {}};
        r = co_await exchange_request(req, in_);
    }
    if (!r) co_return r.error();
    if (auto id = proto::decode_user_id_reply(*r); !id)
        co_return iss::error{errc::protocol_error, "login reply: " + id.error().message()};
    co_return result<void>{};
}

net::awaitable<result<void>> client::impl::rejoin() {
    for (std::size_t i = 0; i < groups_.size();) {
        auto& g = groups_[i];
        const proto::join_consumer_group_request req{g.stream, g.topic, g.group};
        auto r = co_await exchange_request(req, in_);
        if (!r) {
            if (classify(r.error()) == outcome::not_found) {
                log_.warn({log::kv("stream", proto::to_string(g.stream)), log::kv("topic", proto::to_string(g.topic)),
                           log::kv("group", proto::to_string(g.group))},
                          "re-join after reconnect: {}; the group is forgotten", describe(r.error()));
                groups_.erase(groups_.begin() + static_cast<std::ptrdiff_t>(i));
                continue;
            }
            co_return r.error();
        }
        ++i;
    }
    co_return result<void>{};
}

net::awaitable<result<void>> client::impl::reconnect() {
    for (unsigned attempt = 0;; ++attempt) {
        if (failures_ > 0) {
            const auto d = full_jitter_delay(opts_.reconnect_backoff, failures_ - 1, rng_);
            net::steady_timer t{ex_, d};
            co_await t.async_wait(use_awaitable);  // a caller's cancellation propagates
            if (closed_) co_return iss::error{errc::closed};
        }
        auto r = co_await connect_once_impl();
        if (r) {
            failures_ = 0;
            co_return r;
        }
        if (closed_) co_return iss::error{errc::closed};
        // Authentication and other refusals are final: returned once, never retried.
        if (classify(r.error()) != outcome::retry) {
            log_.error("connect: {} (not retried; check iggy credentials)", describe(r.error()));
            co_return r.error();
        }
        ++failures_;
        if (opts_.reconnect_attempts != 0 && attempt + 1 >= opts_.reconnect_attempts) {
            log_.warn("connect: {} (attempt {}/{}, giving up)", describe(r.error()), attempt + 1,
                      opts_.reconnect_attempts);
            co_return r.error();
        }
        log_.warn("connect: {} (attempt {}, retrying)", describe(r.error()), attempt + 1);
    }
}

void client::impl::start_pings() {
    if (opts_.ping_interval.count() <= 0) return;
    if (ping_timer_) ping_timer_->cancel();
    ping_timer_ = std::make_shared<net::steady_timer>(ex_);
    net::co_spawn(ex_, ping_loop(shared_from_this(), generation_, ping_timer_), [log = log_](std::exception_ptr e) {
        // The loop ends on close, reconnect or a failed ping (logged there); anything thrown
        // here is a cancellation or a bug: log it, the next call reconnects.
        if (!e) return;
        try {
            std::rethrow_exception(e);
        } catch (const std::exception& x) {
            log.debug("ping task ended: {}", x.what());
        }
    });
}

net::awaitable<void> client::impl::ping_loop(std::shared_ptr<impl> self, std::uint64_t gen,
                                             std::shared_ptr<net::steady_timer> timer) {
    for (;;) {
        timer->expires_after(self->opts_.ping_interval);
        co_await timer->async_wait(use_tuple);
        if (self->closed_ || self->generation_ != gen || !self->connected_) co_return;
        auto g = co_await self->acquire();
        if (self->closed_ || self->generation_ != gen || !self->connected_) co_return;
        const proto::ping_request req{};
        auto r = co_await self->exchange_request(req, self->in_);
        if (!r) {
            self->log_.warn("ping failed: {}; the next call reconnects", describe(r.error()));
            co_return;
        }
    }
}

// ---------------------------------------------------------------------------------------------

client::client(net::any_io_executor ex, client_options opts)
    : impl_{std::make_shared<impl>(std::move(ex), std::move(opts))} {}

client::~client() { impl_->shutdown(); }

std::uint64_t client::generation() const noexcept { return impl_->generation_; }
const client_stats& client::stats() const noexcept { return impl_->stats_; }
bool client::connected() const noexcept { return impl_->connected_; }
const client_options& client::options() const noexcept { return impl_->opts_; }
wire_protocol client::protocol_in_use() const noexcept { return impl_->gen_; }

std::string_view wire_protocol_name(wire_protocol p) noexcept {
    switch (p) {
        case wire_protocol::g1_0_8: return "0.8 (G1)";
        case wire_protocol::g2_0_9: return "0.9 (G2, protocol 0.11.0)";
        case wire_protocol::g2_0_10: return "0.10 (G2, protocol 0.12.0, provisional)";
        case wire_protocol::automatic: return "auto";
    }
    return "?";
}

net::awaitable<result<void>> client::connect() {
    auto g = co_await impl_->acquire();
    if (impl_->closed_) co_return iss::error{errc::closed};
    if (impl_->connected_) co_return result<void>{};
    co_return co_await impl_->reconnect();
}

net::awaitable<void> client::close() {
    impl_->shutdown();
    co_return;
}

namespace {
iss::error bad_reply(const iss::error& e) { return iss::error{errc::protocol_error, e.message()}; }
}  // namespace

// GCC 12 mis-destroys temporaries that live across a co_await (double free seen here), so
// every request object is a named local before it is awaited on.
#define ISS_IGGY_CALL(...)                                  \
    auto request_ = __VA_ARGS__;                            \
    auto reply = co_await impl_->call_request(request_);    \
    if (!reply) co_return reply.error();

net::awaitable<result<void>> client::ping() {
    ISS_IGGY_CALL(proto::ping_request{});
    co_return result<void>{};
}

net::awaitable<result<proto::client_details>> client::get_me() {
    if (auto c = co_await impl_->ensure_connected(); !c) co_return c.error();
    if (impl_->g2()) co_return iss::error{errc::invalid_request, "GetMe is not supported over G2 by this client"};
    ISS_IGGY_CALL(proto::get_me_request{});
    auto d = proto::decode_get_me_reply(*reply);
    if (!d) co_return bad_reply(d.error());
    co_return std::move(*d);
}

net::awaitable<result<std::optional<proto::stream_details>>> client::get_stream(identifier stream) {
    ISS_IGGY_CALL(proto::get_stream_request{std::move(stream)});
    auto d = impl_->g2() ? proto::g2::decode_stream_reply(*reply) : proto::decode_get_stream_reply(*reply);
    if (!d) co_return bad_reply(d.error());
    co_return std::move(*d);
}

net::awaitable<result<proto::stream_details>> client::create_stream(std::string name) {
    ISS_IGGY_CALL(proto::create_stream_request{std::move(name)});
    if (impl_->g2()) {
        auto g = proto::g2::decode_stream_reply(*reply);
        if (!g) co_return bad_reply(g.error());
        if (!*g) co_return iss::error{errc::protocol_error, "CreateStream: empty reply"};
        co_return std::move(**g);
    }
    auto d = proto::decode_create_stream_reply(*reply);
    if (!d) co_return bad_reply(d.error());
    co_return std::move(*d);
}

net::awaitable<result<void>> client::delete_stream(identifier stream) {
    ISS_IGGY_CALL(proto::delete_stream_request{std::move(stream)});
    co_return result<void>{};
}

net::awaitable<result<std::optional<proto::topic_details>>> client::get_topic(identifier stream, identifier topic) {
    ISS_IGGY_CALL((proto::get_topic_request{std::move(stream), std::move(topic)}));
    auto d = impl_->g2() ? proto::g2::decode_topic_reply(*reply) : proto::decode_get_topic_reply(*reply);
    if (!d) co_return bad_reply(d.error());
    co_return std::move(*d);
}

net::awaitable<result<proto::topic_details>> client::create_topic(identifier stream, std::string name,
                                                                  std::uint32_t partitions) {
    proto::create_topic_request req;
    req.stream = std::move(stream);
    req.partitions_count = partitions;
    req.name = std::move(name);
    ISS_IGGY_CALL(req);
    if (impl_->g2()) {
        auto g = proto::g2::decode_topic_reply(*reply);
        if (!g) co_return bad_reply(g.error());
        if (!*g) co_return iss::error{errc::protocol_error, "CreateTopic: empty reply"};
        co_return std::move(**g);
    }
    auto d = proto::decode_create_topic_reply(*reply);
    if (!d) co_return bad_reply(d.error());
    co_return std::move(*d);
}

net::awaitable<result<void>> client::delete_topic(identifier stream, identifier topic) {
    ISS_IGGY_CALL((proto::delete_topic_request{std::move(stream), std::move(topic)}));
    co_return result<void>{};
}

net::awaitable<result<void>> client::create_partitions(identifier stream, identifier topic, std::uint32_t count) {
    ISS_IGGY_CALL((proto::create_partitions_request{std::move(stream), std::move(topic), count}));
    co_return result<void>{};
}

net::awaitable<result<std::optional<proto::consumer_group_details>>> client::get_consumer_group(identifier stream,
                                                                                                identifier topic,
                                                                                                identifier group) {
    ISS_IGGY_CALL((proto::get_consumer_group_request{std::move(stream), std::move(topic), std::move(group)}));
    auto d = proto::decode_get_consumer_group_reply(*reply);
    if (!d) co_return bad_reply(d.error());
    co_return std::move(*d);
}

net::awaitable<result<proto::consumer_group_info>> client::create_consumer_group(identifier stream, identifier topic,
                                                                                 std::string name) {
    ISS_IGGY_CALL((proto::create_consumer_group_request{stream, topic, name}));
    if (impl_->g2()) {
        // G2 answers CreateConsumerGroup with an empty result: read the group back by name.
        auto g = co_await get_consumer_group(std::move(stream), std::move(topic), identifier::named(name));
        if (!g) co_return g.error();
        if (!*g) co_return iss::error{errc::protocol_error, "CreateConsumerGroup: the group is not there after creation"};
        co_return (*g)->group;
    }
    auto d = proto::decode_create_consumer_group_reply(*reply);
    if (!d) co_return bad_reply(d.error());
    co_return d->group;
}

net::awaitable<result<void>> client::join_consumer_group(identifier stream, identifier topic, identifier group) {
    ISS_IGGY_CALL((proto::join_consumer_group_request{stream, topic, group}));
    auto& gs = impl_->groups_;
    const bool known = std::any_of(gs.begin(), gs.end(), [&](const impl::group_ref& g) {
        return g.stream == stream && g.topic == topic && g.group == group;
    });
    if (!known) gs.push_back({std::move(stream), std::move(topic), std::move(group)});
    impl_->assignments_.clear();  // G2: sync again before the next group poll
    co_return result<void>{};
}

net::awaitable<result<void>> client::leave_consumer_group(identifier stream, identifier topic, identifier group) {
    std::erase_if(impl_->groups_, [&](const impl::group_ref& g) {
        return g.stream == stream && g.topic == topic && g.group == group;
    });
    ISS_IGGY_CALL((proto::leave_consumer_group_request{std::move(stream), std::move(topic), std::move(group)}));
    impl_->assignments_.clear();
    co_return result<void>{};
}

net::awaitable<result<void>> client::send_messages(identifier stream, identifier topic, partitioning p,
                                                   std::span<const outgoing_message> messages) {
    auto& fields = impl_->send_fields_;
    fields.clear();
    for (const auto& m : messages) {
        proto::message_fields f;
        f.id = m.id;
        f.origin_timestamp = m.origin_timestamp;
        f.payload = m.payload;
        f.user_headers = m.user_headers;
        fields.push_back(f);
    }
    if (auto c = co_await impl_->ensure_connected(); !c) co_return c.error();
    if (impl_->g2()) {
        const proto::g2::send_messages_request req{stream, topic, p, fields};
        auto reply = co_await impl_->call_request_into(req, impl_->in_);
        if (!reply) co_return reply.error();
        // A status-0 reply with an empty body is a failure (docs/protocol.md §8.6).
        if (auto d = proto::g2::decode_send_reply(*reply); !d) co_return bad_reply(d.error());
        co_return result<void>{};
    }
    auto reply = co_await impl_->call(
        [&](proto::byte_buffer& out) { return proto::append_send_messages(out, stream, topic, p, fields); },
        impl_->in_);
    if (!reply) co_return reply.error();
    co_return result<void>{};
}

net::awaitable<result<poll_batch>> client::poll_messages(consumer c, identifier stream, identifier topic,
                                                         std::optional<std::uint32_t> partition,
                                                         polling_strategy strategy, std::uint32_t count,
                                                         bool auto_commit) {
    if (auto cc = co_await impl_->ensure_connected(); !cc) co_return cc.error();
    if (impl_->g2())
        co_return co_await impl_->g2_poll(std::move(c), std::move(stream), std::move(topic), partition, strategy, count,
                                          auto_commit);
    proto::poll_messages_request req{std::move(c), std::move(stream), std::move(topic), partition, strategy,
                                     count, auto_commit};
    auto reply = co_await impl_->call([&](proto::byte_buffer& out) { return proto::append_request(out, req); },
                                      impl_->poll_in_);
    if (!reply) co_return reply.error();
    proto::poll_reply_options o;
    o.max_reply = impl_->opts_.max_reply_bytes;
    if (auto d = proto::decode_poll_reply_into(*reply, impl_->poll_, o); !d) co_return bad_reply(d.error());
    co_return poll_batch{impl_->poll_.partition_id, impl_->poll_.current_offset,
                         std::span<const proto::message_view>{impl_->poll_.messages}};
}

net::awaitable<result<void>> client::store_offset(consumer c, identifier stream, identifier topic,
                                                  std::optional<std::uint32_t> partition, std::uint64_t offset) {
    ISS_IGGY_CALL((proto::store_consumer_offset_request{std::move(c), std::move(stream), std::move(topic), partition,
                                                        offset}));
    co_return result<void>{};
}

net::awaitable<result<std::optional<proto::consumer_offset_info>>> client::get_offset(
    consumer c, identifier stream, identifier topic, std::optional<std::uint32_t> partition) {
    ISS_IGGY_CALL(
        (proto::get_consumer_offset_request{std::move(c), std::move(stream), std::move(topic), partition}));
    auto d = proto::decode_get_consumer_offset_reply(*reply);
    if (!d) co_return bad_reply(d.error());
    co_return std::move(*d);
}

net::awaitable<result<void>> client::delete_offset(consumer c, identifier stream, identifier topic,
                                                   std::optional<std::uint32_t> partition) {
    ISS_IGGY_CALL(
        (proto::delete_consumer_offset_request{std::move(c), std::move(stream), std::move(topic), partition}));
    co_return result<void>{};
}

#undef ISS_IGGY_CALL

// ---- G2 group flow (docs/protocol.md §8.7) --------------------------------------------------

net::awaitable<result<bool>> client::impl::g2_sync(const identifier& stream, const identifier& topic,
                                                   const identifier& group, g2_assignment& a) {
    const proto::g2::sync_consumer_group_request req{stream, topic, group};
    auto reply = co_await call_request(req);
    if (!reply) co_return reply.error();
    auto d = proto::g2::decode_sync_reply(*reply);
    if (!d) co_return iss::error{errc::protocol_error, d.error().message()};
    a.synced = true;
    a.cursor = 0;
    if (!*d) {
        a.partitions.clear();
        co_return false;  // not a member
    }
    if ((*d)->generation != a.generation || (*d)->partitions != a.partitions)
        log_.info({log::kv("stream", proto::to_string(stream)), log::kv("topic", proto::to_string(topic)),
                   log::kv("group", proto::to_string(group)), log::kv("generation", (*d)->generation),
                   log::kv("partitions", (*d)->partitions.size())},
                  "group assignment (SyncConsumerGroup)");
    a.generation = (*d)->generation;
    a.partitions = std::move((*d)->partitions);
    co_return true;
}

iss::error client::impl::not_a_member(const identifier& stream, const identifier& topic, const identifier& group,
                                      g2_assignment& a) {
    // G1 answers a non-member's group poll with 5006; G2's SyncConsumerGroup says it with an
    // empty body. Same answer on both, so that the caller joins again instead of waiting as a
    // member without partitions.
    a.synced = false;
    const bool joined = std::any_of(groups_.begin(), groups_.end(), [&](const group_ref& g) {
        return g.stream == stream && g.topic == topic && g.group == group;
    });
    if (joined)
        log_.warn({log::kv("stream", proto::to_string(stream)), log::kv("topic", proto::to_string(topic)),
                   log::kv("group", proto::to_string(group))},
                  "SyncConsumerGroup: the server no longer counts this client as a member of the group; join again");
    return iss::error{proto::server_error(5006),
                      fmt::format("SyncConsumerGroup: not a member of consumer group {}", proto::to_string(group))};
}

net::awaitable<result<poll_batch>> client::impl::g2_poll(consumer c, identifier stream, identifier topic,
                                                         std::optional<std::uint32_t> partition,
                                                         polling_strategy strategy, std::uint32_t count,
                                                         bool auto_commit) {
    const bool group = c.kind == proto::consumer_kind::group;
    const std::string key = proto::to_string(stream) + "/" + proto::to_string(topic) + "/" + proto::to_string(c.id);
    proto::g2::poll_options o;
    o.max_reply = opts_.max_reply_bytes;
    o.producer_fields = gen_ == wire_protocol::g2_0_10;  // PROVISIONAL: 0.10 batch flags/producer bytes
    for (int attempt = 0; attempt < 2; ++attempt) {
        std::optional<std::uint32_t> pid = partition;
        if (group && !pid) {
            // G2: the client chooses: sync for the assignment, round robin over it.
            auto& a = assignments_[key];
            // Sync when unknown and again after each full round over the assignment, so that
            // partitions gained in a rebalance are picked up (the server does not push them).
            if (!a.synced || a.cursor >= a.partitions.size()) {
                auto s = co_await g2_sync(stream, topic, c.id, a);
                if (!s) co_return s.error();
                if (!*s) co_return not_a_member(stream, topic, c.id, a);
            }
            if (a.partitions.empty()) co_return poll_batch{0, 0, {}};  // member with no partitions: park
            pid = a.partitions[a.cursor++];
        }
        const proto::poll_messages_request req{c, stream, topic, pid, strategy, count, auto_commit};
        auto reply = co_await call_request_into(req, poll_in_);
        if (!reply) {
            // 5006: not a member (any more): the assignment we hold is void; sync at the next poll.
            if (group && server_code(reply.error()) == 5006u) assignments_[key].synced = false;
            co_return reply.error();
        }
        if (auto d = proto::g2::decode_batch_poll_reply(*reply, poll_, o); !d) co_return bad_reply(d.error());
        if (group && poll_.partition_id == 0xffffffffu) {
            // Not ours (any more): sync again and retry once (§8.7).
            assignments_[key].synced = false;
            if (partition) co_return poll_batch{*partition, 0, {}};
            continue;
        }
        co_return poll_batch{poll_.partition_id, poll_.current_offset,
                             std::span<const proto::message_view>{poll_.messages}};
    }
    co_return poll_batch{0, 0, {}};
}

}  // namespace iss::iggy
