// SPDX-License-Identifier: Apache-2.0
// The delivery contract, storing offsets (invariants 1 and 7; the essay at the top of
// delivery.hpp): the one place an offset is stored, the table step before it, and the
// messages that are not written (skipped or dead-lettered) accounted for by the open object
// or the stored offset.
#include "pipeline/delivery.hpp"
#include "pipeline/delivery_internal.hpp"
#include "pipeline/error.hpp"

#include <boost/asio/awaitable.hpp>

#include <algorithm>
#include <cstring>
#include <span>
#include <vector>

namespace iss::pipeline {

using detail::seconds_since;

// Invariant 1, generalised: store the commit point (every message up to it is durable, and no
// delivered object straddles it) when it moved; forget delivered objects below it.
task<partition_writer::delivered> partition_writer::commit_durable() {
    const auto c = commit_point();
    if (!c) co_return delivered::ok;
    ledger_.forget_through(*c);
    if (ledger_.stored_through(*c)) co_return delivered::ok;
    const bool ok = co_await commit_through(*c);
    co_return ok ? delivered::ok : delivered::stopped;
}

// Invariant 1: the ONLY place an offset is stored; callers pass a durable offset. Invariant
// 7: only after the table step took every durable object up to it.
task<bool> partition_writer::commit_through(std::uint64_t offset) {
    if (ledger_.stored_through(offset)) {
        ledger_.clear_pending();
        co_return true;
    }
    auto budget = operation_budget();
    while (budget.try_attempt()) {
        const table_result t = co_await table_through(offset);
        if (t.status == table_status::deferred) {
            ledger_.store_pending(offset);  // durable; the step is asked again at the next tick
            log_.debug({iss::log::kv("offset", offset)}, "the table step deferred the objects ({})", t.detail);
            co_return true;
        }
        if (t.status != table_status::ok) {
            if (o_.mode == consumer_mode::group) {
                ledger_.store_pending(
                    offset);  // durable; the step (same objects) and the store retried at the next tick
                log_.warn({iss::log::kv("offset", offset)}, "the table step failed ({}); will retry", t.detail);
                co_return true;
            }
            const bool again =
                co_await retry_or_give_up(budget, "the table step", t.detail, t.status == table_status::fatal,
                                          "the table's settings and permissions", t.attempt);
            if (!again) co_return false;
            continue;
        }
        if (o_.mode == consumer_mode::group && store_retry_at_ && ports_.clock.steady_now() < *store_retry_at_) {
            ledger_.store_pending(offset);  // durable; the store is tried again when its backoff ends
            co_return true;
        }
        const auto sent_at = ports_.clock.steady_now();
        const offset_result r = co_await ports_.offsets.store_offset(p_, offset);
        switch (r.status) {
            case offset_status::ok:
                if (ports_.timings) ports_.timings->commit.observe(seconds_since(ports_.clock, sent_at));
                ledger_.stored(offset);
                if (store_failures_in_row_ > 0)
                    log_.info({iss::log::kv("offset", offset)}, "offset stored again after {} failed attempts",
                              store_failures_in_row_);
                store_retry_at_.reset();
                store_failures_in_row_ = 0;
                last_commit_ = ports_.clock.system_now();
                counters_.commits += 1;
                log_.debug({iss::log::kv("offset", offset)}, "offset stored");
                co_return true;
            case offset_status::not_owner:
                // 3022/5006/5000: the partition is someone else's now. What we delivered is
                // durable; anything still held is dropped (invariant 5).
                log_.warn({iss::log::kv("offset", offset)}, "offset refused, not the owner any more ({})", r.detail);
                ledger_.clear_pending();
                store_retry_at_.reset();
                store_failures_in_row_ = 0;
                if (holds_data()) drop("partition taken over by another group member");
                state_ = writer_state::revoked;
                co_return false;
            case offset_status::retryable:
            case offset_status::fatal:
                if (o_.mode == consumer_mode::group) {
                    // Durable; tried again (by a tick, or the next commit) after a backoff from
                    // s3.retry.base doubling up to s3.retry.cap, not at every tick: a store that
                    // keeps failing (4100 after the topic was created again) is no tight loop.
                    ledger_.store_pending(offset);
                    const auto wait = backoff_ceiling(o_.retry_backoff, store_failures_in_row_);
                    store_failures_in_row_ = std::min(store_failures_in_row_ + 1, 30U);
                    store_retry_at_ = ports_.clock.steady_now() + wait;
                    log_.warn({iss::log::kv("offset", offset), iss::log::kv("attempt", store_failures_in_row_)},
                              "storing the offset failed ({}); will retry in {} ms", r.detail, wait.count());
                    co_return true;
                }
                if (!co_await retry_or_give_up(budget, "storing the offset", r.detail, false)) co_return false;
                break;
        }
    }
    co_return false;
}

// Invariant 7: the table step takes durable objects, each once it is whole at or below the
// offset about to be stored, before that offset is stored; on failure they stay for the
// next call (nothing is uploaded again).
task<table_result> partition_writer::table_through(std::uint64_t offset) {
    if (!ports_.table) co_return table_result{};
    const std::vector<durable_object> batch = ledger_.table_batch(offset);
    if (batch.empty()) co_return table_result{};
    const table_result r = co_await ports_.table->commit(p_, batch, offset);
    if (r.status == table_status::ok) {
        ledger_.tabled(offset);
        log_.debug({iss::log::kv("offset", offset), iss::log::kv("objects", batch.size())}, "table step done");
    }
    co_return r;
}

// Invariants 5 and 6: a hand-over or a stop delivers what is open and stores what is durable.
task<bool> partition_writer::flush(rotate_reason why) {
    // Invariant 5 with 7: a hand-over commits the table step's batch now (not at its interval),
    // so the offset is stored before the partition is given up.
    struct handing_over_scope {
        table_step* t;
        const partition_ref& p;
        ~handing_over_scope() {
            if (t) t->handing_over(p, false);
        }
    } const scope{why == rotate_reason::hand_over ? ports_.table : nullptr, p_};
    if (scope.t) scope.t->handing_over(p_, true);
    store_retry_at_.reset();  // a hand-over or a stop tries a pending store now, whatever its backoff
    if (const auto pending = ledger_.pending(); state_ == writer_state::running && pending) {
        const bool ok7 = co_await commit_through(*pending);
        if (!ok7) co_return !holds_data();
    }
    if (state_ != writer_state::running) co_return !holds_data() && !ledger_.pending();
    if (objects_.empty()) {
        const delivered d0 = co_await commit_durable();
        co_return d0 == delivered::ok && !ledger_.pending();
    }
    const delivered d = co_await close_all(why);
    co_return (d == delivered::ok || d == delivered::rewound) && !holds_data() && !ledger_.pending();
}

// Skipped / dead-lettered messages: covered by their encoded partition's open object (its
// last offset), else by the stored offset once no object below them is open.
task<partition_writer::delivered> partition_writer::absorb(const message& m, const std::string* encoded) {
    if (encoded) {
        if (auto* e = objects_.find(*encoded)) as_object(*e).last_offset = m.offset;
    }
    ledger_.took(m.offset);
    if (!objects_.empty()) co_return delivered::ok;
    co_return co_await commit_durable();
}

task<partition_writer::delivered> partition_writer::handle_bad_message(const message& m, const error& e,
                                                                       const std::string* encoded) {
    if (encoded) {
        // Opened for this message only: nothing in it.
        if (auto* held = objects_.find(*encoded); held && as_object(*held).records == 0) objects_.discard(*encoded);
    }
    const iss::log::fields ctx{iss::log::kv("offset", m.offset), iss::log::kv("reason", e.message())};
    switch (o_.on_bad_message) {
        case bad_message_policy::skip:
            counters_.bad_skipped += 1;
            log_.warn(ctx, "bad message skipped (delivery.on_bad_message: skip)");
            co_return co_await absorb(m, encoded);
        case bad_message_policy::dead_letter: {
            assert(ports_.dead_letters != nullptr);
            auto budget = operation_budget();
            bool sent = false;
            while (!sent && budget.try_attempt()) {
                const source_status s = co_await ports_.dead_letters->send(m, p_, e.message());
                sent = s == source_status::ok;
                if (!sent &&
                    !co_await retry_or_give_up(budget, "dead-letter send", to_string(s), s == source_status::fatal))
                    break;
            }
            if (!sent) {
                drop("dead-letter send failed");
                co_return delivered::given_up;
            }
            counters_.bad_dead_lettered += 1;
            log_.warn(ctx, "bad message sent to the dead-letter topic");
            co_return co_await absorb(m, encoded);
        }
        case bad_message_policy::fail: break;
    }
    counters_.bad_failed += 1;
    log_.error(ctx,
               "bad message: this partition stops here (the others go on); fix the producer, or set "
               "delivery.on_bad_message to skip or dead_letter");
    if (!objects_.empty()) {
        const delivered d = co_await close_all(rotate_reason::bad_message);
        if (d != delivered::ok) co_return d;
        if (encoded && ledger_.covered(*encoded, m.offset)) {  // an adopted object already covers it
            ledger_.handled_through(m.offset);
            co_return delivered::ok;
        }
        const auto handled = ledger_.handled();
        if (!ports_.namer.record_dependent() && handled && *handled >= m.offset) co_return delivered::ok;
    }
    state_ = writer_state::failed;
    stop_reason_ = "bad_message";
    ledger_.stopped_at(m.offset);
    co_return delivered::stopped;
}

}  // namespace iss::pipeline
