// SPDX-License-Identifier: Apache-2.0
#pragma once
// The test broker's internal state, shared by the files that implement `broker_state`
// (broker_state.cpp: streams, topics, messages; broker_auth.cpp: clients and logins;
// broker_offsets.cpp; broker_groups.cpp; broker_persistence.cpp: the --data files).
// Not for use outside tests/support/iggy_broker.

#include "iggy_broker/broker_state.hpp"
#include "iggy_broker/users.hpp"
#include "proto/wire.hpp"

#include <boost/json.hpp>

#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <unordered_map>

namespace iss::broker {

namespace detail {

inline constexpr std::size_t header_size = 64;
inline constexpr std::uint64_t u64_max = ~std::uint64_t{0};
inline constexpr std::uint64_t segment_size_default = 1ull << 30;  // [system.segment] size = 1 GiB
inline constexpr std::size_t max_user_headers = 100'000;
inline constexpr std::size_t max_payload = 64'000'000;

inline std::uint32_t xxh32(std::string_view s) { return XXH32(s.data(), s.size(), 0); }

struct revocation {
    std::uint32_t partition;
    std::size_t target_slot;
    std::uint32_t target_member_id;
    std::uint64_t created_us;
};

struct member {
    std::uint32_t id = 0;
    std::uint32_t client = 0;
    std::vector<std::uint32_t> partitions;
    std::size_t cursor = 0;
    std::vector<revocation> pending;

    [[nodiscard]] bool is_pending(std::uint32_t p) const {
        return std::any_of(pending.begin(), pending.end(), [&](const revocation& r) { return r.partition == p; });
    }
    [[nodiscard]] bool owns(std::uint32_t p) const {
        return std::find(partitions.begin(), partitions.end(), p) != partitions.end();
    }
};

struct group {
    std::uint32_t id = 0;
    std::string name;
    std::vector<std::uint32_t> partitions;
    slab<member> members;
};

struct partition {
    std::uint64_t created_at = 0;
    std::shared_ptr<partition_log> log = std::make_shared<partition_log>();
    std::map<std::uint32_t, std::uint64_t> consumer_offsets;  // key: numeric id or XXH32(name)
    std::map<std::uint32_t, std::uint64_t> group_offsets;     // key: group id
    std::map<std::uint32_t, std::uint64_t> last_polled;       // key: group id
    std::FILE* file = nullptr;                                // append log under --data

    partition() = default;
    partition(partition&& o) noexcept { *this = std::move(o); }
    partition& operator=(partition&& o) noexcept {
        if (this != &o) {
            close();
            created_at = o.created_at;
            log = std::move(o.log);
            consumer_offsets = std::move(o.consumer_offsets);
            group_offsets = std::move(o.group_offsets);
            last_polled = std::move(o.last_polled);
            file = std::exchange(o.file, nullptr);
        }
        return *this;
    }
    ~partition() { close(); }
    void close() {
        if (file) std::fclose(file);
        file = nullptr;
    }
    [[nodiscard]] std::uint64_t current_offset() const { return log->count() ? log->count() - 1 : 0; }
};

struct topic {
    std::uint32_t id = 0;
    std::string name;
    std::uint64_t created_at = 0;
    std::uint8_t compression = 1;
    std::uint64_t message_expiry = u64_max;
    std::uint64_t max_topic_size = u64_max;
    std::uint8_t replication_factor = 1;
    std::vector<partition> partitions;
    slab<group> groups;
    std::uint64_t balanced_counter = 0;
};

struct stream {
    std::uint32_t id = 0;
    std::string name;
    std::uint64_t created_at = 0;
    slab<topic> topics;
};

struct client {
    std::string address;
    std::uint32_t user_id = std::numeric_limits<std::uint32_t>::max();  // none yet
    std::vector<std::array<std::uint32_t, 3>> groups;
    std::uint64_t last_ping_us = 0;
};

/// The log's bytes as proto's byte pointer (for `proto::load_le` / `store_le`).
inline std::byte* wire(std::uint8_t* p) noexcept { return reinterpret_cast<std::byte*>(p); }
inline const std::byte* wire(const std::uint8_t* p) noexcept { return reinterpret_cast<const std::byte*>(p); }

}  // namespace detail

using namespace detail;

// ---------------------------------------------------------------------------- state

struct broker_state::state {
    broker_options opts;
    const iss::clock* clk;
    std::mt19937_64 rng;
    slab<stream> streams;
    std::map<std::uint32_t, client> clients;  // the server's client table (heartbeat removes)
    // Per open connection: the logged-in user (kept on expiry).
    std::map<std::uint32_t, std::optional<std::uint32_t>> sessions;
    user_store users;
    std::uint64_t started_us = 0;

    explicit state(broker_options o)
        : opts{std::move(o)},
          clk{opts.clock ? opts.clock : &real_clock::instance()},
          rng{opts.seed},
          users{opts.username, opts.password, opts.tokens, opts.seed} {
        started_us = now_us();
    }

    std::uint64_t now_us() const {
        return static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::microseconds>(clk->system_now().time_since_epoch()).count());
    }

    // ---- lookups
    std::optional<std::uint32_t> find_stream(const ident& id) const {
        if (id.numeric) return streams.get(id.id) ? std::optional{id.id} : std::nullopt;
        std::optional<std::uint32_t> r;
        streams.for_each([&](std::size_t k, const stream& s) {
            if (!r && s.name == id.name) r = static_cast<std::uint32_t>(k);
        });
        return r;
    }
    static std::optional<std::uint32_t> find_topic(const stream& s, const ident& id) {
        if (id.numeric) return s.topics.get(id.id) ? std::optional{id.id} : std::nullopt;
        std::optional<std::uint32_t> r;
        s.topics.for_each([&](std::size_t k, const topic& t) {
            if (!r && t.name == id.name) r = static_cast<std::uint32_t>(k);
        });
        return r;
    }
    static std::optional<std::uint32_t> find_group(const topic& t, const ident& id) {
        if (id.numeric) return t.groups.get(id.id) ? std::optional{id.id} : std::nullopt;
        std::optional<std::uint32_t> r;
        t.groups.for_each([&](std::size_t k, const group& g) {
            if (!r && g.name == id.name) r = static_cast<std::uint32_t>(k);
        });
        return r;
    }
    // stream + topic, or 1009 / 2010
    status resolve(const ident& s, const ident& t, stream*& so, topic*& to) {
        auto sid = find_stream(s);
        if (!sid) return code::stream_id_not_found;
        so = streams.get(*sid);
        auto tid = find_topic(*so, t);
        if (!tid) return code::topic_id_not_found;
        to = so->topics.get(*tid);
        return code::ok;
    }
    const topic* lookup_topic(const ident& s, const ident& t) const {
        auto sid = find_stream(s);
        if (!sid) return nullptr;
        const stream* so = streams.get(*sid);
        auto tid = find_topic(*so, t);
        return tid ? so->topics.get(*tid) : nullptr;
    }

    // ---- records
    static partition_info part_info(const partition& p, std::uint32_t id) {
        return {id, p.created_at, p.log->count() ? 1u : 0u, p.current_offset(), p.log->bytes(), p.log->count()};
    }
    static topic_info top_info(const topic& t, bool with_partitions) {
        topic_info i{t.id,
                     t.created_at,
                     static_cast<std::uint32_t>(t.partitions.size()),
                     t.message_expiry,
                     t.compression,
                     t.max_topic_size,
                     t.replication_factor,
                     0,
                     0,
                     t.name,
                     {}};
        for (std::uint32_t p = 0; p < t.partitions.size(); ++p) {
            i.size_bytes += t.partitions[p].log->bytes();
            i.messages_count += t.partitions[p].log->count();
            if (with_partitions) i.partitions.push_back(part_info(t.partitions[p], p));
        }
        return i;
    }
    static stream_info str_info(const stream& s, bool with_topics) {
        stream_info i{s.id, s.created_at, static_cast<std::uint32_t>(s.topics.size()), 0, 0, s.name, {}};
        s.topics.for_each([&](std::size_t, const topic& t) {
            auto ti = top_info(t, false);
            i.size_bytes += ti.size_bytes;
            i.messages_count += ti.messages_count;
            if (with_topics) i.topics.push_back(std::move(ti));
        });
        return i;
    }
    static group_info grp_info(const group& g) {
        group_info i{g.id,
                     static_cast<std::uint32_t>(g.partitions.size()),
                     static_cast<std::uint32_t>(g.members.size()),
                     g.name,
                     {}};
        g.members.for_each([&](std::size_t, const member& m) { i.members.push_back({m.id, m.partitions}); });
        return i;
    }

    // ---- consumer-group rebalancing (server 0.8.0 metadata/consumer_group.rs semantics)

    /// Full rebalance: clear every assignment and pending revocation; partition i goes to the
    /// i % M-th member in slot order.
    static void rebalance_full(group& g) {
        std::vector<std::size_t> slots;
        g.members.for_each([&](std::size_t k, member& m) {
            slots.push_back(k);
            m.partitions.clear();
            m.pending.clear();
        });
        if (slots.empty() || g.partitions.empty()) return;
        for (std::size_t i = 0; i < g.partitions.size(); ++i)
            g.members.get(slots[i % slots.size()])->partitions.push_back(g.partitions[i]);
    }

    /// Cooperative rebalance after a join: unassigned partitions go round-robin to idle
    /// members; then each idle member that is not yet a revocation target may take one
    /// partition from the end of an over-allowance member's list, as a pending revocation.
    void rebalance_cooperative(group& g) {
        const std::size_t m_count = g.members.size();
        if (m_count == 0 || g.partitions.empty()) return;
        std::set<std::uint32_t> assigned;
        g.members.for_each(
            [&](std::size_t, const member& m) { assigned.insert(m.partitions.begin(), m.partitions.end()); });
        std::vector<std::uint32_t> unassigned;
        for (auto p : g.partitions)
            if (!assigned.count(p)) unassigned.push_back(p);
        if (!unassigned.empty()) {
            std::vector<std::size_t> idle;
            g.members.for_each([&](std::size_t k, const member& m) {
                if (m.partitions.empty()) idle.push_back(k);
            });
            if (!idle.empty())
                for (std::size_t i = 0; i < unassigned.size(); ++i)
                    g.members.get(idle[i % idle.size()])->partitions.push_back(unassigned[i]);
        }
        const std::size_t fair = g.partitions.size() / m_count;
        std::size_t with_extra = g.partitions.size() % m_count;
        std::set<std::size_t> targets;
        g.members.for_each([&](std::size_t, const member& m) {
            for (auto& r : m.pending) targets.insert(r.target_slot);
        });
        std::vector<std::size_t> idle;
        g.members.for_each([&](std::size_t k, const member& m) {
            if (m.partitions.empty() && !targets.count(k)) idle.push_back(k);
        });
        if (idle.empty()) return;
        std::vector<std::size_t> slots;
        g.members.for_each([&](std::size_t k, const member&) { slots.push_back(k); });
        for (auto k : slots) {
            if (idle.empty()) break;
            member& m = *g.members.get(k);
            std::size_t effective = 0;
            for (auto p : m.partitions)
                if (!m.is_pending(p)) ++effective;
            const std::size_t allowed = with_extra > 0 ? fair + 1 : fair;
            if (effective <= allowed) {
                if (effective > fair && with_extra > 0) --with_extra;
                continue;
            }
            const std::size_t excess = effective - allowed;
            if (with_extra > 0 && effective > fair) --with_extra;
            std::vector<std::uint32_t> revocable;
            for (auto it = m.partitions.rbegin(); it != m.partitions.rend(); ++it)
                if (!m.is_pending(*it)) revocable.push_back(*it);
            for (std::size_t i = 0; i < revocable.size() && i < excess; ++i) {
                if (idle.empty()) break;
                std::size_t target = idle.front();
                idle.erase(idle.begin());
                m.pending.push_back(revocation{revocable[i], target, g.members.get(target)->id, now_us()});
            }
        }
    }

    /// Whether a pending revocation of `p` can complete: the group never polled it (or its
    /// record was dropped), or its stored offset reached the last polled offset.
    static bool completable(const topic& t, std::uint32_t gid, std::uint32_t p) {
        if (p >= t.partitions.size()) return false;
        const auto& part = t.partitions[p];
        auto polled = part.last_polled.find(gid);
        if (polled == part.last_polled.end()) return true;
        auto stored = part.group_offsets.find(gid);
        return stored != part.group_offsets.end() && stored->second >= polled->second;
    }

    /// Moves `p` from the member at `slot` (whose logical id must be `member_id`) to the
    /// revocation's target; a full rebalance if the target left or its slot was reused.
    static bool complete_revocation(group& g, std::size_t slot, std::uint32_t member_id, std::uint32_t p) {
        member* m = g.members.get(slot);
        if (!m || m->id != member_id) return false;
        auto it =
            std::find_if(m->pending.begin(), m->pending.end(), [&](const revocation& r) { return r.partition == p; });
        if (it == m->pending.end()) return false;
        revocation r = *it;
        m->pending.erase(it);
        std::erase(m->partitions, p);
        member* target = g.members.get(r.target_slot);
        if (!target || target->id != r.target_member_id) {
            rebalance_full(g);
            return true;
        }
        target->partitions.push_back(p);
        return true;
    }

    /// Tells `opts.on_membership` that `client_id` joined or left group `g` of `t`.
    void membership_changed(const topic& t, const group& g, std::uint32_t client_id, const char* what) const {
        if (!opts.on_membership) return;
        opts.on_membership("consumer group " + g.name + " of topic " + t.name + ": client " +
                           std::to_string(client_id) + " " + what + " (a rebalance)");
    }

    /// Leave by client: full rebalance and the leaver's polled records dropped. False if the
    /// client is not a member.
    bool leave(topic& t, group& g, std::uint32_t client_id) {
        std::optional<std::size_t> slot;
        g.members.for_each([&](std::size_t k, const member& m) {
            if (!slot && m.client == client_id) slot = k;
        });
        if (!slot) return false;
        auto leaving = g.members.get(*slot)->partitions;
        g.members.remove(*slot);
        rebalance_full(g);
        for (auto p : leaving)
            if (p < t.partitions.size()) t.partitions[p].last_polled.erase(g.id);
        membership_changed(t, g, client_id, "left");
        return true;
    }

    void forget_group_of_client(std::uint32_t client_id, std::uint32_t s, std::uint32_t t, std::uint32_t g) {
        auto it = clients.find(client_id);
        if (it == clients.end()) return;
        std::erase(it->second.groups, std::array<std::uint32_t, 3>{s, t, g});
    }

    /// For a store/auto-commit by the member in `slot`: complete its revocation of `p` if due.
    static void maybe_complete(topic& t, group& g, std::size_t slot, std::uint32_t p) {
        member* m = g.members.get(slot);
        if (!m || !m->is_pending(p)) return;
        if (completable(t, g.id, p)) complete_revocation(g, slot, m->id, p);
    }

    /// The partitions a group member may use: explicit (owned or pending) or round-robin.
    struct resolved {
        std::uint32_t gid;
        std::size_t slot;
        std::uint32_t partition;
    };
    status resolve_group_member(std::uint32_t client_id, topic& t, const ident& gident,
                                std::optional<std::uint32_t> explicit_p, bool advance, std::optional<resolved>& out) {
        if (!clients.count(client_id)) return code::stale_client;
        auto gid = find_group(t, gident);
        if (!gid) return code::consumer_group_id_not_found;
        group& g = *t.groups.get(*gid);
        std::optional<std::size_t> slot;
        g.members.for_each([&](std::size_t k, const member& m) {
            if (!slot && m.client == client_id) slot = k;
        });
        if (!slot) return code::consumer_group_member_not_found;
        member& m = *g.members.get(*slot);
        if (explicit_p) {
            if (!m.owns(*explicit_p) && !m.is_pending(*explicit_p)) return code::ok;  // out stays empty
            out = resolved{*gid, *slot, *explicit_p};
            return code::ok;
        }
        std::vector<std::uint32_t> usable;
        for (auto p : m.partitions)
            if (!m.is_pending(p)) usable.push_back(p);
        if (usable.empty()) return code::ok;
        std::size_t idx = m.cursor % usable.size();
        if (advance) m.cursor = (m.cursor + 1) % usable.size();
        out = resolved{*gid, *slot, usable[idx]};
        return code::ok;
    }

    static std::uint32_t consumer_key(const ident& id) { return id.numeric ? id.id : xxh32(id.name); }

    // ---- persistence
    std::filesystem::path partition_file(std::uint32_t s, std::uint32_t t, std::uint32_t p) const {
        return opts.data_dir / "streams" / std::to_string(s) / std::to_string(t) / (std::to_string(p) + ".log");
    }
    void open_partition_file(partition& part, std::uint32_t s, std::uint32_t t, std::uint32_t p) {
        if (opts.data_dir.empty() || part.file) return;
        auto path = partition_file(s, t, p);
        std::filesystem::create_directories(path.parent_path());
        part.file = std::fopen(path.c_str(), "ab");
    }
    /// PurgeTopic on one topic: empty logs (offsets restart at 0), no consumer offsets.
    void purge(std::uint32_t sid, topic& t) {
        for (std::uint32_t p = 0; p < t.partitions.size(); ++p) {
            partition& part = t.partitions[p];
            part.log = std::make_shared<partition_log>();
            part.consumer_offsets.clear();
            part.group_offsets.clear();
            part.last_polled.clear();
            if (part.file) {
                part.close();
                std::error_code ec;
                std::filesystem::resize_file(partition_file(sid, t.id, p), 0, ec);
                open_partition_file(part, sid, t.id, p);
            }
        }
    }
    void save_meta();
    std::string load_meta();

    /// The partition a Store/DeleteConsumerOffset request names: in group mode the member's
    /// own (`member` set), else the given one (0 when absent). Sets `to` and `pid`.
    status offset_partition(std::uint32_t client_id, const consumer& c, const ident& s, const ident& t,
                            std::optional<std::uint32_t> partition_id, topic*& to, std::optional<resolved>& member,
                            std::uint32_t& pid) {
        stream* so = nullptr;
        if (auto st = resolve(s, t, so, to)) return st;
        if (c.kind == 2) {
            if (auto st = resolve_group_member(client_id, *to, c.id, partition_id, false, member)) return st;
            if (!member) return code::not_resolved_consumer;
            pid = member->partition;
        } else {
            pid = partition_id.value_or(0);
        }
        if (pid >= to->partitions.size()) return code::partition_not_found;
        return code::ok;
    }
};

}  // namespace iss::broker
