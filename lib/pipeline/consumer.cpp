// SPDX-License-Identifier: Apache-2.0
#include "pipeline/consumer.hpp"

#include "common/net/task_group.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/this_coro.hpp>

#include <algorithm>
#include <exception>
#include <memory>

namespace iss::pipeline {

consumer_loop::consumer_loop(consumer_options o, message_source& source, router& r, sleeper& sleep,
                             const iss::clock& clock)
    : o_{std::move(o)}, source_{source}, router_{r}, sleep_{sleep}, clock_{clock} {}

task<bool> consumer_loop::start() {
    session_ = source_.session();
    if (o_.mode != consumer_mode::group) co_return true;
    for (const auto& s : o_.sources) {
        if (joined_.count(s.topic)) continue;  // taken over from the loop before (take_over)
        co_await join_or_back_off(s.topic);
    }
    co_return true;
}

void consumer_loop::take_over(std::set<topic_ref> topics) {
    if (o_.mode != consumer_mode::group) return;
    for (const auto& s : o_.sources)
        if (topics.count(s.topic)) joined_.insert(s.topic);
}

// A fatal join (the stream or topic does not exist, or the user may not join) is a source
// that cannot be read, as for polls and lookups: logged, tried again at the backoff, the
// other sources going on, and picked up once it can be joined. Exiting instead would make
// group mode the only one that cannot start before its topic is created.
task<bool> consumer_loop::join_or_back_off(const topic_ref& t) {
    const source_status st = co_await join(t);
    if (st == source_status::ok) {
        source_ok(t, std::nullopt);
        co_return true;
    }
    if (st == source_status::fatal) {
        source_failed(t, std::nullopt,
                      "the consumer group cannot be joined: check that the stream and topic exist and that the user "
                      "may join (the warning before names the server's answer)");
    } else {
        log_.warn({iss::log::kv("stream", t.stream), iss::log::kv("topic", t.topic)},
                  "joining the consumer group failed ({}); will retry", to_string(st));
    }
    co_return false;
}

task<source_status> consumer_loop::join(topic_ref t) {
    const source_status st = co_await source_.join(t);
    if (st == source_status::ok) joined_.insert(t);
    else joined_.erase(t);
    co_return st;
}

bool consumer_loop::joined() const {
    if (o_.mode != consumer_mode::group) return true;
    return std::all_of(o_.sources.begin(), o_.sources.end(),
                       [&](const source_topic& s) { return joined_.count(s.topic) > 0; });
}

void consumer_loop::request_stop() {
    stop_ = true;
    sleep_.interrupt();
}

std::vector<partition_ref> consumer_loop::assignment() const { return {owned_.begin(), owned_.end()}; }

std::vector<unavailable_source> consumer_loop::unavailable_sources() const {
    std::vector<unavailable_source> out;
    for (const auto& [k, u] : unavailable_) out.push_back(u);
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.since < b.since; });
    return out;
}

std::vector<offset_reset> consumer_loop::offset_resets() const {
    std::vector<offset_reset> out;
    for (const auto& [p, r] : resets_) out.push_back(r);
    return out;
}

bool consumer_loop::may_try(const topic_ref& t, std::optional<std::uint32_t> partition) const {
    const auto it = unavailable_.find({t, partition});
    return it == unavailable_.end() || clock_.steady_now() >= it->second.next_try;
}

// Naive version: log every failed poll or lookup, i.e. one error line per poll interval
// (10 a second) for as long as a source is missing, and keep asking the server as often.
// Instead a fatal answer marks the source unavailable; it is asked again only after a
// growing interval (unavailable_backoff), and each of those tries logs one line.
void consumer_loop::source_failed(const topic_ref& t, std::optional<std::uint32_t> partition,
                                  const std::string& reason) {
    const auto now = clock_.steady_now();
    if (o_.mode == consumer_mode::single) relist_.insert(t);  // deleted? its creation time is asked again
    auto [it, fresh] = unavailable_.try_emplace({t, partition});
    auto& u = it->second;
    // Several partitions of a round may fail the same try: count (and log) it once.
    if (!fresh && now < u.next_try) return;
    if (fresh) {
        u.topic = t;
        u.partition = partition;
        u.since = now;
    }
    u.reason = reason;
    const auto delay = backoff_ceiling(o_.unavailable_backoff, u.failures);
    ++u.failures;
    u.next_try = now + delay;
    iss::log::fields f{iss::log::kv("stream", t.stream), iss::log::kv("topic", t.topic)};
    if (partition) f.push_back(iss::log::kv("partition", *partition));
    if (fresh) {
        log_.error(f, "source cannot be read: {}; not polled until it can, next try in {} ms", reason, delay.count());
    } else {
        log_.error(f, "source still cannot be read after {} tries over {} s: {}; next try in {} ms", u.failures,
                   std::chrono::duration_cast<std::chrono::seconds>(now - u.since).count(), reason, delay.count());
    }
}

void consumer_loop::source_ok(const topic_ref& t, std::optional<std::uint32_t> partition) {
    const auto it = unavailable_.find({t, partition});
    if (it == unavailable_.end()) return;
    iss::log::fields f{iss::log::kv("stream", t.stream), iss::log::kv("topic", t.topic)};
    if (partition) f.push_back(iss::log::kv("partition", *partition));
    log_.info(f, "source can be read again (after {} failed tries)", it->second.failures);
    unavailable_.erase(it);
}

// Offset reset: the offset we poll from lies past the partition's newest offset. Offsets only
// grow, so the topic was deleted and created again (its offsets start at 0 again); polling on
// would answer nothing for ever, and silently (consumer_assignment.cpp decides what follows).
bool consumer_loop::offset_reset_seen(const partition_ref& p, const partition_writer& w, const poll_reply& r) const {
    const auto from = w.next_offset();
    // The topic's creation time changed (recheck_creation): whatever the head, what the writer
    // goes on from is the old topic's offset.
    if (recreated_.count(p)) return from && *from > 0;
    if (!r.messages.empty() || !from || *from <= r.current_offset + 1) return false;
    // Group mode: `0, 0, no messages` is also the answer to a poll of partition 0 by a member
    // that does not own it (docs/protocol.md §7.1): not evidence of a new topic.
    return !(o_.mode == consumer_mode::group && r.current_offset == 0);
}

namespace {
/// topic_generation: puts the generation a poll was made under on each of its messages;
/// returns the reply's newest offset.
std::uint64_t stamped_head(poll_reply& r, std::optional<std::uint64_t> generation) {
    if (generation)
        for (auto& m : r.messages) m.topic_created_us = *generation;
    return r.current_offset;
}
}  // namespace

task<bool> consumer_loop::may_poll(partition_ref p) {
    const topic_ref t{p.stream, p.topic};
    if (!may_try(t, std::nullopt) || !may_try(t, p.partition) || resets_.count(p)) co_return false;
    if (relist_.count(t)) {
        const bool listed = co_await recheck_creation(t);
        if (!listed) co_return false;
    }
    co_return !(o_.topic_generation && !generation_of(p));
}

task<bool> consumer_loop::head_answered(partition_ref p, const partition_writer& w, poll_reply& r) {
    // The partition's newest offset, as the server reports it with every poll (0 with no
    // messages is also what an empty partition answers: no head known then).
    if (r.current_offset > 0 || !r.messages.empty()) heads_[p] = r.current_offset;
    if (!offset_reset_seen(p, w, r)) {
        recreated_.erase(p);  // it held nothing of the old topic: the new one is read from its start
        stamped_head(r, generation_of(p));
        co_return false;
    }
    const std::uint64_t next = w.next_offset().value_or(0);
    const std::uint64_t head = r.current_offset;
    co_await offset_reset_found(p, next, head);
    co_return true;
}

bool consumer_loop::poll_answered(const partition_ref& p, partition_writer& w, const poll_result& r) {
    const topic_ref t{p.stream, p.topic};
    switch (r.status) {
        case source_status::ok: source_ok(t, p.partition); return true;
        case source_status::not_member:
            if (o_.mode == consumer_mode::group) {
                w.drop("not a member of the consumer group (5006 or 5000)");
                router_.forget(p);
                owned_.erase(p);
                next_discovery_ = {};
                joined_.erase(t);
                rejoin_.insert(t);  // joined once, after every partition of this round is done
            }
            return false;
        case source_status::retryable:
            log_.debug({iss::log::kv("partition", p)}, "poll failed ({}); the client reconnects", r.detail);
            return false;
        case source_status::fatal: source_failed(t, p.partition, fmt::format("poll: {}", r.detail)); return false;
    }
    return false;
}

namespace {
/// The memory a poll reply's messages hold (each also counted into the budget's average).
std::uint64_t reply_bytes(memory_budget& mem, const std::vector<message>& messages) {
    std::uint64_t bytes = 0;
    for (const auto& m : messages) {
        const std::uint64_t n = m.payload.size() + m.user_headers.size() + sizeof(message) + 64;
        bytes += n;
        mem.saw_message(n);
    }
    return bytes;
}
}  // namespace

task<std::size_t> consumer_loop::poll_partition(partition_ref p, bool read_ahead, bool* more) {
    if (stop_) co_return 0;
    // A reconnect since the round began (a new group member): what the writers hold belongs
    // to the old one; the next round's check_session drops it. Until then nothing is polled.
    const std::uint64_t session = source_.session();
    if (session_ && session != *session_) co_return 0;
    partition_writer* w = co_await writer_of(p);
    if (!w) co_return 0;
    if (w->state() == writer_state::revoked) {
        router_.forget(p);
        owned_.erase(p);
        co_return 0;
    }
    if (w->state() == writer_state::failed) co_return 0;
    const topic_ref t{p.stream, p.topic};
    const bool may = co_await may_poll(p);  // (GCC 12: not in a condition)
    if (!may) co_return 0;
    const auto generation = generation_of(p);
    // The memory budget (memory.hpp): make room when it is full, let the biggest holders
    // wait near it, and ask for no more messages than fit.
    auto& mem = router_.memory();
    if (mem.hard_limit_reached()) co_await router_.relieve();
    if (router_.busy(p) || w->state() != writer_state::running) co_return 0;
    if (mem.soft_limit_reached() && mem.above_fair_share(w->memory_bytes())) {
        ++paused_;
        co_return 0;
    }
    std::uint32_t count = mem.poll_allowance(o_.poll_messages);
    if (count == 0) {
        co_await router_.relieve();
        count = mem.poll_allowance(o_.poll_messages);
        if (count == 0 || router_.busy(p)) {
            ++paused_;
            co_return 0;
        }
    }
    // Busy from here to the end of the step (not busy now: checked above, with no wait since):
    // a relief started by another partition while this poll is in flight must not close
    // objects of this writer while the step then feeds it.
    const auto step = router_.hold(*w);
    memory_budget::charge batch{&mem};
    batch.set(count * mem.average_message_bytes(), 0);  // the reply is on its way
    poll_result r = co_await source_.poll(t, p.partition, w->next_offset(), count);
    if (!poll_answered(p, *w, r)) co_return 0;
    if (source_.session() != session) co_return 0;  // answered on a new connection: re-polled then
    if (o_.mode == consumer_mode::group && r.reply.partition != p.partition) {
        // An explicit poll of a partition neither owned nor pending revocation answers as
        // partition 0: it is someone else's now. Hand over what we hold at once.
        log_.info({iss::log::kv("partition", p)}, "partition no longer ours (hand-over)");
        co_await router_.release(p);
        owned_.erase(p);
        co_return 0;
    }
    const bool reset = co_await head_answered(p, *w, r.reply);  // (GCC 12: not in a condition)
    if (reset) co_return 0;
    note_poll(p, r.reply.messages.empty());
    if (r.reply.messages.empty()) co_return 0;
    std::size_t fed = 0;
    for (unsigned batches = 1;; ++batches) {
        batch.set(reply_bytes(mem, r.reply.messages), 0);
        // Reading ahead (`run` only): a full batch says more is waiting, so the poll for the
        // next one goes out now and is answered while this one is formatted and fed (one
        // batch ahead, at most 4 batches per step, within the memory budget).
        const std::uint64_t next_from = r.reply.messages.back().offset + 1;
        std::uint32_t ahead_count = 0;
        if (read_ahead && batches < 4 && r.reply.messages.size() >= count && !stop_ && !mem.soft_limit_reached())
            ahead_count = mem.poll_allowance(o_.poll_messages);
        memory_budget::charge ahead_batch{&mem};
        std::optional<poll_result> ahead;
        // `ahead` lives in this frame, which waits for the child below before it goes on.
        iss::task_group group{co_await boost::asio::this_coro::executor};
        if (ahead_count > 0) {
            ahead_batch.set(ahead_count * mem.average_message_bytes(), 0);
            group.spawn(source_.poll(t, p.partition, next_from, ahead_count),
                        [&ahead](poll_result x) { ahead = std::move(x); });
        }
        // The child refers to this frame: it is waited for even when the feed throws.
        feed_status st = feed_status::stopped;
        std::exception_ptr failed;
        try {
            st = co_await router_.feed(p, r.reply.messages);
        } catch (...) {
            failed = std::current_exception();
        }
        co_await group.wait();
        if (failed) std::rethrow_exception(failed);
        if (st == feed_status::rewind) {
            // Not all fed (the memory budget is full, or a delivery asked to re-read): polled
            // again from next_offset(); counted as held back, so a round of these makes room.
            // (A batch read ahead is dropped: it does not follow on from what was fed.)
            ++paused_;
            if (const auto* ww = router_.find(p)) shortfall_ = std::max(shortfall_, ww->budget_shortfall());
            co_return fed;
        }
        if (st == feed_status::stopped) {
            if (auto* ww = router_.find(p); ww && ww->state() == writer_state::revoked) {
                router_.forget(p);
                owned_.erase(p);
            }
            co_return fed + r.reply.messages.size();
        }
        fed += r.reply.messages.size();
        // The batch read ahead is fed only when it follows on exactly from what was fed; any
        // other answer (an error, another partition's, a gap) is dropped, and the next step
        // polls as usual and sees it for itself.
        // More waiting? (A full batch, unless the one read ahead found nothing after it.)
        *more = r.reply.messages.size() >= count &&
                !(ahead && ahead->status == source_status::ok && ahead->reply.messages.empty());
        const partition_writer* ww = router_.find(p);
        if (!ahead || ahead->status != source_status::ok || ahead->reply.partition != p.partition ||
            source_.session() != session || ahead->reply.messages.empty() ||
            ahead->reply.messages.front().offset != next_from || !ww || ww->state() != writer_state::running ||
            ww->next_offset() != next_from)
            co_return fed;
        heads_[p] = stamped_head(ahead->reply, generation);
        r = std::move(*ahead);
        count = ahead_count;
        batch = std::move(ahead_batch);
    }
}

task<std::size_t> consumer_loop::round() { co_return co_await round(std::chrono::milliseconds{0}); }

task<std::size_t> consumer_loop::round(std::chrono::milliseconds slice) {
    co_await check_session();
    if (o_.mode == consumer_mode::group) {
        if (clock_.steady_now() >= next_discovery_) {
            for (const auto& s : o_.sources) {
                if (!may_try(s.topic, std::nullopt)) continue;
                // Not joined (the topic was missing, or a join failed): join before learning
                // the assignment; a member that is not joined owns nothing.
                if (!joined_.count(s.topic)) {
                    const bool now_joined = co_await join_or_back_off(s.topic);  // (GCC 12: not in a condition)
                    if (!now_joined) continue;
                }
                co_await discover(s);
            }
            next_discovery_ = clock_.steady_now() + o_.assignment_interval;
            watch_assignment();
        }
    } else {
        // Each topic is listed until it has partitions, and with `partitions: all` again
        // every metadata_interval: partitions added at run time are polled from then on (a
        // topic listed once would never see them). One that cannot be read is asked again
        // at its backoff, without holding up the others.
        const auto now = clock_.steady_now();
        for (const auto& s : o_.sources) {
            const auto it = next_listing_.find(s.topic);
            if ((it != next_listing_.end() && now < it->second) || !may_try(s.topic, std::nullopt)) continue;
            const auto parts = co_await partitions_of(s);
            if (!parts || parts->empty()) continue;
            const bool first = it == next_listing_.end();
            next_listing_[s.topic] = s.partitions ? clock::steady_time::max() : now + o_.metadata_interval;
            for (std::uint32_t n : *parts) {
                const partition_ref p{s.topic.stream, s.topic.topic, n};
                if (owned_.insert(p).second && !first) log_.info({iss::log::kv("partition", p)}, "partition added");
            }
        }
    }
    paused_ = 0;
    shortfall_ = 0;
    const std::size_t n = co_await poll_all(due(assignment()), slice);
    // Near the memory budget with nothing fed: every partition that has data was held back,
    // so none would reach the hard limit that makes room. Make room here: down to the relief
    // target, and as much more as a held-back partition lacked (below the soft limit too: what
    // it lacks can be more than the relief target leaves).
    if (n == 0 && paused_ > 0 && (router_.memory().soft_limit_reached() || shortfall_ > 0))
        co_await router_.relieve(shortfall_);
    for (const auto& t : rejoin_) co_await join(t);
    rejoin_.clear();
    ++rounds_;
    co_return n;
}

// Every partition of the round is polled, fed and (when an object rotates) uploaded and
// committed in its own coroutine, concurrently with the others: one partition's upload no
// longer stalls the polls, formatting and uploads of the rest. Within a partition nothing
// changes (one coroutine does poll -> feed -> upload -> commit in order, and at most one
// object of it is in flight), which is all the delivery contract asks (delivery.hpp).
// A round that waited for its slowest partition after every step would leave the worker pool
// idle while one partition uploads; so in `run` (a slice) a partition that fed messages goes
// to the back of the queue and steps again, and the round ends once the slice is over and
// the steps in flight are done. Assignment changes, ticks, reconnects and the clean stop
// happen between rounds, while no partition is in the middle of a step.
// Polls share the Iggy connection (its lock serialises them); each reply owns a copy of its
// messages (poll_reply::storage), so another partition's poll cannot overwrite a batch that
// is still being fed.
task<std::size_t> consumer_loop::poll_worker(work_queue* q) {
    std::size_t n = 0;
    while (!q->parts.empty()) {
        const partition_ref p = q->parts.front();
        q->parts.pop_front();
        bool more = false;
        const std::size_t fed = co_await poll_partition(p, q->until.has_value(), &more);
        n += fed;
        // Free-running: its last batch was full, so more is waiting: poll it again now (behind
        // the partitions waiting). A partition that is caught up waits for the next round, as
        // do one handed over or revoked meanwhile and every one after a reconnect.
        if (fed > 0 && more && q->until && !stop_ && q->steps_left > 0 && clock_.steady_now() < *q->until &&
            owned_.count(p) > 0 && (!session_ || source_.session() == *session_)) {
            --q->steps_left;
            q->parts.push_back(p);
        }
    }
    co_return n;
}

task<std::size_t> consumer_loop::poll_all(std::vector<partition_ref> parts, std::chrono::milliseconds slice) {
    work_queue q;
    q.parts.assign(parts.begin(), parts.end());
    if (slice.count() > 0) {
        q.until = clock_.steady_now() + slice;
        q.steps_left = 64 * q.parts.size();
    }
    std::size_t workers = q.parts.size();
    if (o_.max_parallel_partitions > 0) workers = std::min<std::size_t>(workers, o_.max_parallel_partitions);
    if (workers == 0) co_return 0;
    if (workers == 1) co_return co_await poll_worker(&q);
    // `q` and `fed` live in this frame, which outlives the workers: it waits for all of them.
    // (A worker leaves when the queue is empty: every partition still stepping is then in
    // another worker's hands, and that worker takes it again.)
    iss::task_group group{co_await boost::asio::this_coro::executor};
    std::size_t fed = 0;
    for (std::size_t i = 0; i < workers; ++i) group.spawn(poll_worker(&q), [&fed](std::size_t n) { fed += n; });
    co_await group.wait();  // rethrows the first worker's exception
    co_return fed;
}

// Naive version: every assigned partition is polled every round, so 10 000 partitions of which
// 100 are busy cost 10 000 round trips per round. Instead a partition that keeps answering
// empty is polled at a doubling interval (capped by max_idle_interval); a poll with messages
// puts it back in every round. Only idle partitions have an entry here.
void consumer_loop::note_poll(const partition_ref& p, bool empty) {
    if (!empty || o_.max_idle_interval.count() <= 0) {
        idle_.erase(p);
        return;
    }
    auto& st = idle_[p];
    if (st.empty_polls < 30) ++st.empty_polls;
    auto wait = o_.poll_interval;
    for (unsigned i = 1; i < st.empty_polls && wait < o_.max_idle_interval; ++i) wait *= 2;
    st.next = clock_.steady_now() + std::min(wait, o_.max_idle_interval);
}

std::vector<partition_ref> consumer_loop::due(std::vector<partition_ref> parts) const {
    const auto now = clock_.steady_now();
    std::erase_if(parts, [&](const partition_ref& p) {
        // A writer whose upload the store refused waits out its backoff (group mode:
        // partition_writer::retry_at; pipeline/health.hpp).
        if (const auto* w = router_.find(p); w && w->retry_at() && now < *w->retry_at()) return true;
        const auto it = idle_.find(p);
        // (A writer that holds data is ticked by the router, not polled: the wait is only
        // for new messages.)
        return it != idle_.end() && now < it->second.next;
    });
    return parts;
}

std::optional<clock::steady_time::duration> consumer_loop::time_to_next_poll() const {
    std::optional<clock::steady_time> first;
    for (const auto& p : owned_) {
        const auto it = idle_.find(p);
        if (it == idle_.end()) return clock::steady_time::duration::zero();
        if (!first || it->second.next < *first) first = it->second.next;
    }
    if (!first) return std::nullopt;
    const auto now = clock_.steady_now();
    return *first > now ? *first - now : clock::steady_time::duration::zero();
}

task<void> consumer_loop::run() {
    while (!stop_) {
        const std::size_t n = co_await round(o_.round_slice);
        if (stop_) break;
        co_await router_.tick();
        if (n == 0 && !stop_) {
            // Until the first partition is due (all idle ones wait their interval), but not
            // past the next assignment check or a writer's idle/schedule time.
            auto wait = o_.poll_interval;
            if (auto d = time_to_next_poll(); d && *d > wait) wait = std::chrono::ceil<std::chrono::milliseconds>(*d);
            if (o_.mode == consumer_mode::group)
                wait =
                    std::min(wait, std::max(std::chrono::milliseconds{0}, std::chrono::ceil<std::chrono::milliseconds>(
                                                                              next_discovery_ - clock_.steady_now())));
            if (auto d = router_.time_to_due()) wait = std::min(wait, std::chrono::ceil<std::chrono::milliseconds>(*d));
            if (wait.count() > 0) co_await sleep_.sleep_for(wait);
        }
    }
}

task<bool> consumer_loop::shutdown() { co_return co_await shutdown(true); }

task<bool> consumer_loop::shutdown(bool leave_groups) {
    const bool delivered = co_await router_.stop();
    if (o_.mode == consumer_mode::group && leave_groups) {
        for (const auto& s : o_.sources) co_await source_.leave(s.topic);
        joined_.clear();
    }
    const auto t = router_.totals();
    log_.info("stopped: {} objects written, {} adopted, {} records written, {} skipped, {} dead-lettered, {} commits{}",
              t.objects_written, t.objects_adopted, t.records_written, t.bad_skipped, t.bad_dead_lettered, t.commits,
              delivered ? "" : "; some data was NOT delivered (it will be re-read from the committed offsets)");
    co_return delivered;
}

}  // namespace iss::pipeline
