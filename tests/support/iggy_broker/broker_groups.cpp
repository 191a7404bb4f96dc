// SPDX-License-Identifier: Apache-2.0
#include "iggy_broker/broker_internal.hpp"

namespace iss::broker {

// ---- consumer groups

res<group_info> broker_state::create_group(const ident& s, const ident& t, std::string_view name) {
    stream* so = nullptr;
    topic* to = nullptr;
    if (auto st = s_->resolve(s, t, so, to)) return {st};
    if (name.empty() || name.size() > 255) return {code::invalid_format};
    if (state::find_group(*to, ident::str(std::string{name}))) return {code::consumer_group_name_already_exists};
    group g;
    g.name = std::string{name};
    for (std::uint32_t i = 0; i < to->partitions.size(); ++i) g.partitions.push_back(i);
    auto id = to->groups.insert(std::move(g));
    group& ref = *to->groups.get(id);
    ref.id = static_cast<std::uint32_t>(id);
    s_->save_meta();
    return {code::ok, state::grp_info(ref)};
}

std::optional<group_info> broker_state::get_group(const ident& s, const ident& t, const ident& g) const {
    const topic* to = s_->lookup_topic(s, t);
    if (!to) return std::nullopt;
    auto gid = state::find_group(*to, g);
    if (!gid) return std::nullopt;
    return state::grp_info(*to->groups.get(*gid));
}

std::optional<std::vector<std::uint32_t>> broker_state::member_partitions(std::uint32_t client_id, const ident& s,
                                                                          const ident& t, const ident& g) const {
    const topic* to = s_->lookup_topic(s, t);
    if (!to) return std::nullopt;
    auto gid = state::find_group(*to, g);
    if (!gid) return std::nullopt;
    std::optional<std::vector<std::uint32_t>> out;
    to->groups.get(*gid)->members.for_each([&](std::size_t, const member& m) {
        if (out || m.client != client_id) return;
        out.emplace();
        for (auto p : m.partitions)
            if (!m.is_pending(p)) out->push_back(p);
    });
    return out;
}

std::vector<group_info> broker_state::get_groups(const ident& s, const ident& t) const {
    std::vector<group_info> out;
    const topic* to = s_->lookup_topic(s, t);
    if (to) to->groups.for_each([&](std::size_t, const group& g) { out.push_back(state::grp_info(g)); });
    return out;
}

res<none> broker_state::delete_group(const ident& s, const ident& t, const ident& g) {
    stream* so = nullptr;
    topic* to = nullptr;
    if (auto st = s_->resolve(s, t, so, to)) return {st};
    auto gid = state::find_group(*to, g);
    if (!gid) return {code::consumer_group_id_not_found};
    to->groups.remove(*gid);
    for (auto& p : to->partitions) {
        p.group_offsets.erase(*gid);
        p.last_polled.erase(*gid);
    }
    for (auto& [id, c] : s_->clients) std::erase(c.groups, std::array<std::uint32_t, 3>{so->id, to->id, *gid});
    s_->save_meta();
    return {};
}

res<none> broker_state::join_group(std::uint32_t client_id, const ident& s, const ident& t, const ident& gident) {
    stream* so = nullptr;
    topic* to = nullptr;
    if (auto st = s_->resolve(s, t, so, to)) return {st};
    auto gid = state::find_group(*to, gident);
    if (!gid) return {code::consumer_group_id_not_found};
    if (!s_->clients.count(client_id)) return {code::stale_client};
    group& g = *to->groups.get(*gid);
    // 1. Members whose client no longer exists are dropped (no rebalance of their own).
    std::vector<std::size_t> stale;
    g.members.for_each([&](std::size_t k, const member& m) {
        if (!s_->clients.count(m.client)) stale.push_back(k);
    });
    for (auto k : stale) g.members.remove(k);
    // 2. A new member gets the highest member id + 1 and a cooperative rebalance.
    bool present = false;
    std::uint32_t next_id = 0;
    g.members.for_each([&](std::size_t, const member& m) {
        present = present || m.client == client_id;
        next_id = std::max(next_id, m.id + 1);
    });
    if (!present) {
        member m;
        m.id = next_id;
        m.client = client_id;
        g.members.insert(std::move(m));
        s_->rebalance_cooperative(g);
        s_->membership_changed(*to, g, client_id, "joined");
    }
    // 3. Every pending revocation of the group that can complete now does.
    struct due {
        std::size_t slot;
        std::uint32_t member_id;
        std::uint32_t partition;
    };
    std::vector<due> done;
    g.members.for_each([&](std::size_t k, const member& m) {
        for (auto& r : m.pending)
            if (state::completable(*to, g.id, r.partition)) done.push_back({k, m.id, r.partition});
    });
    for (auto& d : done) state::complete_revocation(g, d.slot, d.member_id, d.partition);
    // 4. A joiner left with nothing while a gone client still holds partitions: that one leaves.
    std::optional<std::size_t> me;
    g.members.for_each([&](std::size_t k, const member& m) {
        if (!me && m.client == client_id) me = k;
    });
    if (me && g.members.get(*me)->partitions.empty() && !g.partitions.empty()) {
        std::vector<std::uint32_t> gone;
        g.members.for_each([&](std::size_t, const member& m) {
            if (!m.partitions.empty() && !s_->clients.count(m.client)) gone.push_back(m.client);
        });
        for (auto cid : gone) s_->leave(*to, g, cid);
    }
    auto& groups = s_->clients[client_id].groups;
    std::array<std::uint32_t, 3> key{so->id, to->id, g.id};
    if (std::find(groups.begin(), groups.end(), key) == groups.end()) groups.push_back(key);
    return {};
}

res<none> broker_state::leave_group(std::uint32_t client_id, const ident& s, const ident& t, const ident& gident) {
    stream* so = nullptr;
    topic* to = nullptr;
    if (auto st = s_->resolve(s, t, so, to)) return {st};
    auto gid = state::find_group(*to, gident);
    if (!gid) return {code::consumer_group_id_not_found};
    group& g = *to->groups.get(*gid);
    if (!s_->leave(*to, g, client_id)) return {code::consumer_group_member_not_found};
    s_->forget_group_of_client(client_id, so->id, to->id, g.id);
    return {};
}

std::vector<std::uint32_t> broker_state::tick() {
    const std::uint64_t now = s_->now_us();
    const auto timeout = static_cast<std::uint64_t>(s_->opts.rebalance_timeout.count());
    struct due {
        topic* t;
        group* g;
        std::size_t slot;
        std::uint32_t member_id;
        std::uint32_t partition;
    };
    std::vector<due> timed_out;
    s_->streams.for_each([&](std::size_t, stream& s) {
        s.topics.for_each([&](std::size_t, topic& t) {
            t.groups.for_each([&](std::size_t, group& g) {
                g.members.for_each([&](std::size_t k, member& m) {
                    for (auto& r : m.pending)
                        if (now >= r.created_us && now - r.created_us >= timeout)
                            timed_out.push_back({&t, &g, k, m.id, r.partition});
                });
            });
        });
    });
    for (auto& d : timed_out) state::complete_revocation(*d.g, d.slot, d.member_id, d.partition);

    std::vector<std::uint32_t> removed;
    if (s_->opts.heartbeat.count() > 0) {
        const auto limit = static_cast<std::uint64_t>(s_->opts.heartbeat.count()) * 6 / 5;
        for (auto& [id, c] : s_->clients)
            if (now > c.last_ping_us && now - c.last_ping_us > limit) removed.push_back(id);
        for (auto id : removed) expire_client(id);
    }
    return removed;
}

std::vector<std::uint32_t> broker_state::expire_group_members() {
    std::vector<std::uint32_t> members;
    for (auto& [id, c] : s_->clients)
        if (!c.groups.empty()) members.push_back(id);
    for (auto id : members) expire_client(id);
    return members;
}

std::size_t broker_state::drop_group_memberships() {
    std::size_t dropped = 0;
    for (auto& [id, c] : s_->clients) {
        for (auto& [sid, tid, gid] : c.groups) {
            stream* s = s_->streams.get(sid);
            topic* t = s ? s->topics.get(tid) : nullptr;
            group* g = t ? t->groups.get(gid) : nullptr;
            if (g && s_->leave(*t, *g, id)) ++dropped;
        }
        c.groups.clear();
    }
    return dropped;
}

std::uint64_t broker_state::total_messages() const {
    std::uint64_t n = 0;
    s_->streams.for_each([&](std::size_t, const stream& s) {
        s.topics.for_each([&](std::size_t, const topic& t) {
            for (auto& p : t.partitions) n += p.log->count();
        });
    });
    return n;
}

}  // namespace iss::broker
