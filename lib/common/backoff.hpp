#pragma once
/// \file
/// Full-jitter exponential backoff (docs/architecture.md §8.4.7; the AWS SDKs' standard): before retry n
/// (n = 0 for the first retry) sleep U(0, min(cap, base * 2^n)). Shared by the S3 client's
/// retries and the Iggy client's reconnects. Pure: the random source is a parameter.

#include <chrono>
#include <cstdint>
#include <random>

namespace iss {

/// Backoff settings. Durations in milliseconds resolution.
struct backoff_policy {
    std::chrono::milliseconds base{200};  ///< first ceiling; > 0
    std::chrono::milliseconds cap{5000};  ///< largest ceiling; >= base
};

/// The ceiling for retry `attempt` (0-based): min(cap, base * 2^attempt), overflow-safe.
[[nodiscard]] std::chrono::milliseconds backoff_ceiling(const backoff_policy& p, unsigned attempt) noexcept;

/// A full-jitter delay for retry `attempt`: uniform in [0, backoff_ceiling(p, attempt)].
[[nodiscard]] std::chrono::milliseconds full_jitter_delay(const backoff_policy& p, unsigned attempt,
                                                          std::mt19937_64& rng);

}  // namespace iss
