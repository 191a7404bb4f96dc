// SPDX-License-Identifier: Apache-2.0
// The delivery contract, getting objects into the store (invariants 3, 4 and 5; the essay at
// the top of delivery.hpp): in-flight objects delivered in order, the upload with
// If-None-Match (PutObject or the store's multipart sequence), adoption of an existing object
// on 412, and the retry rule of each mode.
#include "pipeline/delivery.hpp"
#include "pipeline/delivery_internal.hpp"
#include "pipeline/error.hpp"

#include <boost/asio/awaitable.hpp>

#include <algorithm>
#include <cstring>
#include <span>

namespace iss::pipeline {

using detail::seconds_since;

// Invariants 1 and 3 for several objects: they leave the open set together and stay in
// flight (in `objects_`, which holds the stored offset back) until each one is durable; they are
// delivered in order of first offset, and the stored offset may move after each.
task<partition_writer::delivered> partition_writer::close_and_deliver(std::vector<std::string> encoded,
                                                                      rotate_reason why) {
    objects_.close(encoded);
    delivered result = delivered::ok;
    while (objects_.in_flight()) {
        const delivered d = co_await deliver_front(why);
        if (d == delivered::given_up || d == delivered::stopped) co_return d;
        if (d == delivered::rewound) result = delivered::rewound;
    }
    co_return result;
}

// Invariants 1 and 3 for the first in-flight object: upload with If-None-Match; on 412 adopt
// for its encoded partition only; then (and only then) store what is durable.
task<partition_writer::delivered> partition_writer::deliver_front(rotate_reason why) {
    assert(objects_.in_flight());
    open_object& o = as_object(objects_.front());
    o.encoder->finish(o.buf);
    checksum_new_bytes(o);
    recharge(o);
    const object_range r{o.first_offset, o.last_offset, o.records};
    const iss::log::fields ctx{iss::log::kv("key", o.key),
                               iss::log::kv("first_offset", r.first_offset),
                               iss::log::kv("last_offset", r.last_offset),
                               iss::log::kv("count", r.count),
                               iss::log::kv("bytes", o.spilled.size() + o.buf.size()),
                               iss::log::kv("reason", to_string(why))};
    const auto closed_at = ports_.clock.steady_now();
    for (;;) {
        const store_result<none> up = co_await upload(o, r);
        if (up.status == store_status::ok) {
            note_store_accepted();
            if (ports_.timings) ports_.timings->upload.observe(seconds_since(ports_.clock, closed_at));
            counters_.objects_written += 1;
            counters_.records_written += r.count;
            counters_.payload_bytes_written += o.payload_bytes;
            counters_.bytes_uploaded += o.spilled.size() + o.buf.size();
            log_.info(ctx, "object uploaded");
            ledger_.written(r.first_offset, r.last_offset);
            if (ports_.table)
                ledger_.for_table({o.key, p_, r, o.spilled.size() + o.buf.size(), false, o.encoder->stats()});
            objects_.pop_front();
            co_return co_await commit_durable();
        }
        if (up.status != store_status::exists) {  // gave up (group mode)
            if (last_fatal_ || (ports_.health && ports_.health->store_refusal())) {
                // The store refuses writes (or its certificate does not verify): this partition
                // is not polled again before a backoff (base doubling up to s3.retry.cap), so a
                // refusing store is not asked as fast as the partition can be re-read (health.hpp).
                const auto wait = backoff_ceiling(o_.retry_backoff, refusals_in_row_);
                refusals_in_row_ = std::min(refusals_in_row_ + 1, 30U);
                retry_at_ = ports_.clock.steady_now() + wait;
                log_.warn({iss::log::kv("key", o.key)},
                          "the store refuses writes (or its certificate does not verify); this partition waits {} ms",
                          wait.count());
            }
            drop(fmt::format("upload of {} failed: {}", o.key, up.detail));
            co_return delivered::given_up;
        }
        // 412: an earlier run (crashed, or a stale/new owner) wrote this key. Adopt it.
        bool gave_up = false;
        bool vanished = false;
        const std::optional<object_range> existing = co_await read_existing(o.key, gave_up, vanished);
        if (vanished) continue;  // deleted between the 412 and the HEAD: write it again
        if (!existing) {
            if (gave_up) {
                drop(fmt::format("HEAD of existing {} failed", o.key));
                co_return delivered::given_up;
            }
            // No usable metadata: we cannot tell what it holds; never overwrite, stop here.
            log_.error(ctx, "the existing object has no usable iggy-* metadata; stopping this partition");
            drop("the partition stopped");
            state_ = writer_state::failed;
            stop_reason_ = "foreign_object";
            co_return delivered::stopped;
        }
        if (ports_.timings) ports_.timings->upload.observe(seconds_since(ports_.clock, closed_at));
        counters_.objects_adopted += 1;
        counters_.records_dropped += r.count;
        log_.warn(ctx, "object exists already (412): adopting its range {}..{} ({} records) instead of overwriting",
                  existing->first_offset, existing->last_offset, existing->count);
        if (existing->first_offset != r.first_offset)
            log_.warn(ctx, "existing object's first offset {} differs from ours", existing->first_offset);
        const std::string id = o.encoded;
        if (ports_.table) ledger_.for_table({o.key, p_, *existing, std::nullopt, true});
        objects_.pop_front();
        // G2: the existing object's messages of this encoded partition are done (or, when it
        // holds less than we did, this encoded partition is re-read after it). With one
        // encoded partition and nothing else held, reading goes on after it.
        const bool alone = !ports_.namer.record_dependent() && objects_.empty() && !objects_.in_flight();
        if (ledger_.adopted(id, r.first_offset, r.last_offset, existing->last_offset, alone)) {
            const delivered d = co_await commit_durable();
            co_return d == delivered::ok ? delivered::rewound : d;
        }
        co_return co_await commit_durable();
    }
}
task<store_result<none>> partition_writer::upload(open_object& o, const object_range& r) {
    const std::string content_type = ports_.encoders.content_type();
    auto budget = operation_budget();
    while (budget.try_attempt()) {
        if (o_.plan.strategy == upload_strategy::head_then_write) {
            // No usable If-None-Match: look first (racy against a concurrent owner, which is
            // the guarantee named at start; safe against a crashed earlier run).
            const auto h = co_await ports_.store.head_object(o.key);
            if (h.status == store_status::ok) co_return store_result<none>{store_status::exists, {}, "HEAD found it"};
            if (h.status != store_status::not_found) {
                note_store_answer(h.status, h.code, h.detail);
                const bool ok1 =
                    co_await retry_or_give_up(budget, "HEAD before write", h.detail, h.status == store_status::fatal);
                if (!ok1) co_return store_result<none>{store_status::retryable, {}, h.detail};
                continue;
            }
        }
        store_result<none> res;
        if (o.spilled.size() == 0) {
            res = co_await ports_.store.put_object(o.key, o.buf, r, content_type, o_.plan.if_none_match,
                                                   part_checksum(o, 0, o.buf.size()));
        } else {
            res = co_await upload_multipart(o, r);
        }
        if (res.status == store_status::ok || res.status == store_status::exists) co_return res;
        note_store_answer(res.status, res.code, res.detail);
        const bool ok2 = co_await retry_or_give_up(budget, "upload", res.detail, res.status == store_status::fatal);
        if (!ok2) co_return store_result<none>{store_status::retryable, {}, res.detail};
    }
    co_return store_result<none>{store_status::retryable, {}, "retry budget spent"};
}

task<store_result<none>> partition_writer::upload_multipart(open_object& o, const object_range& r) {
    const std::uint64_t spooled = o.spilled.size();
    const std::uint64_t total = spooled + o.buf.size();
    // Parts that lie in `o.buf` go up as views into it; the spool file holds whole parts
    // (after_append), each mapped (`spool::map`) while it goes up: no copy into a buffer.
    part_reader read = [this, &o, spooled](std::uint64_t off, std::size_t len) -> result<part_view> {
        const auto sums = part_checksum(o, off, len);
        o.part = {};  // the previous part is up (the reader is called part after part): unmapped
        if (off >= spooled)
            return part_view{std::string_view{o.buf}.substr(static_cast<std::size_t>(off - spooled), len), sums};
        if (off + len > spooled) return error{iss::errc::invalid_argument, "a part lies partly in the spool file"};
        auto m = o.spilled.map(off, len);
        if (!m) return m.error();
        o.part = std::move(*m);
        part_view v{o.part.bytes(), sums};
        // Pages leave the process as the part goes up (they stay in the spool file).
        v.sent = [&o](std::string_view stretch) { o.part.release(stretch); };
        return v;
    };
    co_return co_await ports_.store.put_multipart(o.key, total, o_.part_size, std::move(read), r,
                                                  ports_.encoders.content_type(), o_.plan.if_none_match);
}

task<std::optional<object_range>> partition_writer::read_existing(const object_key& key, bool& gave_up,
                                                                  bool& vanished) {
    auto budget = operation_budget();
    while (budget.try_attempt()) {
        const auto h = co_await ports_.store.head_object(key);
        if (h.status == store_status::ok) {
            auto range = from_user_metadata(h.value);
            if (!range) {
                log_.error({iss::log::kv("key", key)}, "existing object: {}", range.error());
                co_return std::nullopt;
            }
            co_return *range;
        }
        if (h.status == store_status::not_found) {
            vanished = true;
            co_return std::nullopt;
        }
        note_store_answer(h.status, h.code, h.detail);
        const bool ok3 =
            co_await retry_or_give_up(budget, "HEAD of existing object", h.detail, h.status == store_status::fatal);
        if (!ok3) break;
    }
    gave_up = true;
    co_return std::nullopt;
}

void partition_writer::note_store_answer(store_status status, std::string_view code, std::string_view detail) {
    if (status != store_status::fatal) return;
    last_fatal_ = true;
    // No answer (a certificate that does not verify): not a refusal; the S3 client reports the
    // store unreachable with the reason (s3::client_stats::unreachable).
    if (!ports_.health || code.empty()) return;
    if (ports_.health->store_refused(code, detail, ports_.clock.steady_now()))
        log_.error(
            "the store refuses writes ({}): {}; nothing is lost: the objects wait and are retried at a backoff "
            "up to s3.retry.cap, and /readyz names the refusal until a write succeeds",
            code, detail);
}

void partition_writer::note_store_accepted() {
    retry_at_.reset();
    refusals_in_row_ = 0;
    last_fatal_ = false;
    if (ports_.health && ports_.health->store_accepted()) log_.info("the store accepts writes again");
}

void partition_writer::note_spool_failure(const error& e) {
    const auto reason = spool_error_reason_of(e);
    // (The detail names the operation and carries the system's message already.)
    if (!ports_.health || ports_.health->spool_failed(reason, e.detail(), ports_.clock.steady_now())) {
        log_.error(
            "cannot spool beyond one part ({}, {}): objects are closed at what they hold (about s3.part_size) "
            "until the spool directory (memory.spool_dir) takes parts again; nothing is lost",
            e.detail(), to_string(reason));
    } else {
        log_.debug("cannot spool beyond one part ({}); closing the object now", e.detail());
    }
}

// Invariant 5: group mode never retries past the operation's deadline (the adapter bounds
// each call by s3.retry.deadline, and the budget here allows one attempt); single mode
// retries without end.
retry_budget partition_writer::operation_budget() {
    const unsigned attempts = o_.mode == consumer_mode::group ? 1 : 0;
    return retry_budget{{o_.retry_backoff, attempts, std::chrono::milliseconds{0}}, ports_.clock, rng_};
}

task<bool> partition_writer::retry_or_give_up(retry_budget& budget, std::string_view what, std::string_view detail,
                                              bool fatal, std::string_view check, unsigned attempt) {
    const auto delay = budget.next_wait();
    if (!delay) {
        log_.warn("{} failed ({}); {}: giving up, the partition is re-read from its committed offset", what, detail,
                  o_.mode == consumer_mode::group ? "group mode" : "retry budget spent");
        co_return false;
    }
    counters_.retries += 1;
    if (attempt == 0) attempt = budget.attempts();
    if (fatal) {
        log_.error("{} failed ({}): check {}; retrying in {} ms (attempt {})", what, detail, check, delay->count(),
                   attempt);
    } else {
        log_.warn("{} failed ({}); retrying in {} ms (attempt {})", what, detail, delay->count(), attempt);
    }
    co_await ports_.sleep.sleep_for(*delay);
    co_return true;
}

}  // namespace iss::pipeline
