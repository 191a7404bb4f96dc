// SPDX-License-Identifier: Apache-2.0
#include "iggy_broker/admin_handler.hpp"

#include "iggy_broker/users.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <variant>

namespace iss::broker {

namespace {

template <class... F>
struct overloaded : F... {
    using F::operator()...;
};
template <class... F>
overloaded(F...) -> overloaded<F...>;

ident to_ident(const proto::identifier& id) {
    return id.is_numeric() ? ident::num(id.number()) : ident::str(id.name());
}

proto::client_details to_details(const client_info& c) {
    proto::client_details d{c.client_id, c.user_id, 1, c.address, {}};
    for (auto& g : c.groups) d.consumer_groups.push_back({g[0], g[1], g[2]});
    return d;
}

admin::stats make_stats(const broker_state& state) {
    admin::stats s;
    const auto c = state.counts();
    s.process_id = static_cast<std::uint32_t>(::getpid());
    s.streams_count = c.streams;
    s.topics_count = c.topics;
    s.partitions_count = c.partitions;
    s.segments_count = c.segments;
    s.messages_count = c.messages;
    s.messages_size_bytes = c.bytes;
    s.clients_count = c.clients;
    s.consumer_groups_count = c.groups;
    s.start_time = state.start_time_us();
    const auto now = state.now_us();
    s.run_time = now > s.start_time ? now - s.start_time : 0;
    const long pages = ::sysconf(_SC_PHYS_PAGES), avail = ::sysconf(_SC_AVPHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) s.total_memory = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
    if (avail > 0 && page > 0)
        s.available_memory = static_cast<std::uint64_t>(avail) * static_cast<std::uint64_t>(page);
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) == 0) s.hostname = host;
    utsname u{};
    if (::uname(&u) == 0) {
        s.os_name = u.sysname;
        s.os_version = u.version;
        s.kernel_version = u.release;
    }
    return s;
}

}  // namespace

std::uint32_t authorize(const broker_state& state, std::uint32_t client_id, action a, const ident* stream,
                        const ident* topic) {
    auto user = state.session_user(client_id);
    if (!user) return 0;
    std::uint32_t sid = 0, tid = 0;
    if (stream && topic) {
        auto ids = state.topic_id_of(*stream, *topic);
        if (!ids) return 0;
        sid = ids->first;
        tid = ids->second;
    } else if (stream) {
        auto id = state.stream_id_of(*stream);
        if (!id) return 0;
        sid = *id;
    }
    return state.users().authorize(*user, a, sid, tid);
}

admin_reply handle_admin(broker_state& state, std::uint32_t client_id, const admin::request& req,
                         const node_endpoints& node) {
    admin_reply out;
    proto::writer w{out.payload};
    const std::uint32_t me = state.session_user(client_id).value_or(0);
    user_store& users = state.users();
    auto fail = [&](std::uint32_t st) {
        out.status = st;
        out.payload.clear();
    };
    auto now_us = [&] { return state.now_us(); };
    std::visit(overloaded{
                   [&](const admin::get_stats_request&) {
                       if (auto a = users.authorize(me, action::get_stats)) return fail(a);
                       admin::append_stats(w, make_stats(state));
                   },
                   [&](const admin::get_cluster_metadata_request&) {
                       // 0.8.0 with [cluster] enabled = false: "single-node", one node "iggy-node",
                       // the TCP listener's IP, the bound ports, Leader, Healthy.
                       admin::append_cluster_metadata(
                           w, "single-node",
                           {{"iggy-node", node.ip, node.tcp, node.quic, node.http, node.websocket, 0, 0}});
                   },
                   [&](const admin::get_client_request& q) {
                       if (auto a = users.authorize(me, action::get_stats)) return fail(a);
                       if (q.client_id == 0) return fail(101);  // InvalidClientId
                       if (auto c = state.get_client(q.client_id)) proto::append_client_details(w, to_details(*c));
                   },
                   [&](const admin::get_clients_request&) {
                       if (auto a = users.authorize(me, action::get_stats)) return fail(a);
                       std::vector<proto::client_details> v;
                       for (auto& c : state.get_clients()) v.push_back(to_details(c));
                       admin::append_clients(w, v);
                   },
                   [&](const admin::get_user_request& q) {
                       if (auto a = users.authorize(me, action::read_users)) return fail(a);
                       if (auto u = users.get(to_ident(q.user))) admin::append_user_details(w, *u);
                   },
                   [&](const admin::get_users_request&) {
                       if (auto a = users.authorize(me, action::read_users)) return fail(a);
                       admin::append_users(w, users.list());
                   },
                   [&](const admin::create_user_request& q) {
                       if (auto a = users.authorize(me, action::manage_users)) return fail(a);
                       auto r = users.create(q.username, q.password, q.status, q.perms, now_us());
                       if (!r.ok()) return fail(r.code);
                       state.users_changed();
                       admin::append_user_details(w, r.value);
                   },
                   [&](const admin::delete_user_request& q) {
                       if (auto a = users.authorize(me, action::manage_users)) return fail(a);
                       auto target = users.get(to_ident(q.user));
                       auto r = users.remove(to_ident(q.user));
                       if (!r.ok()) return fail(r.code);
                       state.logout_user_everywhere(target->id);
                       state.users_changed();
                   },
                   [&](const admin::update_user_request& q) {
                       if (auto a = users.authorize(me, action::manage_users)) return fail(a);
                       auto r = users.update(to_ident(q.user), q.username, q.status);
                       if (!r.ok()) return fail(r.code);
                       state.users_changed();
                   },
                   [&](const admin::update_permissions_request& q) {
                       if (auto a = users.authorize(me, action::manage_users)) return fail(a);
                       auto r = users.set_permissions(to_ident(q.user), q.perms);
                       if (!r.ok()) return fail(r.code);
                       state.users_changed();
                   },
                   [&](const admin::change_password_request& q) {
                       auto r = users.change_password(me, to_ident(q.user), q.current_password, q.new_password);
                       if (!r.ok()) return fail(r.code);
                       state.users_changed();
                   },
                   [&](const admin::get_tokens_request&) { admin::append_tokens(w, users.tokens(me)); },
                   [&](const admin::create_token_request& q) {
                       auto r = users.create_token(me, q.name, q.expiry, now_us());
                       if (!r.ok()) return fail(r.code);
                       state.users_changed();
                       admin::append_raw_token(w, r.value);
                   },
                   [&](const admin::delete_token_request& q) {
                       auto r = users.delete_token(me, q.name);
                       if (!r.ok()) return fail(r.code);
                       state.users_changed();
                   },
                   [&](const admin::update_stream_request& q) {
                       const ident s = to_ident(q.stream);
                       if (!state.stream_id_of(s)) return fail(code::stream_id_not_found);
                       if (auto a = authorize(state, client_id, action::manage_stream, &s)) return fail(a);
                       if (auto r = state.update_stream(s, q.name); !r.ok()) fail(r.code);
                   },
                   [&](const admin::purge_stream_request& q) {
                       const ident s = to_ident(q.stream);
                       if (!state.stream_id_of(s)) return fail(code::stream_id_not_found);
                       if (auto a = authorize(state, client_id, action::manage_stream, &s)) return fail(a);
                       if (auto r = state.purge_stream(s); !r.ok()) fail(r.code);
                   },
                   [&](const admin::update_topic_request& q) {
                       const ident s = to_ident(q.stream), t = to_ident(q.topic);
                       if (auto a = authorize(state, client_id, action::manage_topic, &s, &t)) return fail(a);
                       auto r = state.update_topic(s, t, q.compression, q.message_expiry, q.max_topic_size,
                                                   q.replication_factor, q.name);
                       if (!r.ok()) fail(r.code);
                   },
                   [&](const admin::purge_topic_request& q) {
                       const ident s = to_ident(q.stream), t = to_ident(q.topic);
                       if (auto a = authorize(state, client_id, action::manage_topic, &s, &t)) return fail(a);
                       if (auto r = state.purge_topic(s, t); !r.ok()) fail(r.code);
                   },
               },
               req);
    return out;
}

}  // namespace iss::broker
