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

}  // namespace iss
