// SPDX-License-Identifier: Apache-2.0
#include "pipeline/router.hpp"

#include <boost/asio/awaitable.hpp>

namespace iss::pipeline {

router::router(writer_options o, rotation_policy rotation, writer_ports ports)
    : o_{std::move(o)}, rotation_{std::move(rotation)}, ports_{ports} {
    if (!ports_.timings) ports_.timings = &timings_;
    if (!ports_.memory) ports_.memory = &memory_;
    if (!ports_.health) ports_.health = &health_;
}

router::busy_guard router::hold(const partition_writer& w) {
    ++busy_[&w];
    return busy_guard{busy_, &w};
}

bool router::busy(const partition_ref& p) const {
    const auto* w = find(p);
    return w && busy_.count(w) > 0;
}

task<std::size_t> router::relieve(std::uint64_t lack) {
    std::size_t closed = 0;
    auto& m = memory();
    const std::uint64_t target = std::min(m.relief_target(), m.buffered() > lack ? m.buffered() - lack : 0);
    while (m.limited() && m.buffered() > target) {
        partition_writer* best = nullptr;
        std::uint64_t most = 0;
        for (const auto& [p, w] : writers_) {
            if (busy_.count(w.get()) || w->state() != writer_state::running) continue;
            if (const auto n = w->largest_open_memory(); n > most) {
                most = n;
                best = w.get();
            }
        }
        if (!best) break;  // everything else is in the middle of a step: it frees what it holds itself
        log_.info({iss::log::kv("partition", best->partition()), iss::log::kv("buffered", m.buffered()),
                   iss::log::kv("max_buffered", m.limits().max_buffered), iss::log::kv("object_bytes", most)},
                  "memory.max_buffered reached: closing the largest open object early");
        const auto guard = hold(*best);
        const bool ok = co_await best->shed_largest(rotate_reason::memory_limit);
        ++closed;
        if (!ok) break;  // a failed or rewound delivery: try again at the next poll
    }
    co_return closed;
}

writer_counters& operator+=(writer_counters& t, const writer_counters& c) noexcept {
    t.objects_written += c.objects_written;
    t.objects_adopted += c.objects_adopted;
    t.records_written += c.records_written;
    t.records_dropped += c.records_dropped;
    t.bad_skipped += c.bad_skipped;
    t.bad_dead_lettered += c.bad_dead_lettered;
    t.retries += c.retries;
    t.commits += c.commits;
    t.payload_bytes_written += c.payload_bytes_written;
    t.bytes_uploaded += c.bytes_uploaded;
    t.bad_failed += c.bad_failed;
    return t;
}

partition_writer* router::find(const partition_ref& p) const {
    auto it = writers_.find(p);
    return it == writers_.end() ? nullptr : it->second.get();
}

task<partition_writer*> router::writer_for(const partition_ref& p) {
    if (auto* w = find(p)) co_return w;
    const offset_result r = co_await ports_.offsets.load_offset(p);
    if (r.status != offset_status::ok) {
        log_.warn({iss::log::kv("partition", p)}, "cannot read the committed offset ({}: {}); will retry",
                  to_string(r.status), r.detail);
        co_return nullptr;
    }
    if (r.reset) {  // the consumer stops the partition and says why (consumer_loop::offset_reset_at_load)
        load_resets_[p] = *r.reset;
        co_return nullptr;
    }
    auto w = std::make_unique<partition_writer>(p, o_, rotation_, ports_, r.offset);
    auto* raw = w.get();
    writers_.emplace(p, std::move(w));
    log_.info({iss::log::kv("partition", p)}, "partition writer started at offset {}",
              r.offset ? fmt::format("{}", *r.offset + 1) : std::string{"first"});
    co_return raw;
}

std::optional<std::string> router::take_load_reset(const partition_ref& p) {
    const auto it = load_resets_.find(p);
    if (it == load_resets_.end()) return std::nullopt;
    std::string why = std::move(it->second);
    load_resets_.erase(it);
    return why;
}

task<feed_status> router::feed(const partition_ref& p, std::span<const message> batch) {
    partition_writer* w = co_await writer_for(p);
    if (!w) co_return feed_status::rewind;
    const auto guard = hold(*w);
    co_return co_await w->feed(batch);
}

void router::check_spool() {
    // Only where objects are spooled at all (not at s3.part_size objects, not with max_spool 0).
    if (o_.plan.strategy == upload_strategy::single_part_conditional || memory().limits().max_spool == 0) return;
    const auto now = ports_.clock.steady_now();
    if (now < next_spool_check_) return;
    next_spool_check_ = now + spool_check_interval;
    auto& h = *ports_.health;
    if (auto r = spool::check_directory(o_.spool_dir, o_.part_size); !r) {
        const auto& e = r.error();
        const auto reason = spool_error_reason_of(e);
        if (h.spool_failed(reason, e.detail(), now))
            log_.error(
                "the spool directory cannot take a part ({}, {}): objects are closed at about s3.part_size "
                "until it can; free space in, or fix, memory.spool_dir; nothing is lost",
                e.detail(), to_string(reason));
    } else if (h.spool() && h.spool_ok()) {
        log_.info("the spool directory takes parts again ({})", spool::directory(o_.spool_dir));
    }
}

task<void> router::tick() {
    check_spool();
    // Writers may be added while we await; iterate over a snapshot of keys.
    for (const auto& p : partitions()) {
        if (auto* w = find(p); w && !busy_.count(w)) {
            const auto guard = hold(*w);
            co_await w->tick();
        }
    }
}

task<void> router::release(const partition_ref& p) {
    auto* w = find(p);
    if (!w) co_return;
    if (w->holds_data() || w->pending_commit()) {
        log_.info({iss::log::kv("partition", p)},
                  "hand-over: group polls stopped returning this partition; flushing it now");
        const auto guard = hold(*w);
        co_await w->flush(rotate_reason::hand_over);
    }
    forget(p);
}

void router::add_to_retired(const partition_writer& w) {
    const auto& p = w.partition();
    retired_[topic_ref{p.stream, p.topic}] += w.counters();
}

void router::forget(const partition_ref& p) {
    auto it = writers_.find(p);
    if (it == writers_.end()) return;
    add_to_retired(*it->second);
    writers_.erase(it);
}

void router::drop_all(std::string_view why) {
    for (auto& [p, w] : writers_) {
        w->drop(why);
        add_to_retired(*w);
    }
    writers_.clear();
}

task<bool> router::stop() {
    bool all = true;
    for (const auto& p : partitions()) {
        if (auto* w = find(p)) {
            if (w->state() != writer_state::running) continue;
            const auto guard = hold(*w);
            all = co_await w->flush(rotate_reason::stop) && all;
        }
    }
    co_return all;
}

std::optional<std::chrono::nanoseconds> router::time_to_due() const {
    std::optional<std::chrono::nanoseconds> best;
    for (const auto& [p, w] : writers_) {
        if (auto d = w->time_to_due(); d && (!best || *d < *best)) best = d;
    }
    return best;
}

bool router::holds_data() const noexcept {
    for (const auto& [p, w] : writers_)
        if (w->holds_data() || w->pending_commit()) return true;
    return false;
}

std::vector<partition_ref> router::partitions() const {
    std::vector<partition_ref> out;
    out.reserve(writers_.size());
    for (const auto& [p, w] : writers_) out.push_back(p);
    return out;
}

writer_counters router::totals() const {
    writer_counters t;
    for (const auto& [topic, c] : totals_by_topic()) t += c;
    return t;
}

std::map<topic_ref, writer_counters> router::totals_by_topic() const {
    auto out = retired_;
    for (const auto& [p, w] : writers_) out[topic_ref{p.stream, p.topic}] += w->counters();
    return out;
}

std::map<topic_ref, router::buffer_gauges> router::buffers_by_topic() const {
    std::map<topic_ref, buffer_gauges> out;
    for (const auto& [p, w] : writers_) {
        auto& g = out[topic_ref{p.stream, p.topic}];
        g.buffered_bytes += w->buffered_bytes();
        g.open_objects += w->holds_data() ? 1 : 0;
    }
    return out;
}

}  // namespace iss::pipeline
