// SPDX-License-Identifier: Apache-2.0
// The delivery contract: see the essay at the top of delivery.hpp before changing anything
// here. Every function below says which invariant it serves. This file: the plan, the key
// check and the partition writer's intake (feed, rotation, open objects, the commit point);
// getting objects into the store is delivery_upload.cpp, storing offsets delivery_commit.cpp.
#include "pipeline/delivery.hpp"

#include "pipeline/delivery_internal.hpp"
#include "pipeline/error.hpp"

#include <boost/asio/awaitable.hpp>

#include <algorithm>
#include <cassert>
#include <cstring>
#include <memory>
#include <span>

namespace iss::pipeline {

// ---------------------------------------------------------------------------------------
// Invariant 4: the strategy follows the probed capabilities; the guarantee is named.

result<delivery_plan> plan_delivery(store_capabilities caps, conditional_writes cw, consumer_mode mode) {
    const std::string_view rebalance =
        mode == consumer_mode::group ? "; in a consumer group a forced rebalance can duplicate (never lose) data" : "";
    if (cw == conditional_writes::off) {
        return delivery_plan{
            upload_strategy::head_then_write, false,
            fmt::format("s3.conditional_writes=off: exactly-once after crashes for a single owner (HEAD before each "
                        "write adopts what exists){}",
                        rebalance)};
    }
    if (!caps.conditional_put) {
        if (cw == conditional_writes::required) return error{errc::conditional_required, "s3.conditional_writes"};
        return delivery_plan{
            upload_strategy::head_then_write, false,
            fmt::format("the store ignores If-None-Match on PutObject: exactly-once after crashes for a single owner "
                        "(HEAD before each write adopts what exists){}",
                        rebalance)};
    }
    if (caps.conditional_complete) {
        return delivery_plan{
            upload_strategy::multipart_conditional, true,
            "exactly-once in the bucket: every object is written once with If-None-Match (PutObject, and "
            "CompleteMultipartUpload above s3.part_size) and a 412 adopts the existing object's range"};
    }
    return delivery_plan{
        upload_strategy::single_part_conditional, true,
        "exactly-once in the bucket: the store ignores If-None-Match on CompleteMultipartUpload, so objects "
        "are closed at s3.part_size and written only with a conditional PutObject; a 412 adopts the existing "
        "object's range"};
}

// Invariant 2: keys depend on (partition, first offset) only.
result<void> check_key_namer(const key_namer& namer, const partition_ref& sample) {
    const auto a = namer.key(sample, 0);
    const auto b = namer.key(sample, 0);
    if (a != b)
        return error{errc::nondeterministic_key, fmt::format("{:?} then {:?} for the same input", a.get(), b.get())};
    const auto c = namer.key(sample, 1);
    if (c == a) return error{errc::nondeterministic_key, "the key does not contain the first offset ({start_offset})"};
    partition_ref other = sample;
    other.partition += 1;
    if (namer.key(other, 1) == c) return error{errc::nondeterministic_key, "the key does not contain the partition"};
    const auto big1 = namer.key(sample, 18'446'744'073'709'551'615ull);
    const auto big2 = namer.key(sample, 18'446'744'073'709'551'615ull);
    if (big1 != big2) return error{errc::nondeterministic_key, "renders differently for the same input"};
    return {};
}

// ---------------------------------------------------------------------------------------
// The partition writer

namespace {
/// One encoded partition as a list (GCC 12 miscompiles braced lists inside coroutines).
std::vector<std::string> just(const std::string& id) {
    std::vector<std::string> v;
    v.push_back(id);
    return v;
}
}  // namespace

partition_writer::partition_writer(partition_ref p, const writer_options& o, const rotation_policy& rotation,
                                   writer_ports ports, std::optional<std::uint64_t> committed)
    : p_{std::move(p)},
      o_{o},
      rotation_{rotation},
      ports_{ports},
      log_{"pipeline",
           {iss::log::kv("stream", p_.stream), iss::log::kv("topic", p_.topic),
            iss::log::kv("partition", p_.partition)}},
      ledger_{committed},
      last_commit_{ports_.clock.system_now()},
      rng_{std::random_device{}()} {}

partition_writer::~partition_writer() = default;

open_object_state partition_writer::rotation_state(const open_object& o) const {
    open_object_state s;
    s.records = o.records;
    s.bytes = o.spilled.size() + o.buf.size() + o.encoder->buffered();
    s.first_timestamp_us = o.first_timestamp_us;
    s.last_append = o.last_append;
    s.schedule_deadline = o.schedule_deadline;
    return s;
}

void partition_writer::recharge(open_object& o) const noexcept {
    // The encoder's codec state (a zstd context: MiBs) counts as much as the buffer does.
    o.held.set(o.buf.capacity() + (o.encoder ? o.encoder->memory() : 0), o.spilled.disk_bytes());
}

namespace {
/// The buffer size `m` needs appended to `size` bytes: an estimate of the record's encoded
/// size (escaping and framing rarely double it).
std::size_t append_need(std::size_t size, const message& m) noexcept {
    return size + 2 * (m.payload.size() + m.user_headers.size()) + 512;
}
}  // namespace

std::uint64_t partition_writer::budget_lack(const open_object* o, const message& m) const noexcept {
    if (!ports_.memory || !ports_.memory->limited()) return 0;
    const std::size_t size = o ? o->buf.size() : 0;
    const std::size_t capacity = o ? o->buf.capacity() : 0;
    // (A new object's codec state is charged once it exists: a zstd context appears with its
    // first full block, and a small object never has one; the relief that follows makes room.)
    const std::size_t need = append_need(size, m);
    if (need <= capacity || need - capacity <= ports_.memory->free()) return 0;
    // Nothing but the batch being fed holds memory: a message larger than the budget still
    // moves, but only into an object without records yet. One with records is closed first
    // (the shortfall makes the consumer relieve it): no object is grown past the budget.
    const std::uint64_t own = o && o->held.memory() > 0 ? 1 : 0;
    if ((!o || o->records == 0) && ports_.memory->holders() - own <= 1) return 0;
    return need - capacity - ports_.memory->free();
}

void partition_writer::reserve_for(open_object& o, std::size_t need) const {
    if (need <= o.buf.capacity()) return;
    std::size_t grow = std::min<std::size_t>(2 * o.buf.capacity(), o_.part_size + 4096);
    // Past its first 64 KiB an object is likely to fill a part: room for the whole part at
    // once (doubling would copy it again and again), unless memory is short.
    if (o.buf.size() >= 64 * 1024 &&
        (!ports_.memory || !ports_.memory->limited() || ports_.memory->free() >= 4 * (o_.part_size + 4096)))
        grow = o_.part_size + 4096;
    // Within the memory budget: grow by no more than what is free (`budget_lack` checked that
    // the record itself fits, unless nothing else holds memory).
    if (ports_.memory && ports_.memory->limited())
        grow = std::min<std::size_t>(grow, o.buf.capacity() + ports_.memory->free());
    // std::string::reserve rounds a growth below twice the capacity up to twice: allocate
    // the new capacity exactly instead (or take a kept part buffer), and move the bytes over
    // (what a reallocation does).
    const std::size_t want = std::max(need, grow);
    std::string bigger;
    if (ports_.memory) {
        bigger = ports_.memory->take_buffer(want, o.buf.capacity());
    } else {
        bigger.reserve(want);
    }
    bigger.append(o.buf);
    o.buf.swap(bigger);
    if (ports_.memory) ports_.memory->give_buffer(std::move(bigger));
}

std::uint64_t partition_writer::memory_bytes() const noexcept {
    std::uint64_t n = 0;
    objects_.for_each([&n](open_object_entry& e) { n += as_object(e).held.memory(); });
    return n;
}

std::uint64_t partition_writer::largest_open_memory() const noexcept {
    std::uint64_t n = 0;
    objects_.for_each_open([&n](open_object_entry& e) { n = std::max(n, as_object(e).held.memory()); });
    return n;
}

task<bool> partition_writer::shed_largest(rotate_reason why) {
    if (state_ != writer_state::running || objects_.empty()) co_return false;
    const auto largest = objects_.largest([](const open_object_entry& e) { return as_object(e).held.memory(); });
    const delivered d = co_await close_and_deliver(just(*largest), why);
    co_return d == delivered::ok;
}

std::uint64_t partition_writer::buffered_bytes() const noexcept {
    if (encoding_) return encoding_snapshot_;  // the buffers are a pool thread's (feed_run)
    std::uint64_t n = 0;
    objects_.for_each([&n](open_object_entry& e) {
        const auto& o = as_object(e);
        n += o.spilled.size() + o.buf.size();
    });
    return n;
}

std::optional<std::chrono::nanoseconds> partition_writer::time_to_due() const {
    // (While a run is formatted the partition is in a step, which ends with the decisions.)
    if (state_ != writer_state::running || encoding_) return std::nullopt;
    std::optional<std::chrono::nanoseconds> best;
    if (ledger_.pending()) {
        // A failed store (group mode) is tried when its backoff ends; else (a deferred table
        // step, or a backoff already over) after base: never 0, which would spin the loop.
        const auto now = ports_.clock.steady_now();
        best = store_retry_at_ && *store_retry_at_ > now
                   ? std::chrono::duration_cast<std::chrono::nanoseconds>(*store_retry_at_ - now)
                   : std::chrono::nanoseconds{o_.retry_backoff.base};
    }
    objects_.for_each_open([&](open_object_entry& e) {
        const auto d =
            rotation_.time_to_due(rotation_state(as_object(e)), ports_.clock.steady_now(), ports_.clock.system_now());
        if (d && (!best || *d < *best)) best = d;
    });
    return best;
}

partition_writer::open_object& partition_writer::open(const message& m, const encoded_partition& e) {
    auto o = std::make_unique<open_object>(o_.spool_dir, ports_.memory);
    o->encoded = e.id;
    o->bucket = e.bucket;
    // Invariant 2: the key is rendered once, from the partition, the first offset and the
    // first message's own data only.
    o->key = ports_.namer.key_for(p_, m);
    o->encoder = ports_.encoders.make();
    if (ports_.part_hashers) o->hasher = ports_.part_hashers();
    o->encoder->begin(o->buf);
    recharge(*o);
    o->first_offset = o->last_offset = m.offset;
    o->first_timestamp_us = m.timestamp_us;
    o->last_append = ports_.clock.steady_now();
    o->schedule_deadline = rotation_.schedule_deadline(ports_.clock.system_now());
    return as_object(objects_.open(std::move(o)));
}

void partition_writer::drop(std::string_view why) {
    std::uint64_t records = 0;
    objects_.for_each([&records](open_object_entry& e) { records += as_object(e).records; });
    if (records > 0 || objects_.holds()) {
        counters_.records_dropped += records;
        log_.warn({iss::log::kv("objects", objects_.count())}, "dropping {} buffered records without uploading: {}",
                  records, why);
    }
    objects_.clear();
    ledger_.dropped();
}

task<feed_status> partition_writer::feed(std::span<const message> batch) {
    lookahead_.reset();
    budget_shortfall_ = 0;
    for (std::size_t i = 0; i < batch.size();) {
        if (state_ != writer_state::running) co_return feed_status::stopped;
        const message& m = batch[i++];
        if (const auto next = ledger_.next(); next && m.offset < *next) continue;  // held, or adopted
        const feed_status s = co_await feed_one(m);
        if (s != feed_status::ok) co_return s;
        if (i < batch.size()) {
            std::size_t taken = 0;
            const feed_status r = co_await feed_run(batch.subspan(i), taken);
            i += taken;
            if (r != feed_status::ok) co_return r;
        }
    }
    co_return state_ == writer_state::running ? feed_status::ok : feed_status::stopped;
}

// performance.workers: the naive version posts every record's formatting to a pool thread
// and back (a round trip per message, and the pool thread would read the memory budget and
// the writer's offsets while the event loop changes them). Instead, after feed_one placed a
// message in an object, the messages that follow and go to the SAME object with nothing to
// decide on the way (same encoded partition and time bucket, no adoption being re-read, the
// buffer reserved for them here, no rotation or part boundary before the last one) are one
// run: formatted and compressed into that object's buffer on a pool thread by encode_run,
// which touches only the object; the bookkeeping and every decision (spool, rotation, the
// commit point) stay on the event loop, after the run, exactly as feed_one would have made
// them. The partition is busy meanwhile (router), so nothing else touches the object.
// Without a pool (performance.workers 1) the same run is formatted right here: one clock
// read, one reservation and one after_append for the run instead of one per message
// (benchmark raw cell, workers 1: docs/operations.md "CPU and workers").
task<feed_status> partition_writer::feed_run(std::span<const message> rest, std::size_t& taken) {
    taken = 0;
    open_object* const op = appended_to_;
    appended_to_ = nullptr;
    if (!op || ledger_.adopting()) co_return feed_status::ok;
    // Still open? (By address only: after_append may have closed and freed it.)
    bool still_open = false;
    objects_.for_each_open([op, &still_open](open_object_entry& e) { still_open |= &as_object(e) == op; });
    if (!still_open) co_return feed_status::ok;
    open_object& o = *op;
    // How far the buffer may grow for this run: at most 1 MiB beyond what the object holds at
    // once (an object that rotates soon does not keep a part's worth charged), never past a
    // part, within memory.max_buffered; and while the object is small (under 64 KiB) no
    // further than its capacity or the next record: the buffer grows as reserve_for always
    // grows it (doubling, then a whole part), never to an odd size in between, which would
    // be allocated fresh and take a kept part buffer's place (measured: page faults and
    // clears on every object of the json_lines cell). Past it the run stops and feed_one
    // grows the buffer as it always does.
    std::size_t room = std::min<std::size_t>(o_.part_size + 4096, o.buf.size() + (std::size_t{1} << 20));
    if (ports_.memory && ports_.memory->limited())
        room = std::min<std::size_t>(room, o.buf.capacity() + ports_.memory->free());
    if (o.buf.size() < 64 * 1024)
        room = std::min(room, std::max(o.buf.capacity(), append_need(o.buf.size(), rest.front())));
    // Keys from the records (or time buckets): the namer keeps parse buffers, so it runs
    // here, only as far as the room reaches (estimated as feed_one estimates a record); the
    // run ends before the first message that belongs elsewhere, whose key goes to feed_one
    // parsed (lookahead_): no key is parsed twice.
    if (ports_.namer.record_dependent() || ports_.namer.closes_on_later_bucket()) {
        // (Estimated as the need below: what reaches is reserved, and encode_run takes it
        // unless a part boundary or a rotation limit comes first. The first record is checked
        // against the room below.)
        std::size_t reach = 1;
        for (std::size_t at = append_need(o.buf.size(), rest.front()); reach < rest.size() && reach < 512; ++reach) {
            at = append_need(at - 512, rest[reach]);
            if (at > room) break;
        }
        std::size_t same = 0;
        for (; same < reach; ++same) {
            auto enc = ports_.namer.encode(p_, rest[same]);
            if (!enc || enc->id != o.encoded || enc->bucket != o.bucket) {
                if (enc) lookahead_.emplace(rest[same].offset, std::move(*enc));
                break;
            }
        }
        rest = rest.first(same);
        if (rest.empty()) co_return feed_status::ok;
    }
    // Room for the run in the buffer, charged to the budget before the pool thread writes:
    // the run stops where the next record might not fit (feed_one then decides).
    std::size_t need = o.buf.size();
    for (const message& m : rest) {
        need = append_need(need, m) - 512;
        if (need >= o_.part_size) break;
    }
    need = std::min(need + 512, room);
    reserve_for(o, need);
    recharge(o);  // (before anything else: what was reserved is charged)
    // Not even the first record fits: no round trip to the pool for nothing.
    if (append_need(o.buf.size(), rest.front()) > o.buf.capacity()) co_return feed_status::ok;
    // A short run (a trickle) costs less here than the round trip to a pool thread.
    std::size_t payload = 0;
    for (std::size_t i = 0; i < rest.size() && i < 16; ++i) payload += rest[i].payload.size();
    std::size_t n = 0;
    const bool pooled = ports_.workers && ports_.workers->threads() > 0;
    if (!pooled || (rest.size() < 16 && payload < (std::size_t{64} << 10))) {
        n = encode_run(o, rest);
    } else {
        // A run that fills a part spools it on the pool thread too (the copy into the page
        // cache is the biggest cost after formatting): one part, charged to max_spool before
        // it is written, and only where after_append would spool it (a multipart object,
        // room in max_spool); anything else is left to after_append.
        const std::size_t spill_room = o_.plan.strategy != upload_strategy::single_part_conditional &&
                                               (!ports_.memory || ports_.memory->spool_allows(o_.part_size))
                                           ? static_cast<std::size_t>(o_.part_size)
                                           : 0;
        if (spill_room > 0)
            o.held.set(o.held.memory(), std::max(o.spilled.disk_bytes(), o.spilled.size() + spill_room));
        encoding_snapshot_ = buffered_bytes();
        encoding_ = true;
        struct done_encoding {
            bool& flag;
            ~done_encoding() { flag = false; }
        } guard{encoding_};
        n = co_await ports_.workers->run([this, &o, rest, spill_room] {
            const std::size_t k = encode_run(o, rest);
            if (spill_room > 0 && o.buf.size() >= spill_room && o.buf.size() < 2 * spill_room) {
                // (A failed write leaves the buffer as it was: after_append tries and decides.)
                if (o.spilled.append(std::string_view{o.buf}.substr(0, spill_room))) o.buf.erase(0, spill_room);
            }
            return k;
        });
        recharge(o);
    }
    taken = n;
    if (n == 0) co_return feed_status::ok;
    // One clock read for the run: its messages were appended at the same moment.
    const clock::steady_time now = ports_.clock.steady_now();
    for (std::size_t k = 0; k < n; ++k) appended(o, rest[k], now);
    co_return co_await after_append(o);
}

std::size_t partition_writer::encode_run(open_object& o, std::span<const message> rest) const {
    const bool one_part = o_.plan.strategy == upload_strategy::single_part_conditional;
    const std::uint64_t cap = one_part ? o_.part_size : 0;
    open_object_state st = rotation_state(o);
    std::uint64_t last = o.last_offset;
    std::size_t k = 0;
    while (k < rest.size()) {
        const message& m = rest[k];
        if (m.offset <= last) break;  // not ascending: feed_one decides
        if (append_need(o.buf.size(), m) > o.buf.capacity()) break;
        if (rotation_.span_exceeded(st, m.timestamp_us)) break;
        if (!o.encoder->append(m, p_, o.buf)) break;  // a bad message: feed_one applies the policy
        ++k;
        last = m.offset;
        st = rotation_state(o);  // (o.records counts the run only once it is back: add it)
        st.records += k;
        // The decisions after an append (after_append) wait for the event loop.
        if (!one_part && o.buf.size() >= o_.part_size) break;
        if (rotation_.full(st, cap)) break;
    }
    checksum_new_bytes(o);  // (here, while the run's bytes are still in this core's cache)
    return k;
}

void partition_writer::checksum_new_bytes(open_object& o) const {
    if (!o.hasher) return;
    const std::uint64_t spilled = o.spilled.size();
    const std::uint64_t end = spilled + o.buf.size();
    if (o.tail && o.sum_through < end) o.hasher.reset();  // bytes after the tail was summed: none known
    if (!o.hasher) return;
    const std::uint64_t part = o_.part_size;
    while (o.sum_through < end) {
        const std::uint64_t part_end = (o.sum_through / part + 1) * part;
        const std::uint64_t upto = std::min(end, part_end);
        o.hasher->update({o.buf.data() + (o.sum_through - spilled), static_cast<std::size_t>(upto - o.sum_through)});
        o.sum_through = upto;
        if (upto == part_end) o.part_sums.push_back(o.hasher->finish());
    }
}

body_digests partition_writer::part_checksum(open_object& o, std::uint64_t offset,
                                             std::uint64_t length) const noexcept {
    const std::uint64_t total = o.spilled.size() + o.buf.size();
    if (!o.hasher || o.sum_through != total || length == 0) return {};
    const std::uint64_t part = o_.part_size;
    if (offset % part != 0 || length > part) return {};  // not one of the parts summed
    const std::uint64_t k = offset / part;
    if (k < o.part_sums.size()) return length == part ? o.part_sums[k] : body_digests{};
    if (k != o.part_sums.size() || offset + length != total) return {};
    if (!o.tail) o.tail = o.hasher->finish();  // the last, partial part: summed once, kept for retries
    return *o.tail;
}

feed_status partition_writer::to_feed(delivered d) noexcept {
    switch (d) {
        case delivered::ok: return feed_status::ok;
        case delivered::stopped: return feed_status::stopped;
        case delivered::rewound:
        case delivered::given_up: return feed_status::rewind;
    }
    return feed_status::stopped;
}

task<feed_status> partition_writer::feed_one(const message& m) {
    appended_to_ = nullptr;  // set below once `m` is in an object
    // (feed_run parsed this message's key already when it ended its run before it.)
    result<encoded_partition> enc = lookahead_ && lookahead_->first == m.offset
                                        ? result<encoded_partition>{std::move(lookahead_->second)}
                                        : ports_.namer.encode(p_, m);
    lookahead_.reset();
    if (!enc && ledger_.classify_unreadable(m.offset) == intake::pass_over) {
        ledger_.passed_over(m.offset);  // re-read after an adoption: handled (skipped or dead-lettered) before
        co_return feed_status::ok;
    }
    if (!enc) {
        const delivered d = co_await handle_bad_message(m, enc.error(), nullptr);
        co_return to_feed(d);
    }
    const std::string& id = enc->id;
    switch (ledger_.classify(id, m.offset)) {
        case intake::pass_over: ledger_.passed_over(m.offset); co_return feed_status::ok;
        case intake::covered: ledger_.handled_through(m.offset); co_return feed_status::ok;  // adopted earlier
        case intake::take: break;
    }

    // Closing rules that act before the message is appended; after each, an adoption may
    // cover the message.
    if (enc->bucket && ports_.namer.closes_on_later_bucket()) {
        if (auto to_close = objects_.earlier_buckets(*enc->bucket); !to_close.empty()) {
            const delivered d = co_await close_and_deliver(std::move(to_close), rotate_reason::time_bucket);
            if (d != delivered::ok) co_return to_feed(d);
            if (ledger_.covered(id, m.offset)) {
                ledger_.handled_through(m.offset);
                co_return feed_status::ok;
            }
        }
    }
    if (auto* e = objects_.find(id); e && rotation_.span_exceeded(rotation_state(as_object(*e)), m.timestamp_us)) {
        const delivered d = co_await close_and_deliver(just(id), rotate_reason::max_span);
        if (d != delivered::ok) co_return to_feed(d);
        if (ledger_.covered(id, m.offset)) {
            ledger_.handled_through(m.offset);
            co_return feed_status::ok;
        }
    }
    open_object* found = objects_.find(id) ? &as_object(*objects_.find(id)) : nullptr;
    // memory.max_buffered full: leave this message and the rest of the batch to a later poll
    // (from next_offset()), once the consumer has made room by closing the largest objects.
    if (const std::uint64_t lack = budget_lack(found, m); lack > 0) {
        budget_shortfall_ = lack;
        co_return feed_status::rewind;
    }
    if (!found) {
        // rotation.max_open_objects: the object with the oldest first message makes room.
        if (auto oldest = objects_.make_room(o_.max_open_objects)) {
            const delivered d = co_await close_and_deliver(just(*oldest), rotate_reason::max_open_objects);
            if (d != delivered::ok) co_return to_feed(d);
            if (ledger_.covered(id, m.offset)) {
                ledger_.handled_through(m.offset);
                co_return feed_status::ok;
            }
        }
        found = &open(m, *enc);
    }
    open_object& o = *found;
    reserve_for(o, append_need(o.buf.size(), m));
    if (auto r = o.encoder->append(m, p_, o.buf); !r) {
        recharge(o);
        const delivered d = co_await handle_bad_message(m, r.error(), &id);
        co_return to_feed(d);
    }
    appended(o, m, ports_.clock.steady_now());
    appended_to_ = &o;
    co_return co_await after_append(o);
}

void partition_writer::appended(open_object& o, const message& m, clock::steady_time now) {
    o.records += 1;
    o.payload_bytes += m.payload.size();
    o.last_offset = m.offset;
    o.last_append = now;
    ledger_.appended(o.encoded, m.offset);
}

task<feed_status> partition_writer::after_append(open_object& o) {
    checksum_new_bytes(o);  // (before any byte leaves the buffer for the spool)
    std::uint64_t cap = 0;
    if (o_.plan.strategy == upload_strategy::single_part_conditional) {
        cap = o_.part_size;  // invariant 4: never multipart where Complete ignores the condition
    } else if (o.buf.size() >= o_.part_size) {
        // Memory per open object stays about one part: the rest waits in the spool file,
        // within memory.max_spool. Whole parts only: the spool then holds parts 1..k exactly
        // and the buffer the rest, so each part is mapped back from one place at the upload
        // (upload_multipart), never pieced together from both.
        const std::size_t whole = o.buf.size() - o.buf.size() % static_cast<std::size_t>(o_.part_size);
        if (ports_.memory && !ports_.memory->spool_allows(whole)) {
            recharge(o);
            log_.info({iss::log::kv("spooled", ports_.memory->spooled())},
                      "memory.max_spool reached: closing the object instead of spooling another part");
            const delivered d = co_await close_and_deliver(just(o.encoded), rotate_reason::spool_limit);
            co_return to_feed(d);
        }
        if (auto w = o.spilled.append(std::string_view{o.buf}.substr(0, whole)); !w) {
            // The spool directory is full, read-only or gone (health.hpp): the object goes up
            // with what it holds instead (any cut is exactly-once), so memory stays about one
            // part per object and nothing waits for the disk.
            note_spool_failure(w.error());
            const delivered d = co_await close_and_deliver(just(o.encoded), rotate_reason::spool_error);
            co_return to_feed(d);
        }
        if (ports_.health && ports_.health->spool() && ports_.health->spool_ok())
            log_.info("the spool directory takes parts again; objects grow past s3.part_size again");
        o.buf.erase(0, whole);  // (moves what is left: less than a part, usually less than a record)
    }
    recharge(o);
    if (auto why = rotation_.full(rotation_state(o), cap)) {
        const delivered d = co_await close_and_deliver(just(o.encoded), *why);
        co_return to_feed(d);
    }
    // Delivered objects that keep overlapping open ones hold the stored offset back; past a
    // bound, close everything once so it moves (and a restart re-reads little).
    if (ledger_.delivered() > 4 * static_cast<std::size_t>(std::max<std::uint32_t>(o_.max_open_objects, 1))) {
        const delivered d = co_await close_all(rotate_reason::commit_stall);
        co_return to_feed(d);
    }
    co_return feed_status::ok;
}

task<partition_writer::delivered> partition_writer::close_all(rotate_reason why) {
    co_return co_await close_and_deliver(objects_.ids(), why);
}

task<void> partition_writer::tick() {
    if (state_ != writer_state::running) co_return;
    if (const auto pending = ledger_.pending()) {
        const bool ok6 = co_await commit_through(*pending);
        if (!ok6) co_return;
    }
    std::vector<std::string> due;
    objects_.for_each_open([&](open_object_entry& e) {
        if (rotation_.due(rotation_state(as_object(e)), ports_.clock.steady_now(), ports_.clock.system_now()))
            due.push_back(e.encoded);
    });
    if (!due.empty()) {
        // Log the reason of the first one due (idle and schedule are the timer triggers).
        const auto why = rotation_.due(rotation_state(as_object(*objects_.find(due.front()))),
                                       ports_.clock.steady_now(), ports_.clock.system_now());
        co_await close_and_deliver(std::move(due), *why);
        co_return;
    }
    // Messages passed over as covered by an adopted object may let the stored offset move.
    if (objects_.empty()) co_await commit_durable();
}

}  // namespace iss::pipeline
