#include "iggy_broker/broker_state.hpp"

#include "iggy_broker/users.hpp"

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

namespace {

constexpr std::size_t header_size = 64;
constexpr std::uint64_t u64_max = ~std::uint64_t{0};
constexpr std::uint64_t segment_size_default = 1ull << 30;  // [system.segment] size = 1 GiB
constexpr std::size_t max_user_headers = 100'000;
constexpr std::size_t max_payload = 64'000'000;

void put_u32(std::uint8_t* p, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
void put_u64(std::uint8_t* p, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
std::uint32_t get_u32(const std::uint8_t* p) {
    std::uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}
std::uint64_t get_u64(const std::uint8_t* p) {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

std::uint32_t xxh32(std::string_view s) { return XXH32(s.data(), s.size(), 0); }

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

}  // namespace

// ---------------------------------------------------------------------------- partition_log

std::uint8_t* partition_log::reserve(std::size_t len) {
    if (segments_.empty() || tail_used_ + len > seg_cap_.back()) {
        std::size_t cap = seg_cap_.empty() ? (64u << 10) : std::min<std::size_t>(seg_cap_.back() * 2, 16u << 20);
        cap = std::max(cap, len);
        segments_.push_back(std::make_unique_for_overwrite<std::uint8_t[]>(cap));
        seg_cap_.push_back(cap);
        tail_used_ = 0;
    }
    pending_seg_ = segments_.size() - 1;
    return segments_.back().get() + tail_used_;
}

void partition_log::commit(std::size_t len, std::uint64_t timestamp) {
    index_.push_back(entry{static_cast<std::uint32_t>(pending_seg_), static_cast<std::uint32_t>(tail_used_),
                           static_cast<std::uint32_t>(len), timestamp});
    tail_used_ += len;
    bytes_ += len;
}

std::uint64_t partition_log::first_at_or_after(std::uint64_t ts) const {
    auto it = std::lower_bound(index_.begin(), index_.end(), ts,
                               [](const entry& e, std::uint64_t t) { return e.timestamp < t; });
    return static_cast<std::uint64_t>(it - index_.begin());
}

void partition_log::ranges(std::uint64_t first, std::uint64_t last,
                           std::vector<std::span<const std::uint8_t>>& out) const {
    std::uint64_t i = first;
    while (i <= last) {
        const auto& a = index_[i];
        std::size_t len = a.len;
        std::uint64_t j = i + 1;
        while (j <= last && index_[j].segment == a.segment) {
            len += index_[j].len;
            ++j;
        }
        out.emplace_back(segments_[a.segment].get() + a.pos, len);
        i = j;
    }
}

void partition_log::mark_batch(std::uint64_t first_offset, std::uint64_t origin_timestamp) {
    batches_.push_back({first_offset, origin_timestamp});
}

std::optional<partition_log::batch_mark> partition_log::batch_of(std::uint64_t offset) const {
    auto it = std::upper_bound(batches_.begin(), batches_.end(), offset,
                               [](std::uint64_t o, const batch_mark& b) { return o < b.first_offset; });
    if (it == batches_.begin()) return std::nullopt;
    return *std::prev(it);
}

std::size_t poll_result::bytes() const noexcept {
    std::size_t n = 0;
    for (auto& c : chunks) n += c.size();
    return n;
}

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
        : opts{std::move(o)}, clk{opts.clock ? opts.clock : &real_clock::instance()}, rng{opts.seed},
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
        topic_info i{t.id, t.created_at, static_cast<std::uint32_t>(t.partitions.size()), t.message_expiry,
                     t.compression, t.max_topic_size, t.replication_factor, 0, 0, t.name, {}};
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
        group_info i{g.id, static_cast<std::uint32_t>(g.partitions.size()),
                     static_cast<std::uint32_t>(g.members.size()), g.name, {}};
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
        g.members.for_each([&](std::size_t, const member& m) { assigned.insert(m.partitions.begin(), m.partitions.end()); });
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
        auto it = std::find_if(m->pending.begin(), m->pending.end(), [&](const revocation& r) { return r.partition == p; });
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

    /// Leave by client: full rebalance and the leaver's polled records dropped. False if the
    /// client is not a member.
    static bool leave(topic& t, group& g, std::uint32_t client_id) {
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
                                std::optional<std::uint32_t> explicit_p, bool advance,
                                std::optional<resolved>& out) {
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
};

void broker_state::state::save_meta() {
    if (opts.data_dir.empty()) return;
    namespace json = boost::json;
    json::array ss;
    streams.for_each([&](std::size_t, const stream& s) {
        json::array ts;
        s.topics.for_each([&](std::size_t, const topic& t) {
            json::array ps;
            for (auto& p : t.partitions) {
                json::object co, go;
                for (auto& [k, v] : p.consumer_offsets) co[std::to_string(k)] = v;
                for (auto& [k, v] : p.group_offsets) go[std::to_string(k)] = v;
                ps.push_back(json::object{{"created_at", p.created_at}, {"consumers", co}, {"groups", go}});
            }
            json::array gs;
            t.groups.for_each([&](std::size_t, const group& g) { gs.push_back(json::object{{"id", g.id}, {"name", g.name}}); });
            ts.push_back(json::object{{"id", t.id},
                                      {"name", t.name},
                                      {"created_at", t.created_at},
                                      {"compression", t.compression},
                                      {"message_expiry", t.message_expiry},
                                      {"max_topic_size", t.max_topic_size},
                                      {"replication_factor", t.replication_factor},
                                      {"partitions", ps},
                                      {"groups", gs}});
        });
        ss.push_back(json::object{{"id", s.id}, {"name", s.name}, {"created_at", s.created_at}, {"topics", ts}});
    });
    std::filesystem::create_directories(opts.data_dir);
    auto tmp = opts.data_dir / "meta.json.tmp";
    {
        std::ofstream f(tmp, std::ios::trunc);
        f << json::serialize(json::object{{"streams", ss}, {"users", users.to_json()}});
    }
    std::filesystem::rename(tmp, opts.data_dir / "meta.json");
}

std::string broker_state::state::load_meta() {
    namespace json = boost::json;
    auto path = opts.data_dir / "meta.json";
    if (!std::filesystem::exists(path)) return {};
    std::ifstream f(path);
    std::stringstream buf;
    buf << f.rdbuf();
    boost::system::error_code ec;
    auto v = json::parse(buf.str(), ec);
    if (ec) return "cannot parse " + path.string() + ": " + ec.message();
    try {
        for (auto& sv : v.at("streams").as_array()) {
            stream s;
            s.id = json::value_to<std::uint32_t>(sv.at("id"));
            s.name = json::value_to<std::string>(sv.at("name"));
            s.created_at = json::value_to<std::uint64_t>(sv.at("created_at"));
            for (auto& tv : sv.at("topics").as_array()) {
                topic t;
                t.id = json::value_to<std::uint32_t>(tv.at("id"));
                t.name = json::value_to<std::string>(tv.at("name"));
                t.created_at = json::value_to<std::uint64_t>(tv.at("created_at"));
                t.compression = json::value_to<std::uint8_t>(tv.at("compression"));
                t.message_expiry = json::value_to<std::uint64_t>(tv.at("message_expiry"));
                t.max_topic_size = json::value_to<std::uint64_t>(tv.at("max_topic_size"));
                t.replication_factor = json::value_to<std::uint8_t>(tv.at("replication_factor"));
                std::uint32_t pid = 0;
                for (auto& pv : tv.at("partitions").as_array()) {
                    partition p;
                    p.created_at = json::value_to<std::uint64_t>(pv.at("created_at"));
                    for (auto& [k, ov] : pv.at("consumers").as_object())
                        p.consumer_offsets[static_cast<std::uint32_t>(std::stoul(std::string{k}))] =
                            json::value_to<std::uint64_t>(ov);
                    for (auto& [k, ov] : pv.at("groups").as_object())
                        p.group_offsets[static_cast<std::uint32_t>(std::stoul(std::string{k}))] =
                            json::value_to<std::uint64_t>(ov);
                    // messages
                    auto file = partition_file(s.id, t.id, pid);
                    if (std::filesystem::exists(file)) {
                        std::ifstream in(file, std::ios::binary);
                        std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
                        std::size_t pos = 0;
                        while (pos + header_size <= bytes.size()) {
                            auto* h = reinterpret_cast<const std::uint8_t*>(bytes.data() + pos);
                            std::size_t len = header_size + get_u32(h + 52) + get_u32(h + 48);
                            if (pos + len > bytes.size()) break;  // torn tail: dropped
                            std::memcpy(p.log->reserve(len), h, len);
                            p.log->commit(len, get_u64(h + 32));
                            pos += len;
                        }
                        if (pos != bytes.size()) std::filesystem::resize_file(file, pos);
                    }
                    t.partitions.push_back(std::move(p));
                    ++pid;
                }
                for (auto& gv : tv.at("groups").as_array()) {
                    group g;
                    g.id = json::value_to<std::uint32_t>(gv.at("id"));
                    g.name = json::value_to<std::string>(gv.at("name"));
                    for (std::uint32_t i = 0; i < t.partitions.size(); ++i) g.partitions.push_back(i);
                    auto gid = g.id;
                    t.groups.insert_at(gid, std::move(g));
                }
                auto tid = t.id;
                s.topics.insert_at(tid, std::move(t));
            }
            auto sid = s.id;
            streams.insert_at(sid, std::move(s));
        }
        if (auto* u = v.as_object().if_contains("users")) {
            if (auto err = users.from_json(*u); !err.empty()) return "invalid " + path.string() + ": " + err;
        }
    } catch (const std::exception& e) {
        return "invalid " + path.string() + ": " + e.what();
    }
    return {};
}

// ---------------------------------------------------------------------------- broker_state

broker_state::broker_state(broker_options opts) : s_{std::make_unique<state>(std::move(opts))} {}
broker_state::~broker_state() = default;

std::string broker_state::load() {
    if (s_->opts.data_dir.empty()) return {};
    std::error_code ec;
    std::filesystem::create_directories(s_->opts.data_dir, ec);
    if (ec) return "cannot create " + s_->opts.data_dir.string() + ": " + ec.message();
    return s_->load_meta();
}

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
        if (g) state::leave(*t, *g, client_id);
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

// ---- streams and topics

res<stream_info> broker_state::create_stream(std::string_view name) {
    if (name.empty() || name.size() > 255) return {code::invalid_format};
    if (s_->find_stream(ident::str(std::string{name}))) return {code::stream_name_already_exists};
    stream s;
    s.name = std::string{name};
    s.created_at = s_->now_us();
    auto id = s_->streams.insert(std::move(s));
    stream& ref = *s_->streams.get(id);
    ref.id = static_cast<std::uint32_t>(id);
    s_->save_meta();
    return {code::ok, state::str_info(ref, false)};
}

res<std::optional<stream_info>> broker_state::get_stream(const ident& id) const {
    auto sid = s_->find_stream(id);
    if (!sid) return {code::ok, std::nullopt};
    return {code::ok, state::str_info(*s_->streams.get(*sid), true)};
}

std::vector<stream_info> broker_state::get_streams() const {
    std::vector<stream_info> out;
    s_->streams.for_each([&](std::size_t, const stream& s) { out.push_back(state::str_info(s, false)); });
    return out;
}

res<none> broker_state::delete_stream(const ident& id) {
    auto sid = s_->find_stream(id);
    if (!sid) return {code::stream_id_not_found};
    s_->streams.remove(*sid);
    if (!s_->opts.data_dir.empty()) {
        std::error_code ec;
        std::filesystem::remove_all(s_->opts.data_dir / "streams" / std::to_string(*sid), ec);
    }
    s_->save_meta();
    return {};
}

res<none> broker_state::update_stream(const ident& id, std::string_view name) {
    if (name.empty() || name.size() > 255) return {code::invalid_format};
    auto sid = s_->find_stream(id);
    if (!sid) return {code::stream_id_not_found};
    if (auto other = s_->find_stream(ident::str(std::string{name})); other && *other != *sid)
        return {code::stream_name_already_exists};
    s_->streams.get(*sid)->name = std::string{name};
    s_->save_meta();
    return {};
}

res<none> broker_state::purge_stream(const ident& id) {
    auto sid = s_->find_stream(id);
    if (!sid) return {code::stream_id_not_found};
    stream& st = *s_->streams.get(*sid);
    st.topics.for_each([&](std::size_t, topic& t) { s_->purge(st.id, t); });
    s_->save_meta();
    return {};
}

res<topic_info> broker_state::create_topic(const ident& sid, std::uint32_t partitions, std::uint8_t compression,
                                           std::uint64_t message_expiry, std::uint64_t max_topic_size,
                                           std::uint8_t replication_factor, std::string_view name) {
    if (name.empty() || name.size() > 255) return {code::invalid_format};
    if (compression != 1 && compression != 2) return {code::invalid_command};
    auto s = s_->find_stream(sid);
    if (!s) return {code::stream_id_not_found};
    if (partitions > 1000) return {code::too_many_partitions};
    if (max_topic_size != 0 && max_topic_size != u64_max && max_topic_size < segment_size_default)
        return {code::invalid_topic_size};
    stream& st = *s_->streams.get(*s);
    if (state::find_topic(st, ident::str(std::string{name}))) return {code::topic_name_already_exists};
    topic t;
    t.name = std::string{name};
    t.created_at = s_->now_us();
    t.compression = compression;
    t.message_expiry = message_expiry == 0 ? u64_max : message_expiry;
    t.max_topic_size = max_topic_size == 0 ? u64_max : max_topic_size;
    t.replication_factor = replication_factor == 0 ? 1 : replication_factor;
    for (std::uint32_t i = 0; i < partitions; ++i) {
        partition p;
        p.created_at = t.created_at;
        t.partitions.push_back(std::move(p));
    }
    auto id = st.topics.insert(std::move(t));
    topic& ref = *st.topics.get(id);
    ref.id = static_cast<std::uint32_t>(id);
    s_->save_meta();
    return {code::ok, state::top_info(ref, true)};
}

std::optional<topic_info> broker_state::get_topic(const ident& s, const ident& t) const {
    const topic* tp = s_->lookup_topic(s, t);
    if (!tp) return std::nullopt;
    return state::top_info(*tp, true);
}

std::vector<topic_info> broker_state::get_topics(const ident& s) const {
    std::vector<topic_info> out;
    auto sid = s_->find_stream(s);
    if (!sid) return out;
    s_->streams.get(*sid)->topics.for_each([&](std::size_t, const topic& t) { out.push_back(state::top_info(t, false)); });
    return out;
}

res<none> broker_state::delete_topic(const ident& s, const ident& t) {
    stream* so = nullptr;
    topic* to = nullptr;
    if (auto st = s_->resolve(s, t, so, to)) return {st};
    auto tid = to->id;
    so->topics.remove(tid);
    if (!s_->opts.data_dir.empty()) {
        std::error_code ec;
        std::filesystem::remove_all(s_->opts.data_dir / "streams" / std::to_string(so->id) / std::to_string(tid), ec);
    }
    s_->save_meta();
    return {};
}

res<none> broker_state::update_topic(const ident& s, const ident& t, std::uint8_t compression,
                                     std::uint64_t message_expiry, std::uint64_t max_topic_size,
                                     std::uint8_t replication_factor, std::string_view name) {
    if (name.empty() || name.size() > 255) return {code::invalid_format};
    if (compression != 1 && compression != 2) return {code::invalid_command};
    stream* so = nullptr;
    topic* to = nullptr;
    if (auto st = s_->resolve(s, t, so, to)) return {st};
    if (max_topic_size != 0 && max_topic_size != u64_max && max_topic_size < segment_size_default)
        return {code::invalid_topic_size};
    if (auto other = state::find_topic(*so, ident::str(std::string{name})); other && *other != to->id)
        return {code::topic_name_already_exists};
    to->name = std::string{name};
    to->compression = compression;
    to->message_expiry = message_expiry == 0 ? u64_max : message_expiry;
    to->max_topic_size = max_topic_size == 0 ? u64_max : max_topic_size;
    to->replication_factor = replication_factor == 0 ? 1 : replication_factor;
    s_->save_meta();
    return {};
}

res<none> broker_state::purge_topic(const ident& s, const ident& t) {
    stream* so = nullptr;
    topic* to = nullptr;
    if (auto st = s_->resolve(s, t, so, to)) return {st};
    s_->purge(so->id, *to);
    s_->save_meta();
    return {};
}

namespace {
void after_partition_change(topic& t) {
    for (std::size_t gk = 0; gk < t.groups.capacity(); ++gk) {
        group* g = t.groups.get(gk);
        if (!g) continue;
        g->partitions.clear();
        for (std::uint32_t i = 0; i < t.partitions.size(); ++i) g->partitions.push_back(i);
        broker_state::state::rebalance_full(*g);
        for (auto& p : t.partitions) p.last_polled.erase(g->id);
    }
}
}  // namespace

res<none> broker_state::create_partitions(const ident& s, const ident& t, std::uint32_t count) {
    stream* so = nullptr;
    topic* to = nullptr;
    if (auto st = s_->resolve(s, t, so, to)) return {st};
    if (count == 0 || count > 1000) return {code::too_many_partitions};
    for (std::uint32_t i = 0; i < count; ++i) {
        partition p;
        p.created_at = s_->now_us();
        to->partitions.push_back(std::move(p));
    }
    after_partition_change(*to);
    s_->save_meta();
    return {};
}

res<none> broker_state::delete_partitions(const ident& s, const ident& t, std::uint32_t count) {
    stream* so = nullptr;
    topic* to = nullptr;
    if (auto st = s_->resolve(s, t, so, to)) return {st};
    if (count == 0 || count > 1000) return {code::too_many_partitions};
    if (count > to->partitions.size()) return {code::invalid_partitions_count};
    for (std::uint32_t i = 0; i < count; ++i) {
        auto pid = static_cast<std::uint32_t>(to->partitions.size() - 1);
        to->partitions.pop_back();
        if (!s_->opts.data_dir.empty()) {
            std::error_code ec;
            std::filesystem::remove(s_->partition_file(so->id, to->id, pid), ec);
        }
    }
    after_partition_change(*to);
    s_->save_meta();
    return {};
}

// ---- messages

res<broker_state::appended> broker_state::send_messages(const ident& s, const ident& t, const partitioning& pt,
                                                        std::span<const message_in> messages) {
    // The batch is validated before the stream and topic are looked up (docs/protocol.md §6.2).
    if (messages.empty()) return {code::invalid_messages_count};
    std::uint64_t prev = 0;
    for (auto& m : messages) {
        if (m.headers.size() > max_user_headers) return {code::too_big_user_headers};
        if (m.payload.size() > max_payload) return {code::too_big_message_payload};
        if (m.offset < prev) return {code::invalid_offset};
        prev = m.offset;
    }
    stream* so = nullptr;
    topic* to = nullptr;
    if (auto st = s_->resolve(s, t, so, to)) return {st};
    const auto n = static_cast<std::uint32_t>(to->partitions.size());
    std::uint32_t pid = 0;
    switch (pt.kind) {
        case partitioning_kind::balanced:
            if (n == 0) return {code::topic_id_not_found};
            pid = static_cast<std::uint32_t>(to->balanced_counter++ % n);
            break;
        case partitioning_kind::partition_id:
            if (pt.partition_id >= n) return {code::partition_not_found};
            pid = pt.partition_id;
            break;
        case partitioning_kind::messages_key:
            // 0.8.0 divides by zero here; the double answers 2010 instead of crashing.
            if (n == 0) return {code::topic_id_not_found};
            pid = xxh32(std::string_view{pt.key}) % n;
            break;
    }
    partition& p = to->partitions[pid];
    s_->open_partition_file(p, so->id, to->id, pid);
    const std::uint64_t ts = s_->now_us();
    std::uint64_t offset = p.log->count();
    const appended where{so->id, to->id, pid, offset};
    std::uint64_t origin = messages.front().origin_timestamp;
    for (auto& m : messages) origin = std::min(origin, m.origin_timestamp);
    p.log->mark_batch(offset, origin);
    for (auto& m : messages) {
        const std::size_t len = header_size + m.payload.size() + m.headers.size();
        std::uint8_t* b = p.log->reserve(len);
        std::uint64_t lo = m.id_lo, hi = m.id_hi;
        if (lo == 0 && hi == 0) {  // random UUIDv4, as Uuid::to_u128_le
            lo = s_->rng();
            hi = s_->rng();
            if (lo == 0 && hi == 0) lo = 1;  // never hand out id 0
        }
        put_u64(b + 8, lo);
        put_u64(b + 16, hi);
        put_u64(b + 24, offset);
        put_u64(b + 32, ts);
        put_u64(b + 40, m.origin_timestamp);
        put_u32(b + 48, static_cast<std::uint32_t>(m.headers.size()));
        put_u32(b + 52, static_cast<std::uint32_t>(m.payload.size()));
        put_u64(b + 56, 0);
        if (!m.payload.empty()) std::memcpy(b + header_size, m.payload.data(), m.payload.size());
        if (!m.headers.empty()) std::memcpy(b + header_size + m.payload.size(), m.headers.data(), m.headers.size());
        put_u64(b, XXH3_64bits(b + 8, len - 8));
        if (p.file) std::fwrite(b, 1, len, p.file);
        p.log->commit(len, ts);
        ++offset;
    }
    if (p.file) std::fflush(p.file);
    return {code::ok, where};
}

res<poll_result> broker_state::poll_messages(std::uint32_t client_id, const consumer& c, const ident& s,
                                             const ident& t, std::optional<std::uint32_t> partition_id,
                                             strategy strat, std::uint32_t count, bool auto_commit) {
    stream* so = nullptr;
    topic* to = nullptr;
    if (auto st = s_->resolve(s, t, so, to)) return {st};
    std::uint32_t pid = 0;
    std::optional<state::resolved> member;
    if (c.kind == 2) {
        if (auto st = s_->resolve_group_member(client_id, *to, c.id, partition_id, true, member)) return {st};
        if (!member) return {code::ok, poll_result{}};  // nothing to poll: empty success, partition 0
        pid = member->partition;
    } else {
        pid = partition_id.value_or(0);
    }
    if (pid >= to->partitions.size()) return {code::partition_not_found};
    partition& p = to->partitions[pid];
    poll_result r;
    r.partition_id = pid;
    r.current_offset = p.current_offset();
    if (count == 0 || p.log->count() == 0) return {code::ok, std::move(r)};
    std::map<std::uint32_t, std::uint64_t>& offsets = c.kind == 2 ? p.group_offsets : p.consumer_offsets;
    const std::uint32_t key = c.kind == 2 ? member->gid : state::consumer_key(c.id);
    const std::uint64_t current = r.current_offset;
    std::uint64_t start = 0;
    switch (strat.kind) {
        case strategy_kind::offset: start = strat.value; break;
        case strategy_kind::timestamp: start = p.log->first_at_or_after(strat.value); break;
        case strategy_kind::first: start = 0; break;
        case strategy_kind::last: start = current + 1 >= count ? current + 1 - count : 0; break;
        case strategy_kind::next: {
            auto it = offsets.find(key);
            start = it == offsets.end() ? 0 : it->second + 1;
            break;
        }
        default: return {code::invalid_command};
    }
    if (start > current) return {code::ok, std::move(r)};
    const std::uint64_t last = std::min<std::uint64_t>(current, start + count - 1);
    r.count = static_cast<std::uint32_t>(last - start + 1);
    p.log->ranges(start, last, r.chunks);
    r.keep_alive = p.log;
    if (auto_commit) {
        offsets[key] = last;
        if (member) state::maybe_complete(*to, *to->groups.get(member->gid), member->slot, pid);
        s_->save_meta();
    }
    if (member) p.last_polled[member->gid] = last;
    return {code::ok, std::move(r)};
}

// ---- offsets

res<none> broker_state::store_offset(std::uint32_t client_id, const consumer& c, const ident& s, const ident& t,
                                     std::optional<std::uint32_t> partition_id, std::uint64_t offset) {
    stream* so = nullptr;
    topic* to = nullptr;
    if (auto st = s_->resolve(s, t, so, to)) return {st};
    std::optional<state::resolved> member;
    std::uint32_t pid = 0;
    if (c.kind == 2) {
        if (auto st = s_->resolve_group_member(client_id, *to, c.id, partition_id, false, member)) return {st};
        if (!member) return {code::not_resolved_consumer};
        pid = member->partition;
    } else {
        pid = partition_id.value_or(0);
    }
    if (pid >= to->partitions.size()) return {code::partition_not_found};
    partition& p = to->partitions[pid];
    if (p.log->count() == 0 || offset > p.current_offset()) return {code::invalid_offset};
    if (c.kind == 2) {
        p.group_offsets[member->gid] = offset;
        state::maybe_complete(*to, *to->groups.get(member->gid), member->slot, pid);
    } else {
        p.consumer_offsets[state::consumer_key(c.id)] = offset;
    }
    s_->save_meta();
    return {};
}

std::optional<offset_info> broker_state::get_offset(const consumer& c, const ident& s, const ident& t,
                                                    std::optional<std::uint32_t> partition_id) const {
    const topic* to = s_->lookup_topic(s, t);
    if (!to) return std::nullopt;
    const std::uint32_t pid = partition_id.value_or(0);
    if (pid >= to->partitions.size()) return std::nullopt;
    const partition& p = to->partitions[pid];
    if (c.kind == 2) {
        auto gid = state::find_group(*to, c.id);
        if (!gid) return std::nullopt;
        auto it = p.group_offsets.find(*gid);
        if (it == p.group_offsets.end()) return std::nullopt;
        return offset_info{pid, p.current_offset(), it->second};
    }
    auto it = p.consumer_offsets.find(state::consumer_key(c.id));
    if (it == p.consumer_offsets.end()) return std::nullopt;
    return offset_info{pid, p.current_offset(), it->second};
}

res<none> broker_state::delete_offset(std::uint32_t client_id, const consumer& c, const ident& s, const ident& t,
                                      std::optional<std::uint32_t> partition_id) {
    stream* so = nullptr;
    topic* to = nullptr;
    if (auto st = s_->resolve(s, t, so, to)) return {st};
    std::optional<state::resolved> member;
    std::uint32_t pid = 0;
    if (c.kind == 2) {
        if (auto st = s_->resolve_group_member(client_id, *to, c.id, partition_id, false, member)) return {st};
        if (!member) return {code::not_resolved_consumer};
        pid = member->partition;
    } else {
        pid = partition_id.value_or(0);
    }
    if (pid >= to->partitions.size()) return {code::partition_not_found};
    partition& p = to->partitions[pid];
    auto& offsets = c.kind == 2 ? p.group_offsets : p.consumer_offsets;
    const std::uint32_t key = c.kind == 2 ? member->gid : state::consumer_key(c.id);
    if (!offsets.erase(key)) return {code::consumer_offset_not_found};
    s_->save_meta();
    return {};
}

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
        for (auto cid : gone) state::leave(*to, g, cid);
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
    if (!state::leave(*to, g, client_id)) return {code::consumer_group_member_not_found};
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
            if (g && state::leave(*t, *g, id)) ++dropped;
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
