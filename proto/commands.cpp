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

result<void> no_trailing(const reader& r, std::string_view what) {
    if (!r.empty()) return iss::error{errc::inconsistent, std::string{what} + " (bytes after the last record)"};
    return {};
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

}  // namespace iss::proto
