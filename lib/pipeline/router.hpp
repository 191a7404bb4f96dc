// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The router: one partition_writer per (stream, topic, partition), made on first use with
/// the offset committed in Iggy. It owns the writers and awaits them one at a time (the
/// sequencing that delivery.hpp relies on). The consumer loop (consumer.hpp) calls it.

#include "pipeline/delivery.hpp"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <vector>

namespace iss::pipeline {

class router {
public:
    /// `ports` outlive the router.
    router(writer_options o, rotation_policy rotation, writer_ports ports);
    /// Writers refer to the router's options: it never moves.
    router(const router&) = delete;
    router& operator=(const router&) = delete;

    /// The writer for `p`, made when missing (loads the committed offset). nullptr when the
    /// committed offset could not be read (retry on the next poll), or when the load found an
    /// offset reset (`offset_result::reset`: kept for `take_load_reset`; no writer is made).
    task<partition_writer*> writer_for(const partition_ref& p);
    /// The offset reset the last load of `p`'s offset found (offset_result::reset), once.
    [[nodiscard]] std::optional<std::string> take_load_reset(const partition_ref& p);
    /// The writer for `p` if there is one.
    [[nodiscard]] partition_writer* find(const partition_ref& p) const;
    /// Feeds a poll batch to `p`'s writer (made when missing).
    task<feed_status> feed(const partition_ref& p, std::span<const message> batch);
    /// Closes and uploads the largest open objects of writers not in the middle of a step
    /// until the memory budget is down to its relief target (memory.hpp) and, when `lack`
    /// is set, until `lack` more bytes are free than now (a held-back writer's
    /// budget_shortfall, which can be more than the relief target leaves). Returns the number
    /// of objects closed.
    task<std::size_t> relieve(std::uint64_t lack = 0);
    /// True while a step of `p`'s writer (feed, tick, flush, relief) is running: its
    /// partition must not be polled or fed meanwhile.
    [[nodiscard]] bool busy(const partition_ref& p) const;
    /// The budget every writer charges (the ports' one, else the router's own, unlimited).
    [[nodiscard]] memory_budget& memory() noexcept { return *ports_.memory; }
    [[nodiscard]] const memory_budget& memory() const noexcept { return *ports_.memory; }
    /// Rotates whatever idle/schedule says is due; retries pending commits; checks the spool
    /// directory every `spool_check_interval` (check_spool).
    task<void> tick();
    /// Where objects are spooled (a multipart strategy, memory.max_spool > 0): checks that the
    /// spool directory can take one more part (spool::check_directory); a failed check is a
    /// spool error (health()), a passing one ends a spool fault. At most every
    /// `spool_check_interval`.
    void check_spool();
    static constexpr std::chrono::seconds spool_check_interval{5};
    /// The store refusals and spool faults the writers met (the ports' one, else the router's own).
    [[nodiscard]] const delivery_health& health() const noexcept { return *ports_.health; }
    /// Hand-over (group polls stopped returning `p`): flush at once, upload, commit, forget.
    task<void> release(const partition_ref& p);
    /// Forgets every writer and what it holds, without uploading (after a reconnect).
    void drop_all(std::string_view why);
    /// Forgets `p` (revoked writers; their data is durable or already dropped).
    void forget(const partition_ref& p);
    /// Clean stop: flushes every writer; true when nothing is held any more.
    task<bool> stop();
    /// Time until the next writer is due for idle/schedule (nullopt: none).
    [[nodiscard]] std::optional<std::chrono::nanoseconds> time_to_due() const;
    [[nodiscard]] std::vector<partition_ref> partitions() const;
    /// True while any writer holds records (open or being uploaded) or a durable range whose
    /// commit is still pending: what a clean stop has to deliver.
    [[nodiscard]] bool holds_data() const noexcept;
    /// Counters summed over current and forgotten writers.
    [[nodiscard]] writer_counters totals() const;
    /// The same, per topic (current and forgotten writers).
    [[nodiscard]] std::map<topic_ref, writer_counters> totals_by_topic() const;
    /// What the writers of a topic hold now.
    struct buffer_gauges {
        std::uint64_t buffered_bytes = 0;  ///< open objects' bytes, in memory or spooled
        std::uint64_t open_objects = 0;    ///< writers with an open object
    };
    [[nodiscard]] std::map<topic_ref, buffer_gauges> buffers_by_topic() const;
    /// Upload and commit durations of every writer (unless the ports named other timings).
    [[nodiscard]] const delivery_timings& timings() const noexcept { return *ports_.timings; }
    [[nodiscard]] const writer_options& options() const noexcept { return o_; }

    /// Marks a writer busy for the lifetime of the guard (counted: holds nest). The consumer
    /// holds a partition's writer for its whole step (poll, feed, read-ahead), so no relief
    /// or tick runs in the writer while the step's poll is in flight.
    class busy_guard {
    public:
        busy_guard(std::map<const partition_writer*, unsigned>& holds, const partition_writer* w) noexcept
            : holds_{holds}, w_{w} {}
        busy_guard(const busy_guard&) = delete;
        busy_guard& operator=(const busy_guard&) = delete;
        ~busy_guard() {
            const auto it = holds_.find(w_);
            if (it != holds_.end() && --it->second == 0) holds_.erase(it);
        }

    private:
        std::map<const partition_writer*, unsigned>& holds_;
        const partition_writer* w_;
    };
    [[nodiscard]] busy_guard hold(const partition_writer& w);

private:
    void add_to_retired(const partition_writer& w);
    writer_options o_;
    rotation_policy rotation_;
    writer_ports ports_;
    iss::log::logger log_{"pipeline"};
    std::map<partition_ref, std::unique_ptr<partition_writer>> writers_;
    std::map<partition_ref, std::string> load_resets_;  ///< writer_for found an offset reset
    std::map<topic_ref, writer_counters> retired_;
    delivery_timings timings_;
    memory_budget memory_;
    delivery_health health_;
    clock::steady_time next_spool_check_{};
    std::map<const partition_writer*, unsigned> busy_;  ///< writers in a step, and how many holds
};

/// Adds every counter of `c` to `t`.
writer_counters& operator+=(writer_counters& t, const writer_counters& c) noexcept;

}  // namespace iss::pipeline
