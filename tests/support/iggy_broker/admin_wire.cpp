// SPDX-License-Identifier: Apache-2.0
#include "iggy_broker/admin_wire.hpp"

#include "proto/message.hpp"

#include <cstring>

namespace iss::broker::admin {

namespace {

using proto::reader;
using proto::writer;

#define ISS_TRY(var, expr) \
    auto var = (expr);     \
    if (!var) return var.error()

iss::error trailing(std::string_view cmd) {
    return iss::error{proto::errc::invalid_length, std::string{cmd} + ": trailing bytes"};
}

result<bool> flag(reader& r, std::string_view field) {
    auto b = r.u8(field);
    if (!b) return b.error();
    return *b != 0;
}

result<std::string> u8_secret(reader& r, std::string_view field) {
    // Passwords: u8 length then bytes; the server reads them as UTF-8 strings.
    auto t = r.u8_text(field);
    if (!t) return t.error();
    return std::string{*t};
}

result<std::optional<permissions>> optional_permissions(reader& r) {
    ISS_TRY(has, r.u8("has_permissions"));
    if (*has != 1) return std::optional<permissions>{};
    ISS_TRY(len, r.u32("permissions.length"));
    ISS_TRY(block, r.bytes(*len, "permissions"));
    reader pr{*block};
    ISS_TRY(p, read_permissions(pr));
    if (pr.remaining() != 0)
        return iss::error{proto::errc::inconsistent, "permissions: length does not match the block"};
    return std::optional<permissions>{std::move(*p)};
}

void put_u32_text(writer& w, std::string_view s) {
    w.u32(static_cast<std::uint32_t>(s.size()));
    w.text(s);
}
void put_name(writer& w, std::string_view s) {
    w.u8(static_cast<std::uint8_t>(s.size()));
    w.text(s.substr(0, 255));
}
void put_f32(writer& w, float f) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &f, sizeof bits);
    w.u32(bits);
}

}  // namespace

bool is_admin_code(std::uint32_t c) noexcept {
    switch (c) {
        case code::get_stats:
        case code::get_cluster_metadata:
        case code::get_client:
        case code::get_clients:
        case code::get_user:
        case code::get_users:
        case code::create_user:
        case code::delete_user:
        case code::update_user:
        case code::update_permissions:
        case code::change_password:
        case code::get_tokens:
        case code::create_token:
        case code::delete_token:
        case code::update_stream:
        case code::purge_stream:
        case code::update_topic:
        case code::purge_topic: return true;
        default: return false;
    }
}

void append_permissions(writer& w, const permissions& p) {
    const auto& g = p.global;
    for (bool b : {g.manage_servers, g.read_servers, g.manage_users, g.read_users, g.manage_streams, g.read_streams,
                   g.manage_topics, g.read_topics, g.poll_messages, g.send_messages})
        w.u8(b ? 1 : 0);
    w.u8(p.streams.empty() ? 0 : 1);
    for (std::size_t i = 0; i < p.streams.size(); ++i) {
        const auto& s = p.streams[i];
        w.u32(s.stream_id);
        for (bool b :
             {s.manage_stream, s.read_stream, s.manage_topics, s.read_topics, s.poll_messages, s.send_messages})
            w.u8(b ? 1 : 0);
        w.u8(s.topics.empty() ? 0 : 1);
        for (std::size_t j = 0; j < s.topics.size(); ++j) {
            const auto& t = s.topics[j];
            w.u32(t.topic_id);
            for (bool b : {t.manage_topic, t.read_topic, t.poll_messages, t.send_messages}) w.u8(b ? 1 : 0);
            w.u8(j + 1 < s.topics.size() ? 1 : 0);
        }
        w.u8(i + 1 < p.streams.size() ? 1 : 0);
    }
}

result<permissions> read_permissions(reader& r) {
    permissions p;
    auto& g = p.global;
    for (bool* b : {&g.manage_servers, &g.read_servers, &g.manage_users, &g.read_users, &g.manage_streams,
                    &g.read_streams, &g.manage_topics, &g.read_topics, &g.poll_messages, &g.send_messages}) {
        ISS_TRY(v, flag(r, "permissions.global"));
        *b = *v;
    }
    ISS_TRY(has_streams, flag(r, "permissions.has_streams"));
    for (bool more = *has_streams; more;) {
        stream_permissions s;
        ISS_TRY(sid, r.u32("permissions.streams.stream_id"));
        s.stream_id = *sid;
        for (bool* b :
             {&s.manage_stream, &s.read_stream, &s.manage_topics, &s.read_topics, &s.poll_messages, &s.send_messages}) {
            ISS_TRY(v, flag(r, "permissions.streams.flags"));
            *b = *v;
        }
        ISS_TRY(has_topics, flag(r, "permissions.streams.has_topics"));
        for (bool tmore = *has_topics; tmore;) {
            topic_permissions t;
            ISS_TRY(tid, r.u32("permissions.streams.topics.topic_id"));
            t.topic_id = *tid;
            for (bool* b : {&t.manage_topic, &t.read_topic, &t.poll_messages, &t.send_messages}) {
                ISS_TRY(v, flag(r, "permissions.streams.topics.flags"));
                *b = *v;
            }
            s.topics.push_back(t);
            ISS_TRY(next, flag(r, "permissions.streams.topics.has_next"));
            tmore = *next;
        }
        p.streams.push_back(std::move(s));
        ISS_TRY(next, flag(r, "permissions.streams.has_next"));
        more = *next;
    }
    return p;
}

result<create_user_request> decode_create_user(proto::bytes_view payload, bool options_tail) {
    reader r{payload};
    ISS_TRY(name, r.name("username"));
    ISS_TRY(pw, u8_secret(r, "password"));
    ISS_TRY(st, r.u8("status"));
    ISS_TRY(perms, optional_permissions(r));
    if (options_tail) {
        ISS_TRY(opts, r.bytes(r.remaining(), "options"));
        ISS_TRY(checked, proto::validate_user_headers(*opts));
        (void)checked;
    } else if (r.remaining() != 0) {
        return trailing("CreateUser");
    }
    return create_user_request{std::string{*name}, std::move(*pw), *st, std::move(*perms)};
}

result<request> decode_request(std::uint32_t c, proto::bytes_view payload) {
    reader r{payload};
    auto done = [&](request q, std::string_view cmd) -> result<request> {
        if (r.remaining() != 0) return trailing(cmd);
        return q;
    };
    switch (c) {
        case code::get_stats: return done(get_stats_request{}, "GetStats");
        case code::get_cluster_metadata: return done(get_cluster_metadata_request{}, "GetClusterMetadata");
        case code::get_clients: return done(get_clients_request{}, "GetClients");
        case code::get_users: return done(get_users_request{}, "GetUsers");
        case code::get_tokens: return done(get_tokens_request{}, "GetPersonalAccessTokens");
        case code::get_client: {
            ISS_TRY(id, r.u32("client_id"));
            return done(get_client_request{*id}, "GetClient");
        }
        case code::get_user:
        case code::delete_user: {
            ISS_TRY(id, proto::read_identifier(r, "user_id"));
            if (c == code::get_user) return done(get_user_request{*id}, "GetUser");
            return done(delete_user_request{*id}, "DeleteUser");
        }
        case code::create_user: {
            ISS_TRY(q, decode_create_user(payload, false));
            return request{std::move(*q)};
        }
        case code::update_user: {
            update_user_request q;
            ISS_TRY(id, proto::read_identifier(r, "user_id"));
            q.user = *id;
            ISS_TRY(has_name, r.u8("has_username"));
            if (*has_name == 1) {
                ISS_TRY(name, r.name("username"));
                q.username = std::string{*name};
            }
            ISS_TRY(has_status, r.u8("has_status"));
            if (*has_status == 1) {
                ISS_TRY(st, r.u8("status"));
                q.status = *st;
            }
            return done(std::move(q), "UpdateUser");
        }
        case code::update_permissions: {
            ISS_TRY(id, proto::read_identifier(r, "user_id"));
            ISS_TRY(perms, optional_permissions(r));
            return done(update_permissions_request{*id, std::move(*perms)}, "UpdatePermissions");
        }
        case code::change_password: {
            ISS_TRY(id, proto::read_identifier(r, "user_id"));
            ISS_TRY(cur, u8_secret(r, "current_password"));
            ISS_TRY(next, u8_secret(r, "new_password"));
            return done(change_password_request{*id, std::move(*cur), std::move(*next)}, "ChangePassword");
        }
        case code::create_token: {
            ISS_TRY(name, r.name("name"));
            ISS_TRY(expiry, r.u64("expiry"));
            return done(create_token_request{std::string{*name}, *expiry}, "CreatePersonalAccessToken");
        }
        case code::delete_token: {
            ISS_TRY(name, r.name("name"));
            return done(delete_token_request{std::string{*name}}, "DeletePersonalAccessToken");
        }
        case code::update_stream: {
            ISS_TRY(id, proto::read_identifier(r, "stream_id"));
            ISS_TRY(name, r.name("name"));
            return done(update_stream_request{*id, std::string{*name}}, "UpdateStream");
        }
        case code::purge_stream: {
            ISS_TRY(id, proto::read_identifier(r, "stream_id"));
            return done(purge_stream_request{*id}, "PurgeStream");
        }
        case code::update_topic: {
            update_topic_request q;
            ISS_TRY(s, proto::read_identifier(r, "stream_id"));
            ISS_TRY(t, proto::read_identifier(r, "topic_id"));
            ISS_TRY(comp, r.u8("compression_algorithm"));
            ISS_TRY(exp, r.u64("message_expiry"));
            ISS_TRY(max, r.u64("max_topic_size"));
            ISS_TRY(rf, r.u8("replication_factor"));
            ISS_TRY(name, r.name("name"));
            q.stream = *s;
            q.topic = *t;
            q.compression = *comp;
            q.message_expiry = *exp;
            q.max_topic_size = *max;
            q.replication_factor = *rf;
            q.name = std::string{*name};
            return done(std::move(q), "UpdateTopic");
        }
        case code::purge_topic: {
            ISS_TRY(s, proto::read_identifier(r, "stream_id"));
            ISS_TRY(t, proto::read_identifier(r, "topic_id"));
            return done(purge_topic_request{*s, *t}, "PurgeTopic");
        }
        default: return iss::error{proto::errc::unexpected_code, "admin command " + std::to_string(c)};
    }
}

void append_user_details(writer& w, const user_info& u, bool g2_options) {
    w.u32(u.id);
    w.u64(u.created_at);
    w.u8(u.status);
    put_name(w, u.username);
    if (g2_options) w.u32(0);  // options: none
    if (!u.perms) {
        w.u32(0);
        return;
    }
    w.u8(1);
    const auto at = w.skip(4);
    const auto start = at + 4;
    append_permissions(w, *u.perms);
    w.patch_u32(at, static_cast<std::uint32_t>(w.size() - start));
}

void append_users(writer& w, const std::vector<user_info>& users) {
    for (auto& u : users) {
        w.u32(u.id);
        w.u64(u.created_at);
        w.u8(u.status);
        put_name(w, u.username);
    }
}

void append_raw_token(writer& w, std::string_view token) { put_name(w, token); }

void append_tokens(writer& w, const std::vector<token_info>& tokens) {
    for (auto& t : tokens) {
        put_name(w, t.name);
        w.u64(t.expiry_at);
    }
}

void append_clients(writer& w, const std::vector<proto::client_details>& clients) {
    for (auto& c : clients) {
        w.u32(c.client_id);
        w.u32(c.user_id);
        w.u8(c.transport);
        put_u32_text(w, c.address);
        w.u32(static_cast<std::uint32_t>(c.consumer_groups.size()));
    }
}

void append_stats(writer& w, const stats& s) {
    w.u32(s.process_id);
    put_f32(w, s.cpu_usage);
    put_f32(w, s.total_cpu_usage);
    for (auto v : {s.memory_usage, s.total_memory, s.available_memory, s.run_time, s.start_time, s.read_bytes,
                   s.written_bytes, s.messages_size_bytes})
        w.u64(v);
    w.u32(s.streams_count);
    w.u32(s.topics_count);
    w.u32(s.partitions_count);
    w.u32(s.segments_count);
    w.u64(s.messages_count);
    w.u32(s.clients_count);
    w.u32(s.consumer_groups_count);
    for (auto* t : {&s.hostname, &s.os_name, &s.os_version, &s.kernel_version, &s.server_version}) put_u32_text(w, *t);
    w.u32(s.server_semver);
    w.u32(0);  // cache_metrics: none
    w.u32(s.threads_count);
    w.u64(s.free_disk_space);
    w.u64(s.total_disk_space);
}

void append_cluster_metadata(writer& w, std::string_view name, const std::vector<cluster_node>& nodes) {
    put_u32_text(w, name);
    w.u32(static_cast<std::uint32_t>(nodes.size()));
    for (auto& n : nodes) {
        put_u32_text(w, n.name);
        put_u32_text(w, n.ip);
        w.u16(n.tcp);
        w.u16(n.quic);
        w.u16(n.http);
        w.u16(n.websocket);
        w.u8(n.role);
        w.u8(n.status);
    }
}

#undef ISS_TRY

}  // namespace iss::broker::admin
