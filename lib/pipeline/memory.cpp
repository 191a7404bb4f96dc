// SPDX-License-Identifier: Apache-2.0
#include "pipeline/memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace iss::pipeline {

memory_budget::charge::charge(charge&& o) noexcept
    : b_{std::exchange(o.b_, nullptr)}, memory_{std::exchange(o.memory_, 0)}, spool_{std::exchange(o.spool_, 0)} {}

memory_budget::charge& memory_budget::charge::operator=(charge&& o) noexcept {
    if (this != &o) {
        set(0, 0);
        b_ = std::exchange(o.b_, nullptr);
        memory_ = std::exchange(o.memory_, 0);
        spool_ = std::exchange(o.spool_, 0);
    }
    return *this;
}

void memory_budget::charge::set(std::uint64_t memory, std::uint64_t spool) noexcept {
    if (!b_) return;
    if (memory_ > 0) --b_->holders_;
    if (memory > 0) ++b_->holders_;
    b_->buffered_ = b_->buffered_ - memory_ + memory;
    b_->spooled_ = b_->spooled_ - spool_ + spool;
    b_->peak_buffered_ = std::max(b_->peak_buffered_, b_->buffered_);
    memory_ = memory;
    spool_ = spool;
}

std::string memory_budget::take_buffer(std::size_t bytes, std::size_t replaces) {
    std::string b;
    // (A kept buffer larger than asked is charged whole, in place of `replaces`: only when
    // that growth is free.)
    const auto fits = [&](std::size_t capacity) {
        return !limited() || capacity <= replaces || capacity - replaces <= free();
    };
    if (auto kept = kept_.take(bytes); kept && kept->capacity() >= bytes && fits(kept->capacity())) {
        b = std::move(*kept);
    } else if (kept) {
        kept_.give(std::move(*kept));  // too small for this one: it may fit the next
    }
    b.clear();
    if (b.capacity() < bytes) {
        std::string exact;
        exact.reserve(bytes);  // (a reserve from empty allocates exactly: no doubling)
        b.swap(exact);
    }
    return b;
}

void memory_budget::give_buffer(std::string b) {
    constexpr std::size_t large = std::size_t{1} << 20;
    if (b.capacity() < large) return;
    const std::uint64_t after = buffered_ + kept_.kept_bytes() + b.capacity();
    if (limited() && after > soft_limit()) return;  // the objects may need the room: freed
    kept_.give(std::move(b));
}

bool memory_budget::above_fair_share(std::uint64_t bytes) const noexcept {
    return bytes > 0 && bytes >= soft_limit() / std::max<std::uint64_t>(holders_, 1);
}

void memory_budget::saw_message(std::uint64_t bytes) noexcept {
    // A moving window of about the last 64 Ki messages, so a change of message size shows.
    if (seen_messages_ >= (64u << 10)) {
        seen_messages_ /= 2;
        seen_bytes_ /= 2;
    }
    ++seen_messages_;
    seen_bytes_ += bytes;
}

std::uint64_t memory_budget::average_message_bytes() const noexcept {
    if (seen_messages_ == 0) return 4096;
    return std::max<std::uint64_t>(1, seen_bytes_ / seen_messages_);
}

std::uint32_t memory_budget::poll_allowance(std::uint32_t wanted) const noexcept {
    if (!limited()) return wanted;
    // Twice: the batch itself, and its copy in the objects' buffers while it is fed.
    const std::uint64_t fit = free() / (2 * average_message_bytes());
    if (fit == 0) return buffered_ == 0 ? std::min<std::uint32_t>(wanted, 1) : 0;
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(wanted, fit));
}

namespace {
std::string mib(std::uint64_t b) {
    if (b % (1ull << 30) == 0) return fmt::format("{} GiB", b >> 30);
    if (b % (1ull << 20) == 0) return fmt::format("{} MiB", b >> 20);
    return fmt::format("{:.1f} MiB", static_cast<double>(b) / (1 << 20));
}
}  // namespace

std::string memory_budget::describe(std::uint64_t part_size, std::uint64_t codec_state) const {
    if (!limited()) return "no limit";
    const std::uint64_t per_object = part_size + codec_state;
    const std::uint64_t objects = per_object == 0 ? 0 : limits_.max_buffered / per_object;
    std::string s = fmt::format(
        "{}: up to {} object{} of {}{} in memory", mib(limits_.max_buffered), objects, objects == 1 ? "" : "s",
        mib(part_size), codec_state == 0 ? std::string{} : fmt::format(" + {} of codec state", mib(codec_state)));
    if (objects == 0) s += " (less than one part: objects are closed before they reach s3.part_size)";
    if (limits_.max_spool != std::numeric_limits<std::uint64_t>::max())
        s += fmt::format("; spool files up to {}", mib(limits_.max_spool));
    return s;
}

}  // namespace iss::pipeline
