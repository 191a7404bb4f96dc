// SPDX-License-Identifier: Apache-2.0
#include "iggy/client.hpp"

#include "iggy/session.hpp"

namespace iss::iggy {

namespace {

/// A reply that did not decode: the byte stream may be fine, the content is not.
iss::error bad_reply(const iss::error& e) {
    if (e.code().category() == client_category()) return e;
    return iss::error{errc::protocol_error, e.message()};
}

/// A decoded value, or its error as a bad reply.
template <class T>
result<T> decoded(result<T> d) {
    if (!d) return bad_reply(d.error());
    return d;
}

/// Sends `req`; success carries nothing.
net::awaitable<result<void>> acked(session& s, const request& req) {
    auto reply = co_await s.call(req);
    if (!reply) co_return reply.error();
    co_return result<void>{};
}

/// Sends `req` and decodes its reply with `decode(transport&, payload)`.
template <class Decode>
auto answered(session& s, const request& req, Decode decode)
    -> net::awaitable<decltype(decoded(decode(s.wire(), proto::bytes_view{})))> {
    auto reply = co_await s.call(req);
    if (!reply) co_return reply.error();
    co_return decoded(decode(s.wire(), *reply));
}

}  // namespace

client::client(net::any_io_executor ex, client_options opts)
    : s_{std::make_shared<session>(std::move(ex), std::move(opts))} {}

client::~client() { s_->shutdown(); }

std::uint64_t client::generation() const noexcept { return s_->generation(); }
const client_stats& client::stats() const noexcept { return s_->stats(); }
bool client::connected() const noexcept { return s_->connected(); }
const client_options& client::options() const noexcept { return s_->options(); }
wire_protocol client::protocol_in_use() const noexcept { return s_->protocol_in_use(); }

net::awaitable<result<void>> client::connect() { co_return co_await s_->ensure_connected(); }

net::awaitable<void> client::close() {
    s_->shutdown();
    co_return;
}

// Every request is a named local before it is awaited on: GCC 12 mis-destroys temporaries
// that live across a co_await (a double free was seen here).

net::awaitable<result<void>> client::ping() {
    const request req = proto::ping_request{};
    co_return co_await acked(*s_, req);
}

net::awaitable<result<proto::client_details>> client::get_me() {
    const request req = proto::get_me_request{};
    co_return co_await answered(*s_, req,
                                [](transport&, proto::bytes_view r) { return proto::decode_get_me_reply(r); });
}

net::awaitable<result<std::optional<proto::stream_details>>> client::get_stream(identifier stream) {
    const request req = proto::get_stream_request{std::move(stream)};
    co_return co_await answered(*s_, req, [](transport& t, proto::bytes_view r) { return t.stream_reply(r); });
}

net::awaitable<result<proto::stream_details>> client::create_stream(std::string name) {
    const request req = proto::create_stream_request{std::move(name)};
    co_return co_await answered(*s_, req, [](transport& t, proto::bytes_view r) { return t.created_stream(r); });
}

net::awaitable<result<void>> client::delete_stream(identifier stream) {
    const request req = proto::delete_stream_request{std::move(stream)};
    co_return co_await acked(*s_, req);
}

net::awaitable<result<std::optional<proto::topic_details>>> client::get_topic(identifier stream, identifier topic) {
    const request req = proto::get_topic_request{std::move(stream), std::move(topic)};
    co_return co_await answered(*s_, req, [](transport& t, proto::bytes_view r) { return t.topic_reply(r); });
}

net::awaitable<result<proto::topic_details>> client::create_topic(identifier stream, std::string name,
                                                                  std::uint32_t partitions) {
    proto::create_topic_request create;
    create.stream = std::move(stream);
    create.partitions_count = partitions;
    create.name = std::move(name);
    const request req = std::move(create);
    co_return co_await answered(*s_, req, [](transport& t, proto::bytes_view r) { return t.created_topic(r); });
}

net::awaitable<result<void>> client::delete_topic(identifier stream, identifier topic) {
    const request req = proto::delete_topic_request{std::move(stream), std::move(topic)};
    co_return co_await acked(*s_, req);
}

net::awaitable<result<void>> client::create_partitions(identifier stream, identifier topic, std::uint32_t count) {
    const request req = proto::create_partitions_request{std::move(stream), std::move(topic), count};
    co_return co_await acked(*s_, req);
}

net::awaitable<result<std::optional<proto::consumer_group_details>>> client::get_consumer_group(identifier stream,
                                                                                                identifier topic,
                                                                                                identifier group) {
    const request req = proto::get_consumer_group_request{std::move(stream), std::move(topic), std::move(group)};
    co_return co_await answered(
        *s_, req, [](transport&, proto::bytes_view r) { return proto::decode_get_consumer_group_reply(r); });
}

net::awaitable<result<proto::consumer_group_info>> client::create_consumer_group(identifier stream, identifier topic,
                                                                                 std::string name) {
    const request req = proto::create_consumer_group_request{stream, topic, name};
    auto reply = co_await s_->call(req);
    if (!reply) co_return reply.error();
    auto info = s_->wire().created_group(*reply);
    if (!info) co_return bad_reply(info.error());
    if (*info) co_return std::move(**info);
    // The reply does not hold the group (G2's is an empty result): read it back by name.
    auto g = co_await get_consumer_group(std::move(stream), std::move(topic), identifier::named(name));
    if (!g) co_return g.error();
    if (!*g) co_return iss::error{errc::protocol_error, "CreateConsumerGroup: the group is not there after creation"};
    co_return (*g)->group;
}

net::awaitable<result<void>> client::join_consumer_group(identifier stream, identifier topic, identifier group) {
    const request req = proto::join_consumer_group_request{stream, topic, group};
    auto reply = co_await s_->call(req);
    if (!reply) co_return reply.error();
    s_->remember_group(std::move(stream), std::move(topic), std::move(group));
    s_->wire().groups_changed();
    co_return result<void>{};
}

net::awaitable<result<void>> client::leave_consumer_group(identifier stream, identifier topic, identifier group) {
    s_->forget_group(stream, topic, group);
    const request req = proto::leave_consumer_group_request{std::move(stream), std::move(topic), std::move(group)};
    auto reply = co_await s_->call(req);
    if (!reply) co_return reply.error();
    s_->wire().groups_changed();
    co_return result<void>{};
}

net::awaitable<result<void>> client::send_messages(identifier stream, identifier topic, partitioning p,
                                                   std::span<const outgoing_message> messages) {
    std::vector<proto::message_fields> fields;
    fields.reserve(messages.size());
    for (const auto& m : messages) {
        proto::message_fields f;
        f.id = m.id;
        f.origin_timestamp = m.origin_timestamp;
        f.payload = m.payload;
        f.user_headers = m.user_headers;
        fields.push_back(f);
    }
    const request req = send_request{std::move(stream), std::move(topic), std::move(p), fields};
    co_return co_await answered(*s_, req, [](transport& t, proto::bytes_view r) { return t.sent(r); });
}

net::awaitable<result<poll_batch>> client::poll_messages(consumer c, identifier stream, identifier topic,
                                                         std::optional<std::uint32_t> partition,
                                                         polling_strategy strategy, std::uint32_t count,
                                                         bool auto_commit) {
    // Connected first: the connection's transport decides how a group poll picks its partition.
    if (auto cc = co_await s_->ensure_connected(); !cc) co_return cc.error();
    poll_args a{std::move(c), std::move(stream), std::move(topic), partition, strategy, count, auto_commit};
    co_return co_await s_->wire().poll(*s_, std::move(a));
}

net::awaitable<result<void>> client::store_offset(consumer c, identifier stream, identifier topic,
                                                  std::optional<std::uint32_t> partition, std::uint64_t offset) {
    const request req =
        proto::store_consumer_offset_request{std::move(c), std::move(stream), std::move(topic), partition, offset};
    co_return co_await acked(*s_, req);
}

net::awaitable<result<std::optional<proto::consumer_offset_info>>> client::get_offset(
    consumer c, identifier stream, identifier topic, std::optional<std::uint32_t> partition) {
    const request req =
        proto::get_consumer_offset_request{std::move(c), std::move(stream), std::move(topic), partition};
    co_return co_await answered(
        *s_, req, [](transport&, proto::bytes_view r) { return proto::decode_get_consumer_offset_reply(r); });
}

net::awaitable<result<void>> client::delete_offset(consumer c, identifier stream, identifier topic,
                                                   std::optional<std::uint32_t> partition) {
    const request req =
        proto::delete_consumer_offset_request{std::move(c), std::move(stream), std::move(topic), partition};
    co_return co_await acked(*s_, req);
}

}  // namespace iss::iggy
