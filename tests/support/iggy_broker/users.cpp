// SPDX-License-Identifier: Apache-2.0
#include "iggy_broker/users.hpp"

#include "proto/error.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <limits>

namespace iss::broker {

namespace {

namespace json = boost::json;
using proto::server_errc;

constexpr status st(server_errc e) { return static_cast<status>(e); }

// core/common/src/utils/defaults.rs and http/users/defaults.rs at server-0.8.0.
constexpr std::size_t min_username = 3, max_username = 50;
constexpr std::size_t min_password = 3, max_password = 100;
constexpr std::size_t min_token_name = 3, max_token_name = 30;
constexpr std::size_t max_tokens_per_user = 100;  // [personal_access_token] max_tokens_per_user

bool valid_status(std::uint8_t s) { return s == 1 || s == 2; }

const stream_permissions* stream_entry(const permissions& p, std::uint32_t stream) {
    for (auto& s : p.streams)
        if (s.stream_id == stream) return &s;
    return nullptr;
}
const topic_permissions* topic_entry(const stream_permissions& s, std::uint32_t topic) {
    for (auto& t : s.topics)
        if (t.topic_id == topic) return &t;
    return nullptr;
}

json::object perms_to_json(const permissions& p) {
    const auto& g = p.global;
    json::array streams;
    for (auto& s : p.streams) {
        json::array topics;
        for (auto& t : s.topics)
            topics.push_back(json::array{t.topic_id, t.manage_topic, t.read_topic, t.poll_messages, t.send_messages});
        streams.push_back(json::object{{"id", s.stream_id},
                                       {"flags", json::array{s.manage_stream, s.read_stream, s.manage_topics,
                                                             s.read_topics, s.poll_messages, s.send_messages}},
                                       {"topics", topics}});
    }
    return json::object{
        {"global", json::array{g.manage_servers, g.read_servers, g.manage_users, g.read_users, g.manage_streams,
                               g.read_streams, g.manage_topics, g.read_topics, g.poll_messages, g.send_messages}},
        {"streams", streams}};
}

permissions perms_from_json(const json::value& v) {
    permissions p;
    const auto& g = v.at("global").as_array();
    bool* gf[] = {&p.global.manage_servers, &p.global.read_servers, &p.global.manage_users,  &p.global.read_users,
                  &p.global.manage_streams, &p.global.read_streams, &p.global.manage_topics, &p.global.read_topics,
                  &p.global.poll_messages,  &p.global.send_messages};
    for (std::size_t i = 0; i < 10; ++i) *gf[i] = g.at(i).as_bool();
    for (auto& sv : v.at("streams").as_array()) {
        stream_permissions s;
        s.stream_id = json::value_to<std::uint32_t>(sv.at("id"));
        const auto& f = sv.at("flags").as_array();
        bool* sf[] = {&s.manage_stream, &s.read_stream,   &s.manage_topics,
                      &s.read_topics,   &s.poll_messages, &s.send_messages};
        for (std::size_t i = 0; i < 6; ++i) *sf[i] = f.at(i).as_bool();
        for (auto& tv : sv.at("topics").as_array()) {
            const auto& a = tv.as_array();
            s.topics.push_back({json::value_to<std::uint32_t>(a.at(0)), a.at(1).as_bool(), a.at(2).as_bool(),
                                a.at(3).as_bool(), a.at(4).as_bool()});
        }
        p.streams.push_back(std::move(s));
    }
    return p;
}

}  // namespace

permissions permissions::all() {
    permissions p;
    p.global = {true, true, true, true, true, true, true, true, true, true};
    return p;
}

user_store::user_store(std::string root_name, std::string root_password,
                       const std::vector<std::pair<std::string, std::string>>& tokens, std::uint64_t seed)
    : rng_{seed ^ 0x7573'6572'7321ULL} {
    user root;
    root.info = {0, 0, 1, std::move(root_name), permissions::all()};
    root.password = std::move(root_password);
    for (auto& [name, value] : tokens) root.tokens.push_back({name, value, 0});
    users_.insert(std::move(root));
}

user_store::user* user_store::find(const ident& id) {
    return const_cast<user*>(static_cast<const user_store*>(this)->find(id));
}
const user_store::user* user_store::find(const ident& id) const {
    if (id.numeric) return users_.get(id.id);
    const user* r = nullptr;
    users_.for_each([&](std::size_t, const user& u) {
        if (!r && u.info.username == id.name) r = &u;
    });
    return r;
}

res<std::uint32_t> user_store::login(std::string_view username, std::string_view password) const {
    if (username.size() < min_username || username.size() > max_username) return {st(server_errc::invalid_username)};
    if (password.size() < min_password || password.size() > max_password) return {st(server_errc::invalid_password)};
    const user* u = find(ident::str(std::string{username}));
    if (!u) return {st(server_errc::invalid_credentials)};
    if (u->info.status != 1) return {st(server_errc::user_inactive)};
    if (u->password != password) return {st(server_errc::invalid_credentials)};
    return {0, u->info.id};
}

res<std::uint32_t> user_store::login_token(std::string_view value, std::uint64_t now_us) const {
    const user* owner = nullptr;
    const token* tok = nullptr;
    users_.for_each([&](std::size_t, const user& u) {
        for (auto& t : u.tokens)
            if (!tok && t.value == value) {
                owner = &u;
                tok = &t;
            }
    });
    if (!tok) return {st(server_errc::resource_not_found)};
    if (tok->expiry_at != 0 && tok->expiry_at <= now_us) return {st(server_errc::personal_access_token_expired)};
    if (owner->info.status != 1) return {st(server_errc::user_inactive)};
    return {0, owner->info.id};
}

status user_store::authorize(std::uint32_t uid, action a, std::uint32_t stream, std::uint32_t topic) const {
    const user* u = users_.get(uid);
    if (!u || !u->info.perms) return st(server_errc::unauthorized);
    const permissions& p = *u->info.perms;
    const auto& g = p.global;
    const stream_permissions* s = stream_entry(p, stream);
    const topic_permissions* t = s ? topic_entry(*s, topic) : nullptr;
    bool ok = false;
    switch (a) {
        case action::get_stats: ok = g.manage_servers || g.read_servers; break;
        case action::read_users: ok = g.manage_users || g.read_users; break;
        case action::manage_users: ok = g.manage_users; break;
        case action::get_streams: ok = g.manage_streams || g.read_streams; break;
        case action::create_stream: ok = g.manage_streams; break;
        case action::get_stream:
            ok = g.manage_streams || g.read_streams || (s && (s->manage_stream || s->read_stream));
            break;
        case action::manage_stream: ok = g.manage_streams || (s && s->manage_stream); break;
        case action::get_topics:
            ok = g.read_streams || g.manage_streams || g.manage_topics || g.read_topics ||
                 (s && (s->manage_stream || s->read_stream || s->manage_topics || s->read_topics));
            break;
        case action::get_topic:
            ok = g.read_streams || g.manage_streams || g.manage_topics || g.read_topics ||
                 (s && (s->manage_stream || s->read_stream || s->manage_topics || s->read_topics)) ||
                 (t && (t->manage_topic || t->read_topic));
            break;
        case action::create_topic:
            ok = g.manage_streams || g.manage_topics || (s && (s->manage_stream || s->manage_topics));
            break;
        case action::manage_topic:
            ok = g.manage_streams || g.manage_topics || (s && (s->manage_stream || s->manage_topics)) ||
                 (t && t->manage_topic);
            break;
        case action::poll_messages:
            // Inheritance: manage_streams -> read_streams -> read_topics -> poll_messages.
            ok =
                g.poll_messages || g.read_topics || g.manage_topics || g.read_streams || g.manage_streams ||
                (s && (s->manage_stream || s->read_stream || s->manage_topics || s->read_topics || s->poll_messages)) ||
                (t && (t->manage_topic || t->read_topic || t->poll_messages));
            break;
        case action::send_messages:
            // Inheritance: manage_streams -> manage_topics -> send_messages.
            ok = g.send_messages || g.manage_streams || g.manage_topics ||
                 (s && (s->manage_stream || s->manage_topics || s->send_messages)) ||
                 (t && (t->manage_topic || t->send_messages));
            break;
    }
    return ok ? 0 : st(server_errc::unauthorized);
}

std::optional<user_info> user_store::get(const ident& id) const {
    const user* u = find(id);
    if (!u) return std::nullopt;
    return u->info;
}

std::vector<user_info> user_store::list() const {
    std::vector<user_info> out;
    users_.for_each([&](std::size_t, const user& u) { out.push_back(u.info); });
    return out;
}

res<user_info> user_store::create(std::string_view username, std::string_view password, std::uint8_t status_code,
                                  std::optional<permissions> perms, std::uint64_t now_us) {
    if (username.size() < min_username || username.size() > max_username) return {st(server_errc::invalid_username)};
    if (password.size() < min_password || password.size() > max_password) return {st(server_errc::invalid_password)};
    if (!valid_status(status_code)) return {st(server_errc::invalid_user_status)};
    if (find(ident::str(std::string{username}))) return {st(server_errc::user_already_exists)};
    user u;
    u.info = {0, now_us, status_code, std::string{username}, std::move(perms)};
    u.password = std::string{password};
    auto id = users_.insert(std::move(u));
    user& ref = *users_.get(id);
    ref.info.id = static_cast<std::uint32_t>(id);
    return {0, ref.info};
}

res<none> user_store::remove(const ident& id) {
    user* u = find(id);
    if (!u) return {st(server_errc::resource_not_found)};
    if (u->info.id == 0) return {48};  // CannotDeleteUser
    users_.remove(u->info.id);
    return {};
}

res<none> user_store::update(const ident& id, std::optional<std::string> username, std::optional<std::uint8_t> s) {
    if (username && (username->size() < min_username || username->size() > max_username))
        return {st(server_errc::invalid_username)};
    if (s && !valid_status(*s)) return {st(server_errc::invalid_user_status)};
    user* u = find(id);
    if (!u) return {st(server_errc::resource_not_found)};
    if (username && *username != u->info.username && find(ident::str(*username)))
        return {st(server_errc::user_already_exists)};
    if (username) u->info.username = std::move(*username);
    if (s) u->info.status = *s;
    return {};
}

res<none> user_store::set_permissions(const ident& id, std::optional<permissions> perms) {
    user* u = find(id);
    if (!u) return {st(server_errc::resource_not_found)};
    if (u->info.id == 0) return {49};  // CannotChangePermissions
    u->info.perms = std::move(perms);
    return {};
}

res<none> user_store::change_password(std::uint32_t caller, const ident& id, std::string_view current,
                                      std::string_view next) {
    if (current.size() < min_password || current.size() > max_password) return {st(server_errc::invalid_password)};
    if (next.size() < min_password || next.size() > max_password) return {st(server_errc::invalid_password)};
    user* u = find(id);
    if (!u) return {st(server_errc::resource_not_found)};
    if (u->info.id != caller)
        if (auto a = authorize(caller, action::manage_users)) return {a};
    if (u->password != current) return {st(server_errc::invalid_credentials)};
    u->password = std::string{next};
    return {};
}

res<std::string> user_store::create_token(std::uint32_t uid, std::string_view name, std::uint64_t expiry_us,
                                          std::uint64_t now_us) {
    if (name.size() < min_token_name || name.size() > max_token_name) return {50};  // InvalidPersonalAccessTokenName
    user* u = users_.get(uid);
    if (!u) return {st(server_errc::resource_not_found)};
    if (u->tokens.size() >= max_tokens_per_user) return {52};  // PersonalAccessTokensLimitReached
    if (std::any_of(u->tokens.begin(), u->tokens.end(), [&](const token& t) { return t.name == name; }))
        return {51};  // PersonalAccessTokenAlreadyExists
    static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    std::string value(50, '0');
    for (auto& c : value) c = alphabet[rng_() % (sizeof alphabet - 1)];
    const bool never = expiry_us == 0 || expiry_us == std::numeric_limits<std::uint64_t>::max();
    u->tokens.push_back({std::string{name}, value, never ? 0 : now_us + expiry_us});
    return {0, value};
}

res<none> user_store::delete_token(std::uint32_t uid, std::string_view name) {
    user* u = users_.get(uid);
    if (!u) return {st(server_errc::resource_not_found)};
    auto n = std::erase_if(u->tokens, [&](const token& t) { return t.name == name; });
    if (n == 0) return {st(server_errc::resource_not_found)};
    return {};
}

std::vector<token_info> user_store::tokens(std::uint32_t uid) const {
    std::vector<token_info> out;
    if (const user* u = users_.get(uid))
        for (auto& t : u->tokens) out.push_back({t.name, t.expiry_at});
    return out;
}

json::value user_store::to_json() const {
    json::array users;
    users_.for_each([&](std::size_t, const user& u) {
        json::array toks;
        for (auto& t : u.tokens)
            toks.push_back(json::object{{"name", t.name}, {"value", t.value}, {"expiry_at", t.expiry_at}});
        json::object o{{"id", u.info.id},         {"username", u.info.username},     {"password", u.password},
                       {"status", u.info.status}, {"created_at", u.info.created_at}, {"tokens", toks}};
        if (u.info.perms) o["permissions"] = perms_to_json(*u.info.perms);
        users.push_back(std::move(o));
    });
    return users;
}

std::string user_store::from_json(const json::value& v) {
    try {
        slab<user> loaded;
        for (auto& uv : v.as_array()) {
            user u;
            u.info.id = json::value_to<std::uint32_t>(uv.at("id"));
            u.info.username = json::value_to<std::string>(uv.at("username"));
            u.password = json::value_to<std::string>(uv.at("password"));
            u.info.status = json::value_to<std::uint8_t>(uv.at("status"));
            u.info.created_at = json::value_to<std::uint64_t>(uv.at("created_at"));
            if (auto* p = uv.as_object().if_contains("permissions")) u.info.perms = perms_from_json(*p);
            for (auto& tv : uv.at("tokens").as_array())
                u.tokens.push_back({json::value_to<std::string>(tv.at("name")),
                                    json::value_to<std::string>(tv.at("value")),
                                    json::value_to<std::uint64_t>(tv.at("expiry_at"))});
            auto id = u.info.id;
            loaded.insert_at(id, std::move(u));
        }
        if (!loaded.get(0)) return "no root user (ID 0)";
        users_ = std::move(loaded);
    } catch (const std::exception& e) {
        return std::string{"users: "} + e.what();
    }
    return {};
}

}  // namespace iss::broker
