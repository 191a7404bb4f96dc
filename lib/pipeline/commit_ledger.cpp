// SPDX-License-Identifier: Apache-2.0
// The commit ledger (commit_ledger.hpp): the pure bookkeeping of the delivery contract.
#include "pipeline/commit_ledger.hpp"

#include <algorithm>

namespace iss::pipeline {

commit_ledger::commit_ledger(std::optional<std::uint64_t> committed) noexcept
    : handled_{committed}, committed_{committed} {
    if (committed_) next_ = *committed_ + 1;
}

bool commit_ledger::covered(std::string_view encoded, std::uint64_t offset) const {
    const auto it = done_through_.find(encoded);
    return it != done_through_.end() && offset <= it->second;
}

intake commit_ledger::classify(std::string_view encoded, std::uint64_t offset) const {
    if (handled_ && offset <= *handled_) {
        // Re-reading after an adoption rewound one encoded partition: every other message
        // here was handled already (it is held, delivered or skipped).
        const auto it = reread_from_.find(encoded);
        if (it == reread_from_.end() || offset < it->second || covered(encoded, offset)) return intake::pass_over;
        return intake::take;
    }
    return covered(encoded, offset) ? intake::covered : intake::take;
}

intake commit_ledger::classify_unreadable(std::uint64_t offset) const noexcept {
    return handled_ && offset <= *handled_ ? intake::pass_over : intake::take;
}

void commit_ledger::caught_up(std::uint64_t offset) {
    // Every encoded partition is wanted again from here on: the re-read points are spent. (Kept
    // after the re-read reached the last handled message, they would hold the commit point
    // back until a message beyond it arrives: forever, at the end of a stream.)
    reread_from_.clear();
    std::erase_if(done_through_, [offset](const auto& kv) { return kv.second <= offset; });
}

void commit_ledger::handled_through(std::uint64_t offset) {
    // At or past the last handled message: the range being re-read (if any) is behind us.
    if (!handled_ || offset >= *handled_) {
        handled_ = offset;
        caught_up(offset);
    }
    if (!next_ || offset + 1 > *next_) next_ = offset + 1;
}

void commit_ledger::passed_over(std::uint64_t offset) {
    next_ = offset + 1;
    if (handled_ && offset >= *handled_) caught_up(offset);  // the re-read passed the last handled message
}

void commit_ledger::took(std::uint64_t offset) {
    handled_through(offset);
    next_ = offset + 1;
}

void commit_ledger::appended(std::string_view encoded, std::uint64_t offset) {
    if (auto rr = reread_from_.find(encoded); rr != reread_from_.end()) rr->second = offset + 1;
    took(offset);
}

void commit_ledger::written(std::uint64_t first, std::uint64_t last) { durable_.push_back({first, last}); }

bool commit_ledger::adopted(std::string_view encoded, std::uint64_t first, std::uint64_t ours_last,
                            std::uint64_t theirs_last, bool alone) {
    // Durable now: the existing object, from OUR first offset (where a restart would open
    // this encoded partition's object again) to ITS last offset.
    durable_.push_back({first, std::max(first, theirs_last)});
    if (theirs_last < ours_last) {
        // It holds less than we did: re-read this encoded partition's messages after it, so
        // its next key is the one a crash-free run would have written. The others' messages
        // in the re-read range are held or done already and are passed over.
        const std::uint64_t from = theirs_last + 1;
        auto [rr, fresh] = reread_from_.try_emplace(std::string{encoded}, from);
        if (!fresh) rr->second = std::min(rr->second, from);
        next_ = std::min(next_.value_or(from), from);
        return true;
    }
    // It holds as much or more: this encoded partition's messages up to its last offset are
    // done, and ONLY this one's (others' messages in that range still need objects).
    auto [dt, fresh] = done_through_.try_emplace(std::string{encoded}, theirs_last);
    if (!fresh) dt->second = std::max(dt->second, theirs_last);
    // One encoded partition per partition: every message up to its last offset is in it, so
    // reading goes on after it.
    if (alone) handled_through(theirs_last);
    return false;
}

std::optional<std::uint64_t> commit_ledger::commit_point(std::optional<std::uint64_t> lowest_held) const {
    if (!handled_) return std::nullopt;
    // The first offset that is not durable yet: above everything handled, and no higher than
    // the first message of any open or in-flight object, or of an encoded partition that is
    // being re-read after an adoption.
    std::uint64_t p = *handled_ + 1;
    if (lowest_held) p = std::min(p, *lowest_held);
    for (const auto& [id, from] : reread_from_) p = std::min(p, from);
    // A restart reads from p on. If p fell inside a delivered object, the restart would meet
    // that encoded partition's messages from p on without meeting its first message, open a
    // new object at a new first offset and write them a second time. So p moves down to the
    // delivered object's first offset (the stored offset to one below it), and again, as
    // that may fall inside another one.
    for (bool moved = true; moved;) {
        moved = false;
        for (const auto& d : durable_) {
            if (d.first < p && p <= d.last) {
                p = d.first;
                moved = true;
            }
        }
    }
    if (p == 0) return std::nullopt;
    return p - 1;
}

void commit_ledger::forget_through(std::uint64_t point) {
    std::erase_if(durable_, [point](const durable_range& d) { return d.last <= point; });
}

std::vector<durable_object> commit_ledger::table_batch(std::uint64_t offset) const {
    std::vector<durable_object> batch;
    for (const auto& d : untabled_)
        if (d.range.last_offset <= offset) batch.push_back(d);
    std::sort(batch.begin(), batch.end(), [](const durable_object& a, const durable_object& b) {
        return a.range.first_offset < b.range.first_offset;
    });
    return batch;
}

void commit_ledger::tabled(std::uint64_t offset) {
    std::erase_if(untabled_, [offset](const durable_object& d) { return d.range.last_offset <= offset; });
}

void commit_ledger::stored(std::uint64_t offset) noexcept {
    committed_ = offset;
    pending_.reset();
}

void commit_ledger::dropped() {
    // Re-read from what is durable: the committed offset (or a durable one whose commit is
    // still pending; re-writing it would be adopted anyway). The stored offset is a point no
    // object straddles, so the re-read renders the same keys as a restart would.
    const auto durable = pending_ ? pending_ : committed_;
    durable_.clear();
    std::erase_if(untabled_, [durable](const durable_object& d) { return !durable || d.range.last_offset > *durable; });
    done_through_.clear();
    reread_from_.clear();
    handled_ = durable;
    next_ = durable ? std::optional<std::uint64_t>{*durable + 1} : std::nullopt;
}

}  // namespace iss::pipeline
