// SPDX-License-Identifier: Apache-2.0
#include "common/backoff.hpp"

#include <algorithm>

namespace iss {

std::chrono::milliseconds backoff_ceiling(const backoff_policy& p, unsigned attempt) noexcept {
    const auto base = std::max<std::int64_t>(p.base.count(), 1);
    const auto cap = std::max<std::int64_t>(p.cap.count(), base);
    // base * 2^attempt saturates at cap; stop doubling before it can overflow.
    std::int64_t c = base;
    for (unsigned i = 0; i < attempt && c < cap; ++i) c *= 2;
    return std::chrono::milliseconds{std::min(c, cap)};
}

std::chrono::milliseconds full_jitter_delay(const backoff_policy& p, unsigned attempt, std::mt19937_64& rng) {
    const auto ceiling = backoff_ceiling(p, attempt).count();
    std::uniform_int_distribution<std::int64_t> dist{0, ceiling};
    return std::chrono::milliseconds{dist(rng)};
}

retry_budget::retry_budget(limits l, const clock& clk, std::mt19937_64& rng) : limits_{l}, clk_{&clk}, rng_{&rng} {
    if (limits_.deadline > std::chrono::milliseconds{0}) deadline_ = clk_->steady_now() + limits_.deadline;
}

bool retry_budget::try_attempt() {
    if (limits_.attempts != 0 && attempts_ >= limits_.attempts) return false;
    if (expired()) return false;
    ++attempts_;
    return true;
}

void retry_budget::refund() noexcept {
    if (attempts_ > 0) --attempts_;
}

std::optional<std::chrono::milliseconds> retry_budget::next_wait() {
    if (limits_.attempts != 0 && attempts_ >= limits_.attempts) return std::nullopt;
    const unsigned done = limits_.first_step + attempts_;
    const unsigned step = done == 0 ? 0 : done - 1;
    auto wait =
        limits_.jitter ? full_jitter_delay(limits_.backoff, step, *rng_) : backoff_ceiling(limits_.backoff, step);
    if (const auto l = left()) {
        if (*l <= std::chrono::milliseconds{0}) return std::nullopt;
        wait = std::min(wait, *l);
    }
    return wait;
}

std::optional<std::chrono::milliseconds> retry_budget::left() const {
    if (!deadline_) return std::nullopt;
    const auto now = clk_->steady_now();
    if (now >= *deadline_) return std::chrono::milliseconds{0};
    // Rounded up: a deadline not reached yet leaves at least 1 ms (0 means expired()).
    return std::chrono::ceil<std::chrono::milliseconds>(*deadline_ - now);
}

}  // namespace iss
