// SPDX-License-Identifier: Apache-2.0
#include "iggy/g1_transport.hpp"

#include "iggy/connection.hpp"
#include "iggy/session.hpp"
#include "proto/send.hpp"

#include <boost/asio/this_coro.hpp>

#include <fmt/format.h>

namespace iss::iggy {

namespace {
proto::frame_limits reply_limits(const client_options& o) {
    proto::frame_limits l;
    l.max_reply_payload = o.max_reply_bytes;
    return l;
}
}  // namespace

g1_transport::g1_transport(transport_context ctx)
    : ctx_{std::move(ctx)},
      in_{proto::frame_direction::reply, reply_limits(ctx_.opts)},
      poll_in_{proto::frame_direction::reply, reply_limits(ctx_.opts)} {}

result<void> g1_transport::encode(proto::byte_buffer& out, const request& r) {
    return std::visit(
        [&](const auto& q) -> result<void> {
            using Q = std::decay_t<decltype(q)>;
            if constexpr (std::is_same_v<Q, send_request>) {
                return proto::append_send_messages(out, q.stream, q.topic, q.part, q.messages);
            } else if constexpr (std::is_same_v<Q, proto::g2::sync_consumer_group_request>) {
                return iss::error{errc::invalid_request, "SyncConsumerGroup does not exist in G1"};
            } else {
                return proto::append_request(out, q);
            }
        },
        r);
}

net::awaitable<result<proto::bytes_view>> g1_transport::exchange(connection& c, proto::bytes_view frame,
                                                                 reply_slot slot) {
    const std::uint32_t code = frame.size() >= 8 ? proto::load_le<std::uint32_t>(frame.data() + 4) : 0;
    auto r = co_await exchange_uncounted(c, frame, slot);
    if (r) ctx_.count(code, "0");
    else if (r.error().code().category() == proto::server_category())
        ctx_.count(code, std::to_string(r.error().code().value()));
    else ctx_.count(code, "error");  // (a cancellation threw: never counted)
    co_return r;
}

net::awaitable<result<proto::bytes_view>> g1_transport::exchange_uncounted(connection& c, proto::bytes_view frame,
                                                                           reply_slot slot) {
    auto& in = slot == reply_slot::poll ? poll_in_ : in_;
    c.arm(ctx_.opts.request_timeout);
    if (auto w = co_await c.write(frame, "write request"); !w) co_return w.error();
    proto::reply_frame reply;
    for (;;) {
        auto f = in.next_reply();
        if (!f) {
            c.close();
            co_return iss::error{errc::protocol_error, fmt::format("reply over max_reply_bytes {} ({})",
                                                                   ctx_.opts.max_reply_bytes, f.error().message())};
        }
        if (*f) {
            reply = **f;
            break;
        }
        const std::size_t n = in.bytes_wanted();
        const bool header = in.buffered() < proto::reply_header_size;
        if (auto rd = co_await c.read(in.prepare(n), header ? "read reply header" : "read reply payload"); !rd)
            co_return rd.error();
        in.commit(n);
    }
    c.disarm();
    // 8: the server is going away; 30 / 100: it closes the socket after this reply.
    if (ends_session(reply.status)) {
        c.close();
        ctx_.session_lost(iss::error{proto::server_error(reply.status)});
    }
    co_return proto::ok_payload(reply);
}

net::awaitable<login_outcome> g1_transport::login(connection& c, proto::login_plan) {
    in_.reset();
    poll_in_.reset();
    out_.clear();
    const auto& o = ctx_.opts;
    result<void> built;
    if (!o.token.empty()) {
        const proto::login_with_token_request req{o.token.reveal()};
        built = proto::append_request(out_, req);
    } else {
        const proto::login_user_request req{o.username, o.password.reveal(), o.client_version, {}};
        built = proto::append_request(out_, req);
    }
    if (!built) co_return login_outcome{iss::error{errc::invalid_request, built.error().message()}, {}, {}};
    auto r = co_await exchange(c, out_, reply_slot::general);
    if (!r) co_return login_outcome{r.error(), {proto::login_result::kind::refused}, {}};
    if (auto id = proto::decode_user_id_reply(*r); !id)
        co_return login_outcome{iss::error{errc::protocol_error, "login reply: " + id.error().message()},
                                {proto::login_result::kind::refused},
                                {}};
    co_return login_outcome{result<void>{}, {proto::login_result::kind::logged_in}, {}};
}

result<std::optional<proto::stream_details>> g1_transport::stream_reply(proto::bytes_view reply) {
    return proto::decode_get_stream_reply(reply);
}
result<proto::stream_details> g1_transport::created_stream(proto::bytes_view reply) {
    return proto::decode_create_stream_reply(reply);
}
result<std::optional<proto::topic_details>> g1_transport::topic_reply(proto::bytes_view reply) {
    return proto::decode_get_topic_reply(reply);
}
result<proto::topic_details> g1_transport::created_topic(proto::bytes_view reply) {
    return proto::decode_create_topic_reply(reply);
}
result<std::optional<proto::consumer_group_info>> g1_transport::created_group(proto::bytes_view reply) {
    auto d = proto::decode_create_consumer_group_reply(reply);
    if (!d) return d.error();
    return std::optional{d->group};
}
result<void> g1_transport::sent(proto::bytes_view) { return {}; }

net::awaitable<result<poll_batch>> g1_transport::poll(session& s, poll_args a) {
    const request req = proto::poll_messages_request{
        std::move(a.who), std::move(a.stream), std::move(a.topic), a.partition, a.strategy, a.count, a.auto_commit};
    auto reply = co_await s.call(req, reply_slot::poll);
    if (!reply) co_return reply.error();
    proto::poll_reply_options o;
    o.max_reply = ctx_.opts.max_reply_bytes;
    if (auto d = proto::decode_poll_reply_into(*reply, poll_, o); !d)
        co_return iss::error{errc::protocol_error, d.error().message()};
    poll_batch b{poll_.partition_id, poll_.current_offset, std::span<const proto::message_view>{poll_.messages}, {}};
    if (!poll_.messages.empty()) b.owner = poll_buffers_.hand_over(poll_in_, reply->size() + 64);
    co_return b;
}

}  // namespace iss::iggy
