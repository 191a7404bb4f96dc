// SPDX-License-Identifier: Apache-2.0
#include "iggy_broker/broker_internal.hpp"

namespace iss::broker {

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
    s_->streams.get(*sid)->topics.for_each(
        [&](std::size_t, const topic& t) { out.push_back(state::top_info(t, false)); });
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
        proto::store_le<std::uint64_t>(wire(b + 8), lo);
        proto::store_le<std::uint64_t>(wire(b + 16), hi);
        proto::store_le<std::uint64_t>(wire(b + 24), offset);
        proto::store_le<std::uint64_t>(wire(b + 32), ts);
        proto::store_le<std::uint64_t>(wire(b + 40), m.origin_timestamp);
        proto::store_le<std::uint32_t>(wire(b + 48), static_cast<std::uint32_t>(m.headers.size()));
        proto::store_le<std::uint32_t>(wire(b + 52), static_cast<std::uint32_t>(m.payload.size()));
        proto::store_le<std::uint64_t>(wire(b + 56), 0);
        if (!m.payload.empty()) std::memcpy(b + header_size, m.payload.data(), m.payload.size());
        if (!m.headers.empty()) std::memcpy(b + header_size + m.payload.size(), m.headers.data(), m.headers.size());
        proto::store_le<std::uint64_t>(wire(b), XXH3_64bits(b + 8, len - 8));
        if (p.file) std::fwrite(b, 1, len, p.file);
        p.log->commit(len, ts);
        ++offset;
    }
    if (p.file) std::fflush(p.file);
    return {code::ok, where};
}

res<poll_result> broker_state::poll_messages(std::uint32_t client_id, const consumer& c, const ident& s, const ident& t,
                                             std::optional<std::uint32_t> partition_id, strategy strat,
                                             std::uint32_t count, bool auto_commit) {
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

}  // namespace iss::broker
