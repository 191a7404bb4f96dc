// SPDX-License-Identifier: Apache-2.0
// The G1 request decoders of the server side (the test broker): `decode_request` and the
// SendMessages body (docs/protocol.md §2-7). Target proto_server: the daemon never links it.
#include "proto/commands.hpp"
#include "proto/decoding.hpp"
#include "proto/message_header.hpp"
#include "proto/send.hpp"

#include <cstring>
#include <limits>
#include <string>

namespace iss::proto {

namespace {

std::string at(std::string_view what, std::size_t i) {
    return "send_messages." + std::string{what} + "[" + std::to_string(i) + "]";
}

iss::error server(server_errc e, std::string detail) { return iss::error{make_error_code(e), std::move(detail)}; }

template <class T>
result<T> read_three_ids(reader& r) {
    T v;
    ISS_TRY(v.stream, read_identifier(r, "stream_id"));
    ISS_TRY(v.topic, read_identifier(r, "topic_id"));
    ISS_TRY(v.group, read_identifier(r, "group_id"));
    return v;
}

template <class T>
result<T> read_offset_head(reader& r) {
    T v;
    ISS_TRY(v.consumer, read_consumer(r));
    ISS_TRY(v.stream, read_identifier(r, "stream_id"));
    ISS_TRY(v.topic, read_identifier(r, "topic_id"));
    ISS_TRY(v.partition_id, read_optional_partition(r));
    return v;
}

result<std::string> read_name_string(reader& r, std::string_view field) {
    auto n = r.name(field);
    if (!n) return n.error();
    return std::string{*n};
}

/// The stream, topic, partition and consumer-group commands of `decode_body`.
result<request> decode_admin_body(command code, reader& r) {
    switch (code) {
        case command::get_stream: {
            get_stream_request v;
            ISS_TRY(v.stream, read_identifier(r, "stream_id"));
            return request{std::move(v)};
        }
        case command::create_stream: {
            create_stream_request v;
            ISS_TRY(v.name, read_name_string(r, "create_stream.name"));
            return request{std::move(v)};
        }
        case command::delete_stream: {
            delete_stream_request v;
            ISS_TRY(v.stream, read_identifier(r, "stream_id"));
            return request{std::move(v)};
        }
        case command::get_topic: {
            get_topic_request v;
            ISS_TRY(v.stream, read_identifier(r, "stream_id"));
            ISS_TRY(v.topic, read_identifier(r, "topic_id"));
            return request{std::move(v)};
        }
        case command::get_topics: {
            get_topics_request v;
            ISS_TRY(v.stream, read_identifier(r, "stream_id"));
            return request{std::move(v)};
        }
        case command::create_topic: {
            create_topic_request v;
            ISS_TRY(v.stream, read_identifier(r, "stream_id"));
            ISS_TRY(v.partitions_count, r.u32("create_topic.partitions_count"));
            ISS_TRY(v.compression, r.u8("create_topic.compression"));
            ISS_TRY(v.message_expiry, r.u64("create_topic.message_expiry"));
            ISS_TRY(v.max_topic_size, r.u64("create_topic.max_topic_size"));
            ISS_TRY(v.replication_factor, r.u8("create_topic.replication_factor"));
            ISS_TRY(v.name, read_name_string(r, "create_topic.name"));
            return request{std::move(v)};
        }
        case command::delete_topic: {
            delete_topic_request v;
            ISS_TRY(v.stream, read_identifier(r, "stream_id"));
            ISS_TRY(v.topic, read_identifier(r, "topic_id"));
            return request{std::move(v)};
        }
        case command::create_partitions: {
            create_partitions_request v;
            ISS_TRY(v.stream, read_identifier(r, "stream_id"));
            ISS_TRY(v.topic, read_identifier(r, "topic_id"));
            ISS_TRY(v.partitions_count, r.u32("partitions_count"));
            return request{std::move(v)};
        }
        case command::delete_partitions: {
            delete_partitions_request v;
            ISS_TRY(v.stream, read_identifier(r, "stream_id"));
            ISS_TRY(v.topic, read_identifier(r, "topic_id"));
            ISS_TRY(v.partitions_count, r.u32("partitions_count"));
            return request{std::move(v)};
        }
        case command::get_consumer_group: {
            auto v = read_three_ids<get_consumer_group_request>(r);
            if (!v) return v.error();
            return request{std::move(*v)};
        }
        case command::get_consumer_groups: {
            get_consumer_groups_request v;
            ISS_TRY(v.stream, read_identifier(r, "stream_id"));
            ISS_TRY(v.topic, read_identifier(r, "topic_id"));
            return request{std::move(v)};
        }
        case command::create_consumer_group: {
            create_consumer_group_request v;
            ISS_TRY(v.stream, read_identifier(r, "stream_id"));
            ISS_TRY(v.topic, read_identifier(r, "topic_id"));
            ISS_TRY(v.name, read_name_string(r, "create_consumer_group.name"));
            return request{std::move(v)};
        }
        case command::delete_consumer_group: {
            auto v = read_three_ids<delete_consumer_group_request>(r);
            if (!v) return v.error();
            return request{std::move(*v)};
        }
        case command::join_consumer_group: {
            auto v = read_three_ids<join_consumer_group_request>(r);
            if (!v) return v.error();
            return request{std::move(*v)};
        }
        case command::leave_consumer_group: {
            auto v = read_three_ids<leave_consumer_group_request>(r);
            if (!v) return v.error();
            return request{std::move(*v)};
        }
        default: break;
    }
    return iss::error{errc::unexpected_code, "request.code " + std::to_string(static_cast<std::uint32_t>(code))};
}

result<request> decode_body(command code, reader& r, bytes_view payload) {
    switch (code) {
        case command::ping: return request{ping_request{}};
        case command::get_me: return request{get_me_request{}};
        case command::logout_user: return request{logout_user_request{}};
        case command::get_streams: return request{get_streams_request{}};
        case command::login_user: {
            login_user_request v;
            ISS_TRY(v.username, read_name_string(r, "login_user.username"));
            auto pw = r.u8_text("login_user.password");
            if (!pw) return pw.error();
            v.password.assign(*pw);
            auto ver = r.u32_text("login_user.version", max_control_payload);
            if (!ver) return ver.error();
            v.version.assign(*ver);
            auto ctx = r.u32_text("login_user.context", max_control_payload);
            if (!ctx) return ctx.error();
            v.context.assign(*ctx);
            return request{std::move(v)};
        }
        case command::login_with_personal_access_token: {
            login_with_token_request v;
            ISS_TRY(v.token, read_name_string(r, "login_with_token.token"));
            return request{std::move(v)};
        }
        case command::poll_messages: {
            auto head = read_offset_head<poll_messages_request>(r);
            if (!head) return head.error();
            poll_messages_request v = std::move(*head);
            ISS_TRY(v.strategy, read_polling_strategy(r));
            ISS_TRY(v.count, r.u32("count"));
            std::uint8_t ac = 0;
            ISS_TRY(ac, r.u8("auto_commit"));
            v.auto_commit = ac != 0;
            return request{std::move(v)};
        }
        case command::send_messages: {
            send_messages_view v;
            if (auto res = decode_send_messages(payload, v); !res) return res.error();
            return request{std::move(v)};
        }
        case command::get_consumer_offset: {
            auto v = read_offset_head<get_consumer_offset_request>(r);
            if (!v) return v.error();
            return request{std::move(*v)};
        }
        case command::store_consumer_offset: {
            auto head = read_offset_head<store_consumer_offset_request>(r);
            if (!head) return head.error();
            store_consumer_offset_request v = std::move(*head);
            ISS_TRY(v.offset, r.u64("offset"));
            return request{std::move(v)};
        }
        case command::delete_consumer_offset: {
            auto v = read_offset_head<delete_consumer_offset_request>(r);
            if (!v) return v.error();
            return request{std::move(*v)};
        }
        default: return decode_admin_body(code, r);
    }
    return iss::error{errc::unexpected_code, "request.code " + std::to_string(static_cast<std::uint32_t>(code))};
}

}  // namespace

result<request> decode_request(std::uint32_t code, bytes_view payload) {
    if (!is_known_command(code)) return iss::error{errc::unexpected_code, "request.code " + std::to_string(code)};
    reader r{payload};
    return decode_body(static_cast<command>(code), r, payload);
}

result<void> decode_send_messages(bytes_view payload, send_messages_view& out) {
    out.messages.clear();
    reader r{payload};
    auto meta_len = r.u32("send_messages.metadata_length");
    if (!meta_len) return server(server_errc::invalid_command, "send_messages.metadata_length (truncated)");
    if (*meta_len > payload.size())
        return server(server_errc::invalid_command, "send_messages.metadata_length (over the payload)");
    auto meta_bytes = r.bytes(*meta_len, "send_messages.metadata");
    if (!meta_bytes) return server(server_errc::invalid_command, "send_messages.metadata (truncated)");

    reader m{*meta_bytes};
    auto stream = read_identifier(m, "send_messages.stream_id");
    if (!stream) return server(server_errc::invalid_identifier, stream.error().detail());
    auto topic = read_identifier(m, "send_messages.topic_id");
    if (!topic) return server(server_errc::invalid_identifier, topic.error().detail());
    auto part = read_partitioning(m, "send_messages.partitioning");
    if (!part) return server(server_errc::invalid_command, part.error().detail());
    auto count = m.u32("send_messages.messages_count");
    if (!count) return server(server_errc::invalid_command, "send_messages.messages_count (missing)");
    out.stream = std::move(*stream);
    out.topic = std::move(*topic);
    out.part = std::move(*part);

    const std::size_t index_size = std::size_t{*count} * send_index_entry_size;
    if (index_size > payload.size())
        return server(server_errc::invalid_command, "send_messages.messages_count (index larger than the payload)");
    if (r.remaining() < index_size) return server(server_errc::invalid_command, "send_messages.index (truncated)");
    const bytes_view index = r.bytes(index_size, "send_messages.index").value();
    const bytes_view data = r.rest();

    if (*count == 0) return server(server_errc::invalid_messages_count, "send_messages.messages_count (empty batch)");
    out.messages.reserve(*count);
    std::size_t prev_end = 0;
    std::uint64_t prev_offset = 0;
    std::size_t sum = 0;
    for (std::uint32_t i = 0; i < *count; ++i) {
        const std::byte* e = index.data() + send_index_entry_size * i;
        if (load_le<std::uint32_t>(e) != 0) return server(server_errc::non_zero_offset, at("index", i) + ".offset");
        if (load_le<std::uint64_t>(e + 8) != 0)
            return server(server_errc::non_zero_timestamp, at("index", i) + ".timestamp");
        const std::size_t end = load_le<std::uint32_t>(e + 4);
        if (end > data.size() || end < prev_end || end - prev_end < message_header_size)
            return server(server_errc::missing_index, at("index", i) + ".end_position");
        const bytes_view slot = data.subspan(prev_end, end - prev_end);
        const std::byte* p = slot.data();
        const auto lengths = message_header::read_lengths(p);
        const std::size_t h = lengths.user_headers;
        const std::size_t pl = lengths.payload;
        if (message_header_size + pl + h > slot.size())
            return server(server_errc::missing_index, at("messages", i) + " (longer than its index slot)");
        if (pl > max_payload_size)
            return server(server_errc::too_big_message_payload, at("messages", i) + ".payload_length");
        if (h > max_user_headers_size)
            return server(server_errc::too_big_user_headers, at("messages", i) + ".user_headers_length");
        auto mv = decode_message(slot, at("messages", i));
        if (!mv) return server(server_errc::missing_index, mv.error().detail());
        if (mv->offset < prev_offset)
            return server(server_errc::invalid_offset, at("messages", i) + ".offset (decreasing)");
        prev_offset = mv->offset;
        prev_end = end;
        sum += mv->raw.size();
        out.messages.push_back(*mv);
    }
    if (sum != data.size())
        return server(server_errc::invalid_messages_size, "send_messages.messages (sizes do not add up to the frame)");
    return {};
}

}  // namespace iss::proto
