// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The consumer loop: decides which partitions to poll, from which offset, and tells the
/// router about hand-overs and reconnects. It owns no data; the router and its writers do.
///
/// Why explicit offsets: Iggy's `Next` strategy starts at "stored offset + 1". With
/// `auto_commit = 0` and offsets stored only after upload (delivery.hpp, invariant 1), `Next`
/// would return the same messages on every poll until the object is uploaded. So every
/// poll names its partition and an `Offset` (the writer's `next_offset()`; `First` when
/// nothing is committed).
///
/// Single-consumer mode: every configured partition (or every partition of each topic) is
/// polled. With `partitions: all` the topic's partitions are listed again every
/// `metadata_interval`, so partitions added at run time (CreatePartitions) are polled from
/// their first message within that interval plus one round.
///
/// Concurrency: in each round every polled partition runs its step (poll, feed, and the
/// upload + commit of an object that rotates) as its own coroutine on the same executor, so
/// one partition's upload does not hold up the others (at most `max_parallel_partitions` at
/// once). In `run` the partitions run free within a round: one whose step fed messages
/// steps again at once, while the others are still in theirs, for `round_slice`; the round
/// then waits for the steps in flight, and the assignment, reconnects, ticks and the clean
/// stop happen between rounds, while no partition is in the middle of a step.
/// Within a partition everything stays sequential (delivery.hpp). Sources must hand out
/// replies whose messages outlive other polls (poll_reply::storage).
///
/// Group mode (docs/protocol.md §7.1): the server never says that a partition was taken
/// away; a pending revocation only shows as partition-less polls no longer returning it.
/// So, at most every `assignment_interval`, the loop learns its assignment with
/// partition-less polls of `count = 0` (the server's round-robin cursor walks over the
/// member's partitions, skipping pending revocations; one poll per partition of the topic
/// sees them all; partition 0 with newest offset 0 answers like "nothing to poll", which
/// `discover` resolves), and then polls the owned partitions explicitly (allowed for owned and
/// pending-revoked ones). A partition that drops out of the assignment, or for which an
/// explicit poll answers for another partition (not owned any more), is handed over at
/// once: `router::release` uploads and commits what it holds, so the revocation completes
/// well inside the server's 30 s timeout. A reconnect makes a new member: everything held
/// is dropped (`router::drop_all`) and the group is joined again.

#include "common/backoff.hpp"
#include "pipeline/router.hpp"

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace iss::pipeline {

/// One configured source: a topic, and its partitions (nullopt: all of them).
struct source_topic {
    topic_ref topic;
    std::optional<std::vector<std::uint32_t>> partitions;
};

struct consumer_options {
    consumer_mode mode = consumer_mode::single;
    std::vector<source_topic> sources;
    std::uint32_t poll_messages = 1000;            ///< iggy.poll.messages
    std::chrono::milliseconds poll_interval{100};  ///< iggy.poll.interval: wait when nothing came
    /// iggy.poll.max_idle_interval: after k empty polls in a row a partition is polled again
    /// only after poll_interval x 2^(k-1), at most this long; 0 = every round.
    std::chrono::milliseconds max_idle_interval{0};
    std::chrono::milliseconds assignment_interval{1000};  ///< group mode: how often to re-learn the assignment
    /// Single-consumer mode, `partitions: all`: how often each topic's partitions are listed
    /// again (GetTopic), to pick up partitions added at run time (docs/operations.md, Faults).
    std::chrono::milliseconds metadata_interval{5000};
    /// At most this many partitions are polled, fed and uploaded at once in a round (each
    /// may hold a poll batch and have one object upload in flight); 0 = all of them.
    std::size_t max_parallel_partitions = 8;
    /// Free-running partitions (`run`): within a round, a partition whose step fed a full
    /// batch is polled again as soon as that step ends (not when the slowest partition of the round
    /// is done), until the round has run this long or taken 64 steps per partition; then the
    /// round ends for the coordination (reconnect check, assignment, ticks). 0: one step per
    /// partition per round (what `round()` always does).
    std::chrono::milliseconds round_slice{500};
    /// A source topic that cannot be read (missing, no permission: a `fatal` answer) is
    /// tried again after backoff_ceiling(unavailable_backoff, failures - 1): 1 s, 2 s, 4 s ...
    /// up to 5 min, without jitter (one source, nothing to spread). Each failed try logs one
    /// error line; nothing is logged (or asked) in between.
    backoff_policy unavailable_backoff{std::chrono::seconds{1}, std::chrono::minutes{5}};
    /// Group mode: a member that has owned no partition for this long says so at warn (more
    /// members than partitions, or a server that no longer hands it any), then again after
    /// twice as long each time, up to every 10 min; 0 = never. Default: the server's default
    /// rebalance timeout (30 s), past which any hand-over to this member would have happened.
    std::chrono::milliseconds unassigned_warning{30000};
    /// Keys carry the topic's generation (`{topic_created}` in `naming.key`): each topic's
    /// creation time is learnt from GetTopic (also for a configured list of partitions), bound
    /// to each partition at its first poll and stamped on every message (message::topic_created_us);
    /// a partition is not polled before it is known.
    bool topic_generation = false;
    /// `iggy.on_offset_reset`. `earliest` (needs topic_generation): an offset reset whose topic
    /// has a new creation time restarts the partition at its first message, under the new
    /// generation. `fail`, or the creation time unchanged: the partition is stopped.
    offset_reset_policy on_offset_reset = offset_reset_policy::fail;
    /// An Iceberg table step is in use (`iceberg` set): an offset reset's remedy is then a new
    /// `iceberg.table` (or dropping the table), not a new `s3.prefix` (unused with a table;
    /// the table's summary keeps the partition stopped).
    bool iceberg_table = false;
};

/// A configured source topic that cannot be read at the moment (for readiness checks).
struct unavailable_source {
    topic_ref topic;
    std::optional<std::uint32_t> partition;  ///< nullopt: the topic itself (its lookup failed)
    std::string reason;                      ///< the last answer, naming what to check
    clock::steady_time since{};              ///< the first failed try of this run of failures
    clock::steady_time next_try{};           ///< when it is tried again
    unsigned failures = 0;                   ///< failed tries in a row
};

/// A partition stopped because the offset it would poll from lies past the partition's newest
/// offset: its topic was deleted and created again, the offsets starting at 0 again
/// (`iggy.on_offset_reset: fail`; docs/operations.md, Faults).
struct offset_reset {
    partition_ref partition;
    /// false: stopped (`fail`, or `earliest` with an unchanged creation time); true: restarted
    /// at the first message under a new generation (`earliest`; counted, not kept)
    bool restarted = false;
    std::uint64_t next_offset = 0;  ///< the offset the writer polls from (committed + 1)
    std::uint64_t head = 0;         ///< the partition's newest offset as the poll answered it (0: empty)
    clock::steady_time since{};     ///< when it was found
    /// which policy stopped the partition and why, for /readyz (e.g. "iggy.on_offset_reset: fail
    /// stopped the partition")
    std::string stopped_by;
    /// Empty: found by a poll (the next offset past the head). Else found when the offset was
    /// loaded (an Iceberg table's summary records an older creation time of the topic:
    /// offset_result::reset), saying so; next_offset and head are then 0.
    std::string found_at_load;
    /// found by the topic's creation time (GetTopic), not by `head` below `next_offset`
    bool creation_changed = false;
};

/// Drives polls into the router until stopped. Runs on the event-loop thread; not thread-safe
/// except `request_stop`, which must be called on the same executor.
class consumer_loop {
public:
    consumer_loop(consumer_options o, message_source& source, router& r, sleeper& sleep, const iss::clock& clock);

    /// Group mode: joins every topic's group. A topic whose join fails is not fatal: a fatal
    /// answer (missing stream or topic, permission denied) makes it an unavailable source,
    /// joined again at the `unavailable_backoff`; another failure is tried at the next
    /// discovery. joined() stays false meanwhile. Returns true (kept for the caller's exit path).
    task<bool> start();
    /// Group mode, before `start`: the groups of `topics` were joined on this connection by an
    /// earlier loop that kept them (`shutdown(false)`: a reload that kept the Iggy connection).
    /// start() takes them as joined without asking the server again, so the group's other
    /// members see no rebalance. Should the server have dropped the membership meanwhile, the
    /// next poll answers 5006 and the loop joins again as it always does.
    void take_over(std::set<topic_ref> topics);
    /// The topics whose group this loop has joined (group mode; empty in single mode).
    [[nodiscard]] const std::set<topic_ref>& joined_topics() const noexcept { return joined_; }
    /// One round over the assignment; returns the number of messages fed.
    task<std::size_t> round();
    /// Rounds until `request_stop`, waiting `poll_interval` (or less, when a writer is due
    /// for idle/schedule) after a round without messages; ticks the router after each round.
    task<void> run();
    /// Clean stop, after `run` returned: flushes and commits everything (router::stop), then
    /// leaves the groups. Returns true when nothing was left undelivered.
    task<bool> shutdown();
    /// As shutdown(), but with `leave_groups` false the groups stay joined (`joined_topics`),
    /// for the next loop on the same connection to `take_over`.
    task<bool> shutdown(bool leave_groups);
    /// Asks `run` to return after the current step (and wakes its wait).
    void request_stop();
    [[nodiscard]] bool stop_requested() const noexcept { return stop_; }
    /// The partitions currently polled.
    [[nodiscard]] std::vector<partition_ref> assignment() const;
    /// The source topics that could not be read at their last try (missing stream or topic,
    /// permission denied), oldest first; empty when every source is readable.
    [[nodiscard]] std::vector<unavailable_source> unavailable_sources() const;
    /// The partitions stopped by an offset reset (their topic was created again), in partition
    /// order; they are not polled until the daemon restarts.
    [[nodiscard]] std::vector<offset_reset> offset_resets() const;
    /// `iggy.on_offset_reset: earliest`: the offset resets of each topic that restarted a
    /// partition at its first message (for `offset_resets_total{action="restarted"}`).
    [[nodiscard]] const std::map<topic_ref, std::uint64_t>& offset_restarts() const noexcept { return restarts_; }
    /// The generation (topic creation time, µs) each partition's messages are stamped with
    /// (topic_generation only).
    [[nodiscard]] const std::map<partition_ref, std::uint64_t>& generations() const noexcept { return generation_; }
    /// Group mode: true while every configured topic's group is joined (the last join
    /// answered ok and no poll answered 5006 since). Single-consumer mode: always true.
    [[nodiscard]] bool joined() const;
    /// The newest offset of each partition as the last poll that knew it reported it
    /// (`current_offset` of the poll reply); partitions never seen non-empty are absent.
    [[nodiscard]] const std::map<partition_ref, std::uint64_t>& heads() const noexcept { return heads_; }
    /// Time until the first assigned partition is due for a poll (zero: one is due now, or
    /// polled every round; nullopt: nothing assigned).
    [[nodiscard]] std::optional<clock::steady_time::duration> time_to_next_poll() const;
    /// Rounds completed (each learnt the assignment, then polled it).
    [[nodiscard]] std::uint64_t rounds() const noexcept { return rounds_; }

private:
    task<void> discover(const source_topic& s);
    /// Group mode, after each discovery: the warning of `consumer_options::unassigned_warning`.
    void watch_assignment();
    /// source_.join, remembering the outcome for joined().
    task<source_status> join(topic_ref t);
    /// join(t); a fatal answer marks `t` unavailable (source_failed), success clears it.
    /// True when joined.
    task<bool> join_or_back_off(const topic_ref& t);
    task<void> check_session();
    /// One partition's step: poll from its writer's next offset, feed (which may upload and
    /// commit). `read_ahead` (free-running rounds): while a full batch is fed, the next one
    /// is polled, and fed in the same step when it follows on (up to 4 batches). Takes `p` by
    /// value: it runs as its own coroutine (poll_all). `*more`: the last batch fed was full
    /// (more is likely waiting); left alone when nothing was fed.
    task<std::size_t> poll_partition(partition_ref p, bool read_ahead, bool* more);
    /// The status of a poll of `p`: true for an answer to feed (the source is marked ok); else
    /// false, after what the status asks (not a member: drop and rejoin; fatal: source_failed).
    bool poll_answered(const partition_ref& p, partition_writer& w, const poll_result& r);
    /// True when `r` (an explicit poll of `p`) shows an offset reset: the next offset lies past
    /// the partition's newest one.
    [[nodiscard]] bool offset_reset_seen(const partition_ref& p, const partition_writer& w, const poll_reply& r) const;
    /// After a poll of `p` answered: notes the partition's newest offset (heads_); true when
    /// the answer shows an offset reset (offset_reset_seen), handled by offset_reset_found: `p`
    /// is not fed from this answer. Otherwise stamps `p`'s generation on the messages
    /// (topic_generation; a partition is not polled before its generation is known).
    task<bool> head_answered(partition_ref p, const partition_writer& w, poll_reply& r);
    /// Whether `p` may be polled now: its source not in a backoff (may_try), not stopped by an
    /// offset reset, its topic listed again after a fatal answer (recheck_creation) and, with
    /// topic_generation, its generation known. Takes `p` by value: a coroutine.
    task<bool> may_poll(partition_ref p);
    /// After offset_reset_seen: `earliest` with a new creation time restarts `p` at offset 0
    /// (restart_generation); otherwise the partition is stopped (recorded in resets_, logged
    /// once) and not polled any more.
    task<void> offset_reset_found(partition_ref p, std::uint64_t next, std::uint64_t head);
    /// Single mode, before polling a partition of `t` after `t` answered a fatal poll or listing
    /// (relist_): lists `t` again (note_creation); a creation time other than the one listed
    /// before means the topic was deleted and created again, even when the new topic already
    /// holds more messages than the old one did, so no head lies below a next offset. False:
    /// not listed (asked again before the next poll).
    task<bool> recheck_creation(topic_ref t);
    /// A listing of `t` answered `created_at` (0: not told): one other than the last one
    /// listed marks each partition of `t` with a writer (recreated_) and logs it once.
    void note_creation(const topic_ref& t, std::uint64_t created_at);
    /// The writer of `p` to poll (router::writer_for); nullptr: none now (its offset could not
    /// be loaded), or its load found an offset reset (offset_reset_at_load; then not loaded
    /// again). Takes `p` by value: a coroutine.
    task<partition_writer*> writer_of(partition_ref p);
    /// The load of `p`'s offset found an offset reset (router::take_load_reset: an Iceberg
    /// table's offsets are an older topic's): `p` is stopped (resets_, logged once, `why`).
    void offset_reset_at_load(const partition_ref& p, std::string why);
    /// What restart_generation found.
    enum class restart_outcome : std::uint8_t {
        restarted,   ///< a new creation time: `p` restarts at 0 under it
        same_topic,  ///< the creation time did not change: not a new topic
        held,        ///< new, but the writer holds data of the old topic (or a pending commit)
        unknown,     ///< GetTopic not answered: asked again at the next poll
    };
    /// `earliest`: asks GetTopic for the topic's creation time. New, and the writer holds
    /// nothing: the writer is dropped (the next one loads the offset stored for the new topic:
    /// none, so it reads from 0) and `p` takes the new generation.
    task<restart_outcome> restart_generation(partition_ref p, std::uint64_t next, std::uint64_t head);
    /// topic_generation: the generation `p`'s messages carry (bound at its first poll from the
    /// topic's creation time); nullopt while that is not known yet.
    std::optional<std::uint64_t> generation_of(const partition_ref& p);
    /// The partitions of a round, taken in turn by the workers of poll_all; with a slice, a
    /// partition whose step fed messages goes to the back again.
    struct work_queue {
        std::deque<partition_ref> parts;
        std::optional<clock::steady_time> until;  ///< free-running until then (nullopt: one step each)
        std::size_t steps_left = 0;               ///< free-running: steps the round may still take
    };
    /// One round: check_session, the assignment, then poll_all (free-running for `slice`).
    task<std::size_t> round(std::chrono::milliseconds slice);
    /// Runs poll_partition for every partition, up to `max_parallel_partitions` at once (and,
    /// for `slice`, again for each partition that fed messages); returns when all are done.
    task<std::size_t> poll_all(std::vector<partition_ref> parts, std::chrono::milliseconds slice);
    /// Takes partitions from `q` until none is left (one partition at a time).
    task<std::size_t> poll_worker(work_queue* q);
    /// The source's partitions: the configured list, or the topic's (nullopt: the lookup
    /// failed; a fatal answer marks the topic unavailable).
    task<std::optional<std::vector<std::uint32_t>>> partitions_of(const source_topic& s);
    /// May the topic be asked now (not unavailable, or its next try is due)?
    /// (`partition` nullopt: the topic's partition lookup; else that partition's polls.)
    [[nodiscard]] bool may_try(const topic_ref& t, std::optional<std::uint32_t> partition) const;
    /// A try answered fatal: logs once per try and schedules the next try.
    void source_failed(const topic_ref& t, std::optional<std::uint32_t> partition, const std::string& reason);
    /// A try succeeded: clears the unavailability (logged when it was set).
    void source_ok(const topic_ref& t, std::optional<std::uint32_t> partition);

    consumer_options o_;
    message_source& source_;
    router& router_;
    sleeper& sleep_;
    const iss::clock& clock_;
    iss::log::logger log_{"pipeline"};
    std::set<partition_ref> owned_;
    std::set<topic_ref> joined_;
    std::map<partition_ref, std::uint64_t> heads_;
    std::uint64_t rounds_ = 0;
    std::size_t paused_ = 0;       ///< partitions of this round not polled because of the memory budget
    std::uint64_t shortfall_ = 0;  ///< the most a writer of this round lacked (budget_shortfall)
    /// A partition whose polls came back empty: when to poll it next (absent: every round).
    struct idle_partition {
        clock::steady_time next{};
        std::uint8_t empty_polls = 0;
    };
    std::map<partition_ref, idle_partition> idle_;
    /// Notes an empty poll of `p` (its next poll waits longer) or one with messages (polled
    /// every round again).
    void note_poll(const partition_ref& p, bool empty);
    /// The partitions of `parts` due for a poll now.
    [[nodiscard]] std::vector<partition_ref> due(std::vector<partition_ref> parts) const;

    std::set<topic_ref> rejoin_;  ///< topics whose polls answered 5006 this round
    /// Single mode: when each topic's partitions are listed next (absent: not listed yet).
    std::map<topic_ref, clock::steady_time> next_listing_;
    std::map<std::pair<topic_ref, std::optional<std::uint32_t>>, unavailable_source> unavailable_;
    std::map<partition_ref, offset_reset> resets_;
    std::map<topic_ref, std::uint64_t> created_;  ///< topic_generation: each topic's creation time
    /// Each topic's creation time as its last listing answered it (any mode, any key).
    std::map<topic_ref, std::uint64_t> listed_created_;
    /// Single mode: topics that answered a fatal poll or listing (deleted?): listed again before
    /// their next poll, to compare their creation time (recheck_creation).
    std::set<topic_ref> relist_;
    /// Partitions whose topic's creation time changed under them (recheck_creation): their next
    /// poll answer is an offset reset whatever the partition's head.
    std::set<partition_ref> recreated_;
    std::map<partition_ref, std::uint64_t> generation_;  ///< the generation each partition reads
    std::map<topic_ref, std::uint64_t> restarts_;        ///< earliest: partitions restarted at 0
    std::optional<std::uint64_t> session_;
    clock::steady_time next_discovery_{};
    std::optional<clock::steady_time> unassigned_since_;  ///< group mode: owning nothing since
    clock::steady_time next_unassigned_warning_{};
    unsigned unassigned_warnings_ = 0;
    bool stop_ = false;
};

}  // namespace iss::pipeline
