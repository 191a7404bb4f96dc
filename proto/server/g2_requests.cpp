// SPDX-License-Identifier: Apache-2.0
// The G2 request decoders of the server side (the test broker): Register and the commands by
// operation and code (docs/protocol.md §8). Target proto_server: the daemon never links it.
#include "proto/commands.hpp"
#include "proto/decoding.hpp"
#include "proto/g2_codec.hpp"
#include "proto/g2_commands.hpp"

#include <fmt/format.h>

#include <cstring>

namespace iss::proto::g2 {

using detail::no_trailing;

namespace {

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

template <class T>
result<request> same_as_g1(std::uint32_t code, bytes_view body) {
    auto g1 = proto::decode_request(code, body);
    if (!g1) return g1.error();
    if (auto* v = std::get_if<T>(&*g1)) return request{std::move(*v)};
    return iss::error{errc::unexpected_code, "request (decoded as another command)"};
}

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

}  // namespace iss::proto::g2
