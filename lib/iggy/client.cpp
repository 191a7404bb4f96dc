#include "iggy/client.hpp"

#include "common/log.hpp"
#include "proto/commands.hpp"
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
    /// style.md §4.5), a deadline, or a broken connection. The connection is closed in all cases.
    iss::error io_failure(const boost::system::error_code& ec, std::string_view step) {
        disconnect();
        if (closed_) return iss::error{errc::closed, std::string{step}};
        if (ec == beast::error::timeout) return transport(errc::timeout, ec, step);
        if (ec == net::error::operation_aborted) throw boost::system::system_error{ec};
        return transport(errc::connection_lost, ec, step);
    }

    template <class Stream>
    net::awaitable<result<proto::bytes_view>> exchange_on(Stream& s, proto::byte_buffer& in) {
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
            if (status == 8 || status == 30 || status == 100) disconnect();
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
        if (auto r = proto::append_request(out_, req); !r)
            co_return iss::error{errc::invalid_request, r.error().message()};
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
        co_return co_await exchange(in);
    }

    template <class Request>
    net::awaitable<result<proto::bytes_view>> call_request(const Request& req) {
        co_return co_await call([&](proto::byte_buffer& out) { return proto::append_request(out, req); }, in_);
    }
};

// ---------------------------------------------------------------------------------------------

net::awaitable<result<void>> client::impl::connect_once_impl() {
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
    if (auto r = co_await login(); !r) {
        disconnect();
        co_return r.error();
    }
    connected_ = true;
    ++generation_;
    if (auto r = co_await rejoin(); !r) {
        disconnect();
        co_return r.error();
    }
    log_.info({log::kv("generation", generation_), log::kv("tls", opts_.tls.enabled)}, "connected and logged in");
    start_pings();
    co_return result<void>{};
}

net::awaitable<result<void>> client::impl::login() {
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
bool client::connected() const noexcept { return impl_->connected_; }
const client_options& client::options() const noexcept { return impl_->opts_; }

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
    ISS_IGGY_CALL(proto::get_me_request{});
    auto d = proto::decode_get_me_reply(*reply);
    if (!d) co_return bad_reply(d.error());
    co_return std::move(*d);
}

net::awaitable<result<std::optional<proto::stream_details>>> client::get_stream(identifier stream) {
    ISS_IGGY_CALL(proto::get_stream_request{std::move(stream)});
    auto d = proto::decode_get_stream_reply(*reply);
    if (!d) co_return bad_reply(d.error());
    co_return std::move(*d);
}

net::awaitable<result<proto::stream_details>> client::create_stream(std::string name) {
    ISS_IGGY_CALL(proto::create_stream_request{std::move(name)});
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
    auto d = proto::decode_get_topic_reply(*reply);
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
    ISS_IGGY_CALL((proto::create_consumer_group_request{std::move(stream), std::move(topic), std::move(name)}));
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
    co_return result<void>{};
}

net::awaitable<result<void>> client::leave_consumer_group(identifier stream, identifier topic, identifier group) {
    std::erase_if(impl_->groups_, [&](const impl::group_ref& g) {
        return g.stream == stream && g.topic == topic && g.group == group;
    });
    ISS_IGGY_CALL((proto::leave_consumer_group_request{std::move(stream), std::move(topic), std::move(group)}));
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

}  // namespace iss::iggy
