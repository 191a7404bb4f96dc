// SPDX-License-Identifier: Apache-2.0
// consumer_loop's membership side (lib/pipeline/consumer.hpp): the session check, the topic's
// partitions and generation (its creation time), which partitions this member owns in its
// consumer group (discover), the warning when it owns none, and what an offset reset does
// (iggy.on_offset_reset). consumer.cpp has the polling side.
#include "pipeline/consumer.hpp"

#include <boost/asio/awaitable.hpp>

#include <algorithm>
#include <memory>

namespace iss::pipeline {

task<void> consumer_loop::check_session() {
    const std::uint64_t now = source_.session();
    if (session_ && *session_ != now) {
        if (o_.mode == consumer_mode::group) {
            // A new connection is a new group member (docs/architecture.md §3.5): what the old member
            // held may be re-read by another owner; drop it and re-read from the committed
            // offsets.
            router_.drop_all("reconnected to Iggy: a new connection is a new group member");
            owned_.clear();
            next_discovery_ = {};
            joined_.clear();
            for (const auto& s : o_.sources) co_await join(s.topic);
        }
        log_.info("reconnected to Iggy (session {})", now);
    }
    session_ = now;
}

task<std::optional<std::vector<std::uint32_t>>> consumer_loop::partitions_of(const source_topic& s) {
    if (s.partitions && (!o_.topic_generation || created_.count(s.topic))) co_return *s.partitions;
    auto r = co_await source_.partitions(s.topic);
    if (r.status == source_status::fatal) {
        source_failed(s.topic, std::nullopt, r.detail);
        co_return std::nullopt;
    }
    if (r.status != source_status::ok) {
        log_.warn({iss::log::kv("stream", s.topic.stream), iss::log::kv("topic", s.topic.topic)}, "{}", r.detail);
        co_return std::nullopt;
    }
    source_ok(s.topic, std::nullopt);
    relist_.erase(s.topic);  // listed: its creation time is known again
    note_creation(s.topic, r.created_at);
    // The creation time as listed now; a partition keeps the generation it was bound to until
    // an offset reset moves it (a listing alone never moves it: what it reads is of one topic).
    if (o_.topic_generation) created_[s.topic] = r.created_at;
    if (s.partitions) co_return *s.partitions;
    co_return std::move(r.ids);
}

std::optional<std::uint64_t> consumer_loop::generation_of(const partition_ref& p) {
    if (!o_.topic_generation) return std::nullopt;
    if (const auto g = generation_.find(p); g != generation_.end()) return g->second;
    const auto c = created_.find(topic_ref{p.stream, p.topic});
    if (c == created_.end()) return std::nullopt;
    generation_.emplace(p, c->second);
    return c->second;
}

task<bool> consumer_loop::recheck_creation(topic_ref t) {
    auto r = co_await source_.partitions(t);
    if (r.status != source_status::ok) {
        if (r.status == source_status::fatal) source_failed(t, std::nullopt, r.detail);
        co_return false;
    }
    relist_.erase(t);
    source_ok(t, std::nullopt);
    note_creation(t, r.created_at);
    co_return true;
}

void consumer_loop::note_creation(const topic_ref& t, std::uint64_t created_at) {
    if (created_at == 0) return;  // not told
    const auto [before, first] = listed_created_.try_emplace(t, created_at);
    if (first || before->second == created_at) return;
    log_.warn({iss::log::kv("stream", t.stream), iss::log::kv("topic", t.topic)},
              "the topic's creation time changed ({} -> {} µs): it was deleted and created again", before->second,
              created_at);
    before->second = created_at;
    for (const auto& p : owned_) {
        if (p.stream != t.stream || p.topic != t.topic || !router_.find(p)) continue;
        // earliest restarted it on this topic already (restart_generation): it reads the new one.
        if (const auto g = generation_.find(p); g != generation_.end() && g->second == created_at) continue;
        recreated_.insert(p);
    }
}

task<void> consumer_loop::offset_reset_found(partition_ref p, std::uint64_t next, std::uint64_t head) {
    const bool by_creation = recreated_.erase(p) > 0;
    if (resets_.count(p)) co_return;
    std::string_view why =
        o_.iceberg_table
            ? "the topic was deleted and created again. iggy.on_offset_reset: fail stops this partition; its new "
              "messages are not read. To read them, set iceberg.table to a new table (or drop the table) and "
              "restart: the table records the old topic's offsets, which would hide the new topic's first messages"
            : "the topic was deleted and created again. iggy.on_offset_reset: fail stops this partition; its new "
              "messages are not read. To read them, point s3.prefix at a new location (the new topic's offsets would "
              "name the old objects' keys) and restart";
    std::string_view stopped_by = "iggy.on_offset_reset: fail stopped the partition";
    if (o_.on_offset_reset == offset_reset_policy::earliest) {
        const auto outcome = co_await restart_generation(p, next, head);
        if (outcome == restart_outcome::unknown && by_creation) recreated_.insert(p);  // asked again next poll
        if (outcome == restart_outcome::unknown || outcome == restart_outcome::restarted) co_return;
        const bool same = outcome == restart_outcome::same_topic;
        stopped_by = same ? "iggy.on_offset_reset: earliest stopped the partition: its topic's creation time did "
                            "not change (the same topic)"
                          : "iggy.on_offset_reset: earliest stopped the partition: it still holds messages of the "
                            "old topic; restart the daemon to read the new topic from its first message";
        why = same ? "but the topic's creation time did not change, so it is the same topic: iggy.on_offset_reset: "
                     "earliest does not apply and the partition is stopped (were messages removed by hand?)"
                   : "the topic was deleted and created again, but the partition still holds messages of the old "
                     "topic whose offset cannot be stored on the new one: iggy.on_offset_reset: earliest stops the "
                     "partition (what it holds is uploaded at the stop); restart the daemon to read the new topic "
                     "from its first message under its own keys";
    }
    offset_reset found{p, false, next, head, clock_.steady_now(), std::string(stopped_by)};
    found.creation_changed = by_creation;
    resets_.try_emplace(p, std::move(found));
    if (by_creation)
        log_.error({iss::log::kv("partition", p)},
                   "offset reset: the topic's creation time changed while the partition was to go on from offset {} "
                   "(the new topic's newest offset is {}): {} (docs/operations.md, Faults)",
                   next, head, why);
    else
        log_.error({iss::log::kv("partition", p)},
                   "offset reset: the next offset {} lies past the partition's newest offset {}: {} "
                   "(docs/operations.md, Faults)",
                   next, head, why);
}

task<partition_writer*> consumer_loop::writer_of(partition_ref p) {
    if (resets_.count(p) && !router_.find(p)) co_return nullptr;  // stopped at the load of its offset: not again
    partition_writer* w = co_await router_.writer_for(p);
    if (!w)
        if (auto why = router_.take_load_reset(p)) offset_reset_at_load(p, std::move(*why));
    co_return w;
}

void consumer_loop::offset_reset_at_load(const partition_ref& p, std::string why) {
    if (resets_.count(p)) return;
    log_.error({iss::log::kv("partition", p)}, "offset reset: {} (docs/operations.md, Faults)", why);
    offset_reset r{p, false, 0, 0, clock_.steady_now(), "iggy.on_offset_reset: fail stopped the partition"};
    r.found_at_load = std::move(why);
    resets_.try_emplace(p, std::move(r));
}

task<consumer_loop::restart_outcome> consumer_loop::restart_generation(partition_ref p, std::uint64_t next,
                                                                       std::uint64_t head) {
    const topic_ref t{p.stream, p.topic};
    auto r = co_await source_.partitions(t);
    if (r.status != source_status::ok) co_return restart_outcome::unknown;  // asked again at the next poll
    const auto old = generation_of(p);
    if (old && *old == r.created_at) co_return restart_outcome::same_topic;
    created_[t] = r.created_at;
    // What the writer holds was read from the old topic; its offset could never be stored on
    // the new one (4100), and a single consumer retries a store without end.
    if (const auto* w = router_.find(p); w && (w->holds_data() || w->pending_commit())) co_return restart_outcome::held;
    router_.forget(p);  // the next writer loads the new topic's stored offset: none, so from 0
    generation_[p] = r.created_at;
    ++restarts_[t];
    log_.warn({iss::log::kv("partition", p)},
              "offset reset: the next offset {} lies past the partition's newest offset {}: the topic was deleted and "
              "created again (created_at {} -> {}). iggy.on_offset_reset: earliest reads the new topic from its first "
              "message, under keys with {{topic_created}} {}; the old topic's objects stay as they are",
              next, head, old ? *old : 0, r.created_at, r.created_at);
    co_return restart_outcome::restarted;
}

namespace {
/// The group poll answer `partition 0, current_offset 0, no messages` (see discover).
bool zero_answer(const poll_reply& r) noexcept {
    return r.partition == 0 && r.current_offset == 0 && r.messages.empty();
}
}  // namespace

task<void> consumer_loop::discover(const source_topic& s) {
    const auto all = co_await partitions_of(s);
    if (!all && !may_try(s.topic, std::nullopt)) co_return;  // unavailable: keep the previous assignment
    const std::size_t polls = std::max<std::size_t>(1, all ? all->size() : 0);
    std::set<std::uint32_t> seen;
    std::size_t zero_answers = 0;  // `0, 0, no messages`: see below
    for (std::size_t i = 0; i < polls; ++i) {
        const poll_result r = co_await source_.poll(s.topic, std::nullopt, std::nullopt, 0);
        if (r.status == source_status::not_member) {
            // 5006 (or 5000: the group went with the topic): we are not a member (any more): drop
            // what we hold for this topic, join again.
            log_.warn({iss::log::kv("stream", s.topic.stream), iss::log::kv("topic", s.topic.topic)},
                      "not a member of the consumer group any more ({}): dropping what is held for the topic "
                      "(re-read from the committed offsets) and joining again",
                      r.detail);
            for (const auto& p : assignment()) {
                if (p.stream == s.topic.stream && p.topic == s.topic.topic) {
                    if (auto* w = router_.find(p)) w->drop("not a member of the consumer group (5006 or 5000)");
                    router_.forget(p);
                    owned_.erase(p);
                }
            }
            joined_.erase(s.topic);
            co_await join(s.topic);
            co_return;
        }
        if (r.status != source_status::ok) co_return;  // keep the previous assignment
        if (zero_answer(r.reply)) {
            ++zero_answers;
            continue;
        }
        seen.insert(r.reply.partition);
    }
    // `0, 0, no messages` answers both "nothing to poll" and "partition 0, newest offset 0"
    // (empty, or holding only offset 0; docs/protocol.md §5.6, §7.1; the same in G2, where
    // the client picks from SyncConsumerGroup). When another poll named a partition, the member
    // had one to poll, so the server picked partition 0. When every poll answered so (and they
    // covered the topic's partitions), only partition 0 can be ours: one poll of count 1 tells
    // (its message, or `0, 0` again: nothing to poll, or partition 0 still empty). Only then,
    // because a group poll that returns messages sets the server's polled-offset record (which
    // decides when a revocation completes, docs/protocol.md §7.1) to its last offset: a poll
    // of another partition from its first offset would move that record back.
    if (zero_answers > 0 && !seen.empty()) {
        seen.insert(0);
    } else if (zero_answers > 0 && all) {
        const poll_result r = co_await source_.poll(s.topic, std::nullopt, std::nullopt, 1);
        if (r.status != source_status::ok) co_return;  // keep the previous assignment
        if (!r.reply.messages.empty()) seen.insert(r.reply.partition);
    }
    for (const auto& p : assignment()) {
        if (p.stream != s.topic.stream || p.topic != s.topic.topic || seen.count(p.partition)) continue;
        log_.info({iss::log::kv("partition", p)}, "partition no longer assigned (hand-over)");
        co_await router_.release(p);
        owned_.erase(p);
    }
    for (std::uint32_t n : seen) {
        partition_ref p{s.topic.stream, s.topic.topic, n};
        if (owned_.insert(p).second) log_.info({iss::log::kv("partition", p)}, "partition assigned");
    }
}

void consumer_loop::watch_assignment() {
    const auto now = clock_.steady_now();
    if (!owned_.empty() || o_.unassigned_warning.count() <= 0) {
        unassigned_since_.reset();
        unassigned_warnings_ = 0;
        return;
    }
    if (!unassigned_since_) {
        unassigned_since_ = now;
        next_unassigned_warning_ = now + o_.unassigned_warning;
        return;
    }
    if (now < next_unassigned_warning_) return;
    const auto idle = std::chrono::duration_cast<std::chrono::seconds>(now - *unassigned_since_);
    log_.warn({iss::log::kv("unassigned_for", fmt::format("{}s", idle.count()))},
              "this member has owned no partition of its consumer group for {} s: more members than "
              "partitions, or the server hands it none; still polling",
              idle.count());
    ++unassigned_warnings_;
    const backoff_policy repeat{o_.unassigned_warning,
                                std::max<std::chrono::milliseconds>(o_.unassigned_warning, std::chrono::minutes{10})};
    next_unassigned_warning_ = now + backoff_ceiling(repeat, unassigned_warnings_);
}

}  // namespace iss::pipeline
