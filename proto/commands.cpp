// SPDX-License-Identifier: Apache-2.0
#include "proto/commands.hpp"

#include "proto/decoding.hpp"

#include <limits>
#include <string>

namespace iss::proto {

namespace {

constexpr std::size_t max_text_field = 255;

result<void> name_field(writer& w, const std::string& s, std::string_view field) {
    if (s.empty() || s.size() > max_text_field)
        return iss::error{errc::invalid_length, std::string{field} + " (1..255 bytes)"};
    w.u8(static_cast<std::uint8_t>(s.size()));
    w.text(s);
    return {};
}

result<void> three_ids(writer& w, const identifier& s, const identifier& t, const identifier& g) {
    if (auto r = append_identifier(w, s, "stream_id"); !r) return r;
    if (auto r = append_identifier(w, t, "topic_id"); !r) return r;
    return append_identifier(w, g, "group_id");
}

result<void> two_ids(writer& w, const identifier& s, const identifier& t) {
    if (auto r = append_identifier(w, s, "stream_id"); !r) return r;
    return append_identifier(w, t, "topic_id");
}

result<void> offset_head(writer& w, const consumer& c, const identifier& s, const identifier& t,
                         std::optional<std::uint32_t> p) {
    if (auto r = append_consumer(w, c); !r) return r;
    if (auto r = two_ids(w, s, t); !r) return r;
    append_optional_partition(w, p);
    return {};
}

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

result<void> no_trailing(const reader& r, std::string_view what) {
    if (!r.empty()) return iss::error{errc::inconsistent, std::string{what} + " (bytes after the last record)"};
    return {};
}

template <class F>
auto with_reply(byte_buffer& out, F&& body) {
    const std::size_t start = begin_reply(out);
    writer w{out};
    if constexpr (std::is_void_v<decltype(body(w))>) {
        body(w);
        finish_reply(out, start);
    } else {
        auto r = body(w);
        if (!r) {
            out.resize(start);
            return r;
        }
        finish_reply(out, start);
        return r;
    }
}

}  // namespace

result<void> encode_body(writer&, const ping_request&) { return {}; }
result<void> encode_body(writer&, const get_me_request&) { return {}; }
result<void> encode_body(writer&, const logout_user_request&) { return {}; }
result<void> encode_body(writer&, const get_streams_request&) { return {}; }

result<void> encode_body(writer& w, const login_user_request& v) {
    if (auto r = name_field(w, v.username, "login_user.username"); !r) return r;
    if (v.password.size() > max_text_field)
        return iss::error{errc::invalid_length, "login_user.password (0..255 bytes)"};
    w.u8(static_cast<std::uint8_t>(v.password.size()));
    w.text(v.password);
    w.u32(static_cast<std::uint32_t>(v.version.size()));
    w.text(v.version);
    w.u32(static_cast<std::uint32_t>(v.context.size()));
    w.text(v.context);
    return {};
}

result<void> encode_body(writer& w, const login_with_token_request& v) {
    return name_field(w, v.token, "login_with_token.token");
}

result<void> encode_body(writer& w, const poll_messages_request& v) {
    if (auto r = offset_head(w, v.consumer, v.stream, v.topic, v.partition_id); !r) return r;
    append_polling_strategy(w, v.strategy);
    w.u32(v.count);
    w.u8(v.auto_commit ? 1 : 0);
    return {};
}

result<void> encode_body(writer& w, const get_consumer_offset_request& v) {
    return offset_head(w, v.consumer, v.stream, v.topic, v.partition_id);
}

result<void> encode_body(writer& w, const store_consumer_offset_request& v) {
    if (auto r = offset_head(w, v.consumer, v.stream, v.topic, v.partition_id); !r) return r;
    w.u64(v.offset);
    return {};
}

result<void> encode_body(writer& w, const delete_consumer_offset_request& v) {
    return offset_head(w, v.consumer, v.stream, v.topic, v.partition_id);
}

result<void> encode_body(writer& w, const get_stream_request& v) { return append_identifier(w, v.stream, "stream_id"); }
result<void> encode_body(writer& w, const create_stream_request& v) {
    return name_field(w, v.name, "create_stream.name");
}
result<void> encode_body(writer& w, const delete_stream_request& v) {
    return append_identifier(w, v.stream, "stream_id");
}
result<void> encode_body(writer& w, const get_topic_request& v) { return two_ids(w, v.stream, v.topic); }
result<void> encode_body(writer& w, const get_topics_request& v) { return append_identifier(w, v.stream, "stream_id"); }

result<void> encode_body(writer& w, const create_topic_request& v) {
    if (auto r = append_identifier(w, v.stream, "stream_id"); !r) return r;
    w.u32(v.partitions_count);
    w.u8(v.compression);
    w.u64(v.message_expiry);
    w.u64(v.max_topic_size);
    w.u8(v.replication_factor);
    return name_field(w, v.name, "create_topic.name");
}

result<void> encode_body(writer& w, const delete_topic_request& v) { return two_ids(w, v.stream, v.topic); }

result<void> encode_body(writer& w, const create_partitions_request& v) {
    if (auto r = two_ids(w, v.stream, v.topic); !r) return r;
    w.u32(v.partitions_count);
    return {};
}

result<void> encode_body(writer& w, const delete_partitions_request& v) {
    if (auto r = two_ids(w, v.stream, v.topic); !r) return r;
    w.u32(v.partitions_count);
    return {};
}

result<void> encode_body(writer& w, const get_consumer_group_request& v) {
    return three_ids(w, v.stream, v.topic, v.group);
}
result<void> encode_body(writer& w, const get_consumer_groups_request& v) { return two_ids(w, v.stream, v.topic); }

result<void> encode_body(writer& w, const create_consumer_group_request& v) {
    if (auto r = two_ids(w, v.stream, v.topic); !r) return r;
    return name_field(w, v.name, "create_consumer_group.name");
}

result<void> encode_body(writer& w, const delete_consumer_group_request& v) {
    return three_ids(w, v.stream, v.topic, v.group);
}
result<void> encode_body(writer& w, const join_consumer_group_request& v) {
    return three_ids(w, v.stream, v.topic, v.group);
}
result<void> encode_body(writer& w, const leave_consumer_group_request& v) {
    return three_ids(w, v.stream, v.topic, v.group);
}

result<request> decode_request(std::uint32_t code, bytes_view payload) {
    if (!is_known_command(code)) return iss::error{errc::unexpected_code, "request.code " + std::to_string(code)};
    reader r{payload};
    return decode_body(static_cast<command>(code), r, payload);
}

command request_code(const request& r) noexcept {
    return std::visit(
        [](const auto& v) -> command {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, send_messages_view>) return command::send_messages;
            else return T::code;
        },
        r);
}

// ---- client-side reply decoders ----

result<void> decode_empty_reply(bytes_view payload) {
    if (!payload.empty()) return iss::error{errc::inconsistent, "reply (expected an empty payload)"};
    return {};
}

result<std::uint32_t> decode_user_id_reply(bytes_view payload) {
    reader r{payload};
    auto id = r.u32("login.user_id");
    if (!id) return id.error();
    if (auto t = no_trailing(r, "login reply"); !t) return t.error();
    return *id;
}

result<client_details> decode_get_me_reply(bytes_view payload) {
    reader r{payload};
    auto c = read_client_details(r);
    if (!c) return c.error();
    if (auto t = no_trailing(r, "get_me reply"); !t) return t.error();
    return c;
}

result<std::optional<stream_details>> decode_get_stream_reply(bytes_view payload) {
    if (payload.empty()) return std::optional<stream_details>{};
    auto d = decode_create_stream_reply(payload);
    if (!d) return d.error();
    return std::optional<stream_details>{std::move(*d)};
}

result<stream_details> decode_create_stream_reply(bytes_view payload) {
    reader r{payload};
    auto d = read_stream_details(r);
    if (!d) return d.error();
    if (auto t = no_trailing(r, "stream reply"); !t) return t.error();
    return d;
}

result<std::vector<stream_info>> decode_get_streams_reply(bytes_view payload) {
    reader r{payload};
    std::vector<stream_info> out;
    for (std::size_t i = 0; !r.empty(); ++i) {
        auto s = read_stream_info(r, "streams[" + std::to_string(i) + "]");
        if (!s) return s.error();
        out.push_back(std::move(*s));
    }
    return out;
}

result<std::optional<topic_details>> decode_get_topic_reply(bytes_view payload) {
    if (payload.empty()) return std::optional<topic_details>{};
    auto d = decode_create_topic_reply(payload);
    if (!d) return d.error();
    return std::optional<topic_details>{std::move(*d)};
}

result<topic_details> decode_create_topic_reply(bytes_view payload) {
    reader r{payload};
    auto d = read_topic_details(r);
    if (!d) return d.error();
    if (auto t = no_trailing(r, "topic reply"); !t) return t.error();
    return d;
}

result<std::vector<topic_info>> decode_get_topics_reply(bytes_view payload) {
    reader r{payload};
    std::vector<topic_info> out;
    for (std::size_t i = 0; !r.empty(); ++i) {
        auto t = read_topic_info(r, "topics[" + std::to_string(i) + "]");
        if (!t) return t.error();
        out.push_back(std::move(*t));
    }
    return out;
}

result<std::optional<consumer_group_details>> decode_get_consumer_group_reply(bytes_view payload) {
    if (payload.empty()) return std::optional<consumer_group_details>{};
    auto d = decode_create_consumer_group_reply(payload);
    if (!d) return d.error();
    return std::optional<consumer_group_details>{std::move(*d)};
}

result<consumer_group_details> decode_create_consumer_group_reply(bytes_view payload) {
    reader r{payload};
    auto d = read_consumer_group_details(r);
    if (!d) return d.error();
    if (auto t = no_trailing(r, "consumer group reply"); !t) return t.error();
    return d;
}

result<std::vector<consumer_group_info>> decode_get_consumer_groups_reply(bytes_view payload) {
    reader r{payload};
    std::vector<consumer_group_info> out;
    for (std::size_t i = 0; !r.empty(); ++i) {
        auto g = read_consumer_group_info(r, "consumer_groups[" + std::to_string(i) + "]");
        if (!g) return g.error();
        out.push_back(std::move(*g));
    }
    return out;
}

result<std::optional<consumer_offset_info>> decode_get_consumer_offset_reply(bytes_view payload) {
    if (payload.empty()) return std::optional<consumer_offset_info>{};
    reader r{payload};
    auto o = read_consumer_offset_info(r);
    if (!o) return o.error();
    if (auto t = no_trailing(r, "consumer offset reply"); !t) return t.error();
    return std::optional<consumer_offset_info>{*o};
}

// ---- server-side reply encoders ----

void append_empty_reply(byte_buffer& out) { append_ok_reply(out, {}); }

void append_user_id_reply(byte_buffer& out, std::uint32_t user_id) {
    with_reply(out, [&](writer& w) { w.u32(user_id); });
}

void append_get_me_reply(byte_buffer& out, const client_details& c) {
    with_reply(out, [&](writer& w) { append_client_details(w, c); });
}

result<void> append_stream_reply(byte_buffer& out, const stream_details& s) {
    return with_reply(out, [&](writer& w) { return append_stream_details(w, s); });
}

result<void> append_streams_reply(byte_buffer& out, std::span<const stream_info> streams) {
    return with_reply(out, [&](writer& w) -> result<void> {
        for (const auto& s : streams)
            if (auto r = append_stream_info(w, s); !r) return r;
        return {};
    });
}

result<void> append_topic_reply(byte_buffer& out, const topic_details& t) {
    return with_reply(out, [&](writer& w) { return append_topic_details(w, t); });
}

result<void> append_topics_reply(byte_buffer& out, std::span<const topic_info> topics) {
    return with_reply(out, [&](writer& w) -> result<void> {
        for (const auto& t : topics)
            if (auto r = append_topic_info(w, t); !r) return r;
        return {};
    });
}

result<void> append_consumer_group_reply(byte_buffer& out, const consumer_group_details& g) {
    return with_reply(out, [&](writer& w) { return append_consumer_group_details(w, g); });
}

result<void> append_consumer_groups_reply(byte_buffer& out, std::span<const consumer_group_info> groups) {
    return with_reply(out, [&](writer& w) -> result<void> {
        for (const auto& g : groups)
            if (auto r = append_consumer_group_info(w, g); !r) return r;
        return {};
    });
}

void append_consumer_offset_reply(byte_buffer& out, const std::optional<consumer_offset_info>& o) {
    with_reply(out, [&](writer& w) {
        if (o) append_consumer_offset_info(w, *o);
    });
}

}  // namespace iss::proto
