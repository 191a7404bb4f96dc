// SPDX-License-Identifier: Apache-2.0
#include "proto/g2_commands.hpp"

#include "proto/decoding.hpp"
#include "proto/g2_codec.hpp"

#include <fmt/format.h>

#include <cstring>

namespace iss::proto::g2 {

using detail::no_trailing;
using detail::put_name;
using detail::put_options;

namespace {

result<void> put_u8_text(writer& w, const std::string& s, std::string_view field) {
    if (s.size() > 255) return iss::error{errc::invalid_length, fmt::format("{} (0..255 bytes)", field)};
    w.u8(static_cast<std::uint8_t>(s.size()));
    w.text(s);
    return {};
}

void put_u32_text(writer& w, const std::string& s) {
    w.u32(static_cast<std::uint32_t>(s.size()));
    w.text(s);
}

result<void> put_prefix(writer& w, const client_version_info& v, const bind_secret& secret) {
    w.u32(v.protocol_version);
    if (auto r = put_name(w, v.sdk_name, "register.sdk_name"); !r) return r;
    if (auto r = put_name(w, v.sdk_version, "register.sdk_version"); !r) return r;
    if (has_bind_secret(v.protocol_version)) w.bytes(bytes_view{secret.data(), secret.size()});
    return {};
}

result<void> skip_options(reader& r, std::string_view field) {
    auto n = r.u32(field);
    if (!n) return n.error();
    if (auto b = r.bytes(*n, field); !b) return b.error();
    return {};
}

}  // namespace

// ---- encoders -------------------------------------------------------------------------------

result<void> encode_body(writer& w, const register_request& v) {
    if (auto r = put_prefix(w, v.version, v.secret); !r) return r;
    if (auto r = put_name(w, v.username, "register.username"); !r) return r;
    if (auto r = put_u8_text(w, v.password, "register.password"); !r) return r;
    put_u32_text(w, v.context);
    return {};
}

result<void> encode_body(writer& w, const register_pat_request& v) {
    if (auto r = put_prefix(w, v.version, v.secret); !r) return r;
    if (v.token.empty()) return iss::error{errc::invalid_length, "register.token (1..255 bytes)"};
    if (auto r = put_u8_text(w, v.token, "register.token"); !r) return r;
    put_u32_text(w, v.context);
    return {};
}

result<void> encode_body(writer& w, const store_offset_request& v) {
    proto::store_consumer_offset_request g1{v.consumer, v.stream, v.topic, v.partition_id, v.offset};
    if (auto r = proto::encode_body(w, g1); !r) return r;
    w.u8(v.ack);
    return {};
}

result<void> encode_body(writer& w, const delete_offset_request& v) {
    proto::delete_consumer_offset_request g1{v.consumer, v.stream, v.topic, v.partition_id};
    if (auto r = proto::encode_body(w, g1); !r) return r;
    w.u8(v.ack);
    return {};
}

result<void> encode_body(writer& w, const create_stream_request& v) {
    if (auto r = put_name(w, v.name, "create_stream.name"); !r) return r;
    w.text(v.options);
    return {};
}

result<void> encode_body(writer& w, const create_topic_request& v) {
    if (auto r = append_identifier(w, v.stream, "create_topic.stream_id"); !r) return r;
    w.u32(v.partitions_count);
    if (auto r = put_name(w, v.name, "create_topic.name"); !r) return r;
    w.text(v.options);
    return {};
}

result<void> encode_body(writer& w, const sync_consumer_group_request& v) {
    if (auto r = append_identifier(w, v.stream, "sync_consumer_group.stream_id"); !r) return r;
    if (auto r = append_identifier(w, v.topic, "sync_consumer_group.topic_id"); !r) return r;
    return append_identifier(w, v.group, "sync_consumer_group.group_id");
}

// (The server side: proto/server/g2_requests.cpp and g2_replies.cpp, target proto_server.)

// ---- reply decoders ----------------------------------------------------------------------------

result<register_reply> decode_register_reply(bytes_view body) {
    auto payload = decode_result_framed(body);
    if (!payload) return payload.error();
    reader r{*payload};
    register_reply out;
    auto u = r.u32("register_reply.user_id");
    if (!u) return u.error();
    auto s = r.u64("register_reply.session");
    if (!s) return s.error();
    auto v = r.u32("register_reply.server_protocol_version");
    if (!v) return v.error();
    auto n = r.name("register_reply.server_version");
    if (!n) return n.error();
    if (*s == 0) return iss::error{errc::invalid_value, "register_reply.session (0)"};
    out.user_id = *u;
    out.session = *s;
    out.server_protocol_version = *v;
    out.server_version.assign(*n);
    if (auto t = no_trailing(r, "register_reply"); !t) return t.error();
    return out;
}

result<std::optional<sync_reply>> decode_sync_reply(bytes_view body) {
    if (body.empty()) return std::optional<sync_reply>{};
    reader r{body};
    sync_reply s;
    auto g = r.u64("sync_reply.generation");
    if (!g) return g.error();
    s.generation = *g;
    auto n = r.u32("sync_reply.count");
    if (!n) return n.error();
    if (r.remaining() / 4 < *n) return reader::truncated("sync_reply.partitions");
    s.partitions.resize(*n);
    for (auto& p : s.partitions) p = *r.u32("sync_reply.partitions");
    if (auto t = no_trailing(r, "sync_reply"); !t) return t.error();
    return std::optional<sync_reply>{std::move(s)};
}

result<stream_info> read_g2_stream_info(reader& r, std::string_view field) {
    auto s = proto::read_stream_info(r, field);
    if (!s) return s.error();
    if (auto o = skip_options(r, field_path(field, "options")); !o) return o.error();
    return s;
}

result<topic_info> read_g2_topic_info(reader& r, std::string_view field) {
    topic_info t;
    auto f = [&](std::string_view n) { return field_path(field, n); };
    auto id = r.u32(f("id"));
    if (!id) return id.error();
    auto created = r.u64(f("created_at"));
    if (!created) return created.error();
    auto pc = r.u32(f("partitions_count"));
    if (!pc) return pc.error();
    auto exp = r.u64(f("message_expiry"));
    if (!exp) return exp.error();
    auto comp = r.u8(f("compression_algorithm"));
    if (!comp) return comp.error();
    auto max = r.u64(f("max_topic_size"));
    if (!max) return max.error();
    auto size = r.u64(f("size_bytes"));
    if (!size) return size.error();
    auto count = r.u64(f("messages_count"));
    if (!count) return count.error();
    auto name = r.name(f("name"));
    if (!name) return name.error();
    if (auto o = skip_options(r, f("options")); !o) return o.error();
    if (auto o = skip_options(r, f("derived_options")); !o) return o.error();
    t.id = *id;
    t.created_at = *created;
    t.partitions_count = *pc;
    t.message_expiry = *exp;
    t.compression = *comp;
    t.max_topic_size = *max;
    t.replication_factor = 1;
    t.size_bytes = *size;
    t.messages_count = *count;
    t.name.assign(*name);
    return t;
}

result<std::optional<stream_details>> decode_stream_reply(bytes_view payload) {
    if (payload.empty()) return std::optional<stream_details>{};
    reader r{payload};
    stream_details d;
    auto s = read_g2_stream_info(r, "stream");
    if (!s) return s.error();
    d.stream = std::move(*s);
    if (r.remaining() / 51 < d.stream.topics_count) return reader::truncated("stream.topics");
    for (std::uint32_t i = 0; i < d.stream.topics_count; ++i) {
        auto t = read_g2_topic_info(r, fmt::format("stream.topics[{}]", i));
        if (!t) return t.error();
        d.topics.push_back(std::move(*t));
    }
    if (auto t = no_trailing(r, "stream reply"); !t) return t.error();
    return std::optional<stream_details>{std::move(d)};
}

result<std::optional<topic_details>> decode_topic_reply(bytes_view payload) {
    if (payload.empty()) return std::optional<topic_details>{};
    reader r{payload};
    topic_details d;
    auto t = read_g2_topic_info(r, "topic");
    if (!t) return t.error();
    d.topic = std::move(*t);
    if (r.remaining() / 40 < d.topic.partitions_count) return reader::truncated("topic.partitions");
    for (std::uint32_t i = 0; i < d.topic.partitions_count; ++i) {
        auto p = read_partition_info(r, fmt::format("topic.partitions[{}]", i));
        if (!p) return p.error();
        d.partitions.push_back(*p);
    }
    if (auto e = no_trailing(r, "topic reply"); !e) return e.error();
    return std::optional<topic_details>{std::move(d)};
}

result<std::optional<consumer_group_details>> decode_consumer_group_reply(bytes_view payload) {
    return proto::decode_get_consumer_group_reply(payload);
}

result<std::optional<consumer_offset_info>> decode_consumer_offset_reply(bytes_view payload) {
    return proto::decode_get_consumer_offset_reply(payload);
}

}  // namespace iss::proto::g2
