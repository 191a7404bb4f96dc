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
    std::erase_if(durable_, [c](const durable_range& d) { return d.last <= *c; });
    if (committed_ && *c <= *committed_) co_return delivered::ok;
    const bool ok = co_await commit_through(*c);
    co_return ok ? delivered::ok : delivered::stopped;
}

std::string_view to_string(table_status s) noexcept {
    switch (s) {
        case table_status::ok: return "ok";
        case table_status::retryable: return "retryable";
        case table_status::fatal: return "fatal";
    }
    return "?";
}

// Invariant 1: the ONLY place an offset is stored; callers pass a durable offset. Invariant
// 7: only after the table step took every durable object up to it.
task<bool> partition_writer::commit_through(std::uint64_t offset) {
    if (committed_ && offset <= *committed_) {
        pending_commit_.reset();
        co_return true;
    }
    auto budget = operation_budget();
    while (budget.try_attempt()) {
        const table_result t = co_await table_through(offset);
        if (t.status != table_status::ok) {
            if (o_.mode == consumer_mode::group) {
                pending_commit_ = offset;  // durable; the step (same objects) and the store retried at the next tick
                log_.warn({iss::log::kv("offset", offset)}, "the table step failed ({}); will retry", t.detail);
                co_return true;
            }
            const bool again =
                co_await retry_or_give_up(budget, "the table step", t.detail, t.status == table_status::fatal,
                                          "the table's settings and permissions");
            if (!again) co_return false;
            continue;
        }
        const auto sent_at = ports_.clock.steady_now();
        const offset_result r = co_await ports_.offsets.store_offset(p_, offset);
        switch (r.status) {
            case offset_status::ok:
                if (ports_.timings) ports_.timings->commit.observe(seconds_since(ports_.clock, sent_at));
                committed_ = offset;
                last_commit_ = ports_.clock.system_now();
                pending_commit_.reset();
                counters_.commits += 1;
                log_.debug({iss::log::kv("offset", offset)}, "offset stored");
                co_return true;
            case offset_status::not_owner:
                // 3022/5006: the partition is someone else's now. What we delivered is
                // durable; anything still held is dropped (invariant 5).
                log_.warn({iss::log::kv("offset", offset)}, "offset refused, not the owner any more ({})", r.detail);
                pending_commit_.reset();
                if (holds_data()) drop("partition taken over by another group member");
                state_ = writer_state::revoked;
                co_return false;
            case offset_status::retryable:
            case offset_status::fatal:
                if (o_.mode == consumer_mode::group) {
                    pending_commit_ = offset;  // durable; retried at the next tick
                    log_.warn({iss::log::kv("offset", offset)}, "storing the offset failed ({}); will retry", r.detail);
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
    std::vector<durable_object> batch;
    for (const auto& d : untabled_)
        if (d.range.last_offset <= offset) batch.push_back(d);
    if (batch.empty()) co_return table_result{};
    std::sort(batch.begin(), batch.end(), [](const durable_object& a, const durable_object& b) {
        return a.range.first_offset < b.range.first_offset;
    });
    const table_result r = co_await ports_.table->commit(p_, batch, offset);
    if (r.status == table_status::ok) {
        std::erase_if(untabled_, [offset](const durable_object& d) { return d.range.last_offset <= offset; });
        log_.debug({iss::log::kv("offset", offset), iss::log::kv("objects", batch.size())}, "table step done");
    }
    co_return r;
}

// Skipped / dead-lettered messages: covered by their encoded partition's open object (its
// last offset), else by the stored offset once no object below them is open.
task<partition_writer::delivered> partition_writer::absorb(const message& m, const std::string* encoded) {
    if (encoded) {
        if (auto it = open_.find(*encoded); it != open_.end()) it->second->last_offset = m.offset;
    }
    mark_handled(m.offset);
    next_ = m.offset + 1;
    if (!open_.empty()) co_return delivered::ok;
    co_return co_await commit_durable();
}

task<partition_writer::delivered> partition_writer::handle_bad_message(const message& m, const error& e,
                                                                       const std::string* encoded) {
    if (encoded) {
        // Opened for this message only: nothing in it.
        if (auto it = open_.find(*encoded); it != open_.end() && it->second->records == 0) open_.erase(it);
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
    if (!open_.empty()) {
        const delivered d = co_await close_all(rotate_reason::bad_message);
        if (d != delivered::ok) co_return d;
        if (encoded && covered(*encoded, m.offset)) {  // an adopted object already covers it
            mark_handled(m.offset);
            co_return delivered::ok;
        }
        if (!ports_.namer.record_dependent() && handled_ && *handled_ >= m.offset) co_return delivered::ok;
    }
    state_ = writer_state::failed;
    stop_reason_ = "bad_message";
    next_ = m.offset;
    co_return delivered::stopped;
}

}  // namespace iss::pipeline
