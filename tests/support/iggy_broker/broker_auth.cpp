// SPDX-License-Identifier: Apache-2.0
#include "iggy_broker/broker_internal.hpp"

namespace iss::broker {

// ---- clients, logins and sessions

std::uint32_t broker_state::client_id_for(std::string_view address) { return xxh32(address); }

void broker_state::add_client(std::uint32_t client_id, std::string address) {
    auto& c = s_->clients[client_id];
    c = client{};
    c.address = std::move(address);
    c.last_ping_us = s_->now_us();
    s_->sessions[client_id] = std::nullopt;
}

void broker_state::remove_client(std::uint32_t client_id) {
    s_->sessions.erase(client_id);
    expire_client(client_id);
}

void broker_state::expire_client(std::uint32_t client_id) {
    auto it = s_->clients.find(client_id);
    if (it == s_->clients.end()) return;
    auto groups = it->second.groups;
    s_->clients.erase(it);
    for (auto& [sid, tid, gid] : groups) {
        stream* s = s_->streams.get(sid);
        topic* t = s ? s->topics.get(tid) : nullptr;
        group* g = t ? t->groups.get(gid) : nullptr;
        if (g) s_->leave(*t, *g, client_id);
    }
}

bool broker_state::client_exists(std::uint32_t client_id) const { return s_->clients.count(client_id) != 0; }

res<std::uint32_t> broker_state::login_user(std::uint32_t client_id, std::string_view username,
                                            std::string_view password) {
    auto r = s_->users.login(username, password);
    if (!r.ok()) return r;
    if (auto it = s_->sessions.find(client_id); it != s_->sessions.end()) it->second = r.value;
    if (auto it = s_->clients.find(client_id); it != s_->clients.end()) it->second.user_id = r.value;
    return r;
}

res<std::uint32_t> broker_state::login_token(std::uint32_t client_id, std::string_view token) {
    auto r = s_->users.login_token(token, s_->now_us());
    if (!r.ok()) return r;
    if (auto it = s_->sessions.find(client_id); it != s_->sessions.end()) it->second = r.value;
    if (auto it = s_->clients.find(client_id); it != s_->clients.end()) it->second.user_id = r.value;
    return r;
}

res<none> broker_state::logout(std::uint32_t client_id) {
    if (auto it = s_->sessions.find(client_id); it != s_->sessions.end()) it->second.reset();
    if (auto it = s_->clients.find(client_id); it != s_->clients.end())
        it->second.user_id = std::numeric_limits<std::uint32_t>::max();
    return {};
}

bool broker_state::logged_in(std::uint32_t client_id) const { return session_user(client_id).has_value(); }

std::optional<std::uint32_t> broker_state::session_user(std::uint32_t client_id) const {
    auto it = s_->sessions.find(client_id);
    return it == s_->sessions.end() ? std::nullopt : it->second;
}

user_store& broker_state::users() { return s_->users; }
const user_store& broker_state::users() const { return s_->users; }
void broker_state::users_changed() { s_->save_meta(); }

void broker_state::logout_user_everywhere(std::uint32_t user_id) {
    for (auto& [cid, u] : s_->sessions)
        if (u == user_id) logout(cid);
}

std::optional<client_info> broker_state::get_client(std::uint32_t client_id) const {
    auto it = s_->clients.find(client_id);
    if (it == s_->clients.end()) return std::nullopt;
    return client_info{client_id, it->second.user_id, it->second.address, it->second.groups};
}

std::vector<client_info> broker_state::get_clients() const {
    std::vector<client_info> out;
    for (auto& [id, c] : s_->clients) out.push_back({id, c.user_id, c.address, c.groups});
    return out;
}

state_counts broker_state::counts() const {
    state_counts c;
    c.streams = static_cast<std::uint32_t>(s_->streams.size());
    c.clients = static_cast<std::uint32_t>(s_->clients.size());
    s_->streams.for_each([&](std::size_t, const stream& st) {
        st.topics.for_each([&](std::size_t, const topic& t) {
            ++c.topics;
            c.partitions += static_cast<std::uint32_t>(t.partitions.size());
            c.groups += static_cast<std::uint32_t>(t.groups.size());
            for (auto& p : t.partitions) {
                c.messages += p.log->count();
                c.bytes += p.log->bytes();
                c.segments += p.log->count() ? 1 : 0;
            }
        });
    });
    return c;
}

std::uint64_t broker_state::start_time_us() const { return s_->started_us; }
std::uint64_t broker_state::now_us() const { return s_->now_us(); }

std::optional<std::uint32_t> broker_state::stream_id_of(const ident& stream) const { return s_->find_stream(stream); }

std::optional<std::pair<std::uint32_t, std::uint32_t>> broker_state::topic_id_of(const ident& s, const ident& t) const {
    auto sid = s_->find_stream(s);
    if (!sid) return std::nullopt;
    auto tid = state::find_topic(*s_->streams.get(*sid), t);
    if (!tid) return std::nullopt;
    return std::pair{*sid, *tid};
}

void broker_state::ping(std::uint32_t client_id) {
    if (auto it = s_->clients.find(client_id); it != s_->clients.end()) it->second.last_ping_us = s_->now_us();
}

res<client_info> broker_state::get_me(std::uint32_t client_id) const {
    auto it = s_->clients.find(client_id);
    if (it == s_->clients.end()) return {code::client_not_found};
    return {code::ok, client_info{client_id, it->second.user_id, it->second.address, it->second.groups}};
}

}  // namespace iss::broker
