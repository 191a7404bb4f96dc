// SPDX-License-Identifier: Apache-2.0
#include "proto/g2_commands.hpp"

#include "proto/decoding.hpp"

#include <fmt/format.h>

#include <cstring>

namespace iss::proto::g2 {

namespace {

result<void> put_name(writer& w, const std::string& s, std::string_view field) {
    if (s.empty() || s.size() > 255) return iss::error{errc::invalid_length, fmt::format("{} (1..255 bytes)", field)};
    w.u8(static_cast<std::uint8_t>(s.size()));
    w.text(s);
    return {};
}

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

result<client_version_info> read_prefix(reader& r) {
    client_version_info v;
    auto pv = r.u32("register.protocol_version");
    if (!pv) return pv.error();
    v.protocol_version = *pv;
    auto n = r.name("register.sdk_name");
    if (!n) return n.error();
    v.sdk_name.assign(*n);
    auto s = r.name("register.sdk_version");
    if (!s) return s.error();
    v.sdk_version.assign(*s);
    return v;
}

result<void> read_secret(reader& r, std::uint32_t protocol, bind_secret& out) {
    if (!has_bind_secret(protocol)) return {};
    auto b = r.bytes(out.size(), "register.bind_secret");
    if (!b) return b.error();
    std::memcpy(out.data(), b->data(), out.size());
    return {};
}

result<void> no_trailing(const reader& r, std::string_view what) {
    if (!r.empty()) return iss::error{errc::inconsistent, fmt::format("{} (trailing bytes)", what)};
    return {};
}

result<void> put_options(writer& w, std::string_view options) {
    w.u32(static_cast<std::uint32_t>(options.size()));
    w.text(options);
    return {};
}

result<void> skip_options(reader& r, std::string_view field) {
    auto n = r.u32(field);
    if (!n) return n.error();
    if (auto b = r.bytes(*n, field); !b) return b.error();
    return {};
}

template <class T>
result<request> same_as_g1(std::uint32_t code, bytes_view body) {
    auto g1 = proto::decode_request(code, body);
    if (!g1) return g1.error();
    if (auto* v = std::get_if<T>(&*g1)) return request{std::move(*v)};
    return iss::error{errc::unexpected_code, "request (decoded as another command)"};
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

// ---- server side decoders ---------------------------------------------------------------------

std::optional<std::uint32_t> request_code(const request_header& h) noexcept {
    if (h.op == operation::non_replicated) return h.code;
    return code_for(h.op);
}

result<client_version_info> decode_client_version(bytes_view body) {
    reader r{body};
    return read_prefix(r);
}

result<register_request> decode_register_user(bytes_view body) {
    reader r{body};
    register_request q;
    auto v = read_prefix(r);
    if (!v) return v.error();
    q.version = std::move(*v);
    if (auto s = read_secret(r, q.version.protocol_version, q.secret); !s) return s.error();
    auto u = r.name("register.username");
    if (!u) return u.error();
    q.username.assign(*u);
    auto p = r.u8_text("register.password");
    if (!p) return p.error();
    q.password.assign(*p);
    auto c = r.u32_text("register.context", 10u * 1024 * 1024);
    if (!c) return c.error();
    q.context.assign(*c);
    if (auto t = no_trailing(r, "register"); !t) return t.error();
    return q;
}

result<register_pat_request> decode_register_pat(bytes_view body) {
    reader r{body};
    register_pat_request q;
    auto v = read_prefix(r);
    if (!v) return v.error();
    q.version = std::move(*v);
    if (auto s = read_secret(r, q.version.protocol_version, q.secret); !s) return s.error();
    auto t = r.u8_text("register.token");
    if (!t) return t.error();
    if (t->empty()) return iss::error{errc::invalid_length, "register.token (empty)"};
    q.token.assign(*t);
    auto c = r.u32_text("register.context", 10u * 1024 * 1024);
    if (!c) return c.error();
    q.context.assign(*c);
    if (auto e = no_trailing(r, "register"); !e) return e.error();
    return q;
}

namespace {

/// The consumer, stream, topic and optional partition that start a store or delete offset
/// request (`what`: the command's name, for errors), into `q`.
template <class Request>
result<void> read_offset_target(reader& r, std::string_view what, Request& q) {
    auto c = read_consumer(r, field_path(what, "consumer"));
    if (!c) return c.error();
    q.consumer = std::move(*c);
    auto s = read_identifier(r, field_path(what, "stream_id"));
    if (!s) return s.error();
    q.stream = std::move(*s);
    auto t = read_identifier(r, field_path(what, "topic_id"));
    if (!t) return t.error();
    q.topic = std::move(*t);
    auto p = read_optional_partition(r, field_path(what, "partition_id"));
    if (!p) return p.error();
    q.partition_id = *p;
    return {};
}

/// The `ack` byte (0 or 1) of a store or delete offset request.
result<void> read_ack(reader& r, std::string_view field, std::uint8_t& ack) {
    auto a = r.u8(field);
    if (!a) return a.error();
    if (*a > 1) return iss::error{errc::invalid_value, fmt::format("{} (0 or 1)", field)};
    ack = *a;
    return {};
}

}  // namespace

result<request> decode_request(const request_header& h, bytes_view body) {
    if (h.op == operation::register_client) {
        if (auto v = decode_client_version(body); !v)
            return iss::error{errc::invalid_value,
                              "register.version (no ClientVersionInfo prefix): " + v.error().message()};
        if (auto u = decode_register_user(body)) return request{std::move(*u)};
        auto p = decode_register_pat(body);
        if (!p) return p.error();
        return request{std::move(*p)};
    }
    if (!is_known_operation(static_cast<std::uint8_t>(h.op)) || h.op == operation::reserved)
        return iss::error{errc::unexpected_code, fmt::format("request.operation ({})", static_cast<unsigned>(h.op))};
    auto code = request_code(h);
    if (!code) return iss::error{errc::unexpected_code, fmt::format("request.operation ({})", operation_name(h.op))};
    if (h.op == operation::non_replicated && operation_for(*code) != operation::non_replicated)
        return iss::error{errc::unexpected_code, fmt::format("request.code ({} is not NonReplicated)", *code)};
    switch (*code) {
        case code::ping: return same_as_g1<ping_request>(*code, body);
        case code::get_me: return same_as_g1<get_me_request>(*code, body);
        case code::logout_user: return same_as_g1<logout_user_request>(*code, body);
        case code::poll_messages: return same_as_g1<poll_messages_request>(*code, body);
        case code::get_consumer_offset: return same_as_g1<get_consumer_offset_request>(*code, body);
        case code::get_stream: return same_as_g1<get_stream_request>(*code, body);
        case code::get_streams: return same_as_g1<get_streams_request>(*code, body);
        case code::delete_stream: return same_as_g1<delete_stream_request>(*code, body);
        case code::get_topic: return same_as_g1<get_topic_request>(*code, body);
        case code::get_topics: return same_as_g1<get_topics_request>(*code, body);
        case code::delete_topic: return same_as_g1<delete_topic_request>(*code, body);
        case code::create_partitions: return same_as_g1<create_partitions_request>(*code, body);
        case code::delete_partitions: return same_as_g1<delete_partitions_request>(*code, body);
        case code::get_consumer_group: return same_as_g1<get_consumer_group_request>(*code, body);
        case code::get_consumer_groups: return same_as_g1<get_consumer_groups_request>(*code, body);
        case code::create_consumer_group: return same_as_g1<create_consumer_group_request>(*code, body);
        case code::delete_consumer_group: return same_as_g1<delete_consumer_group_request>(*code, body);
        case code::join_consumer_group: return same_as_g1<join_consumer_group_request>(*code, body);
        case code::leave_consumer_group: return same_as_g1<leave_consumer_group_request>(*code, body);
        case code::store_consumer_offset: {
            reader r{body};
            store_offset_request q;
            if (auto e = read_offset_target(r, "store_consumer_offset", q); !e) return e.error();
            auto o = r.u64("store_consumer_offset.offset");
            if (!o) return o.error();
            q.offset = *o;
            if (auto e = read_ack(r, "store_consumer_offset.ack", q.ack); !e) return e.error();
            return request{std::move(q)};
        }
        case code::delete_consumer_offset: {
            reader r{body};
            delete_offset_request q;
            if (auto e = read_offset_target(r, "delete_consumer_offset", q); !e) return e.error();
            if (auto e = read_ack(r, "delete_consumer_offset.ack", q.ack); !e) return e.error();
            return request{std::move(q)};
        }
        case code::create_stream: {
            reader r{body};
            create_stream_request q;
            auto n = r.name("create_stream.name");
            if (!n) return n.error();
            q.name.assign(*n);
            q.options.assign(as_text(r.rest()));
            return request{std::move(q)};
        }
        case code::create_topic: {
            reader r{body};
            create_topic_request q;
            auto s = read_identifier(r, "create_topic.stream_id");
            if (!s) return s.error();
            q.stream = std::move(*s);
            auto c = r.u32("create_topic.partitions_count");
            if (!c) return c.error();
            q.partitions_count = *c;
            auto n = r.name("create_topic.name");
            if (!n) return n.error();
            q.name.assign(*n);
            q.options.assign(as_text(r.rest()));
            return request{std::move(q)};
        }
        case code::sync_consumer_group: {
            reader r{body};
            sync_consumer_group_request q;
            auto s = read_identifier(r, "sync_consumer_group.stream_id");
            if (!s) return s.error();
            auto t = read_identifier(r, "sync_consumer_group.topic_id");
            if (!t) return t.error();
            auto g = read_identifier(r, "sync_consumer_group.group_id");
            if (!g) return g.error();
            q.stream = std::move(*s);
            q.topic = std::move(*t);
            q.group = std::move(*g);
            return request{std::move(q)};
        }
        case code::send_messages: {
            send_messages_batch_view v;
            if (auto d = decode_send_messages(body, v); !d) return d.error();
            return request{std::move(v)};
        }
        default: return iss::error{errc::unexpected_code, fmt::format("request.code ({} not served)", *code)};
    }
}

// ---- replies ----------------------------------------------------------------------------------

result<void> append_register_reply(byte_buffer& body, const register_reply& r) {
    append_result_ok(body);
    writer w{body};
    w.u32(r.user_id);
    w.u64(r.session);
    w.u32(r.server_protocol_version);
    return put_name(w, r.server_version, "register_reply.server_version");
}

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

void append_sync_reply(byte_buffer& body, const sync_reply& s) {
    writer w{body};
    w.u64(s.generation);
    w.u32(static_cast<std::uint32_t>(s.partitions.size()));
    for (auto p : s.partitions) w.u32(p);
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

result<void> append_g2_stream_info(writer& w, const stream_info& s) {
    w.u32(s.id);
    w.u64(s.created_at);
    w.u32(s.topics_count);
    w.u64(s.size_bytes);
    w.u64(s.messages_count);
    if (auto r = put_name(w, s.name, "stream.name"); !r) return r;
    return put_options(w, {});
}

result<stream_info> read_g2_stream_info(reader& r, std::string_view field) {
    auto s = proto::read_stream_info(r, field);
    if (!s) return s.error();
    if (auto o = skip_options(r, field_path(field, "options")); !o) return o.error();
    return s;
}

result<void> append_g2_topic_info(writer& w, const topic_info& t) {
    w.u32(t.id);
    w.u64(t.created_at);
    w.u32(t.partitions_count);
    w.u64(t.message_expiry);
    w.u8(t.compression);
    w.u64(t.max_topic_size);
    w.u64(t.size_bytes);
    w.u64(t.messages_count);
    if (auto r = put_name(w, t.name, "topic.name"); !r) return r;
    (void)put_options(w, {});
    return put_options(w, {});
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

result<void> append_stream_details(byte_buffer& body, const stream_details& s) {
    writer w{body};
    stream_info head = s.stream;
    head.topics_count = static_cast<std::uint32_t>(s.topics.size());
    if (auto r = append_g2_stream_info(w, head); !r) return r;
    for (const auto& t : s.topics)
        if (auto r = append_g2_topic_info(w, t); !r) return r;
    return {};
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

result<void> append_topic_details(byte_buffer& body, const topic_details& t) {
    writer w{body};
    topic_info head = t.topic;
    head.partitions_count = static_cast<std::uint32_t>(t.partitions.size());
    if (auto r = append_g2_topic_info(w, head); !r) return r;
    for (const auto& p : t.partitions) append_partition_info(w, p);
    return {};
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
