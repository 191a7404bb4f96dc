// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Full-jitter exponential backoff (docs/architecture.md §8.4.7; the AWS SDKs' standard): before retry n
/// (n = 0 for the first retry) sleep U(0, min(cap, base * 2^n)). Pure: the random source is a
/// parameter.
///
/// `retry_budget` is the one retry loop's bookkeeping, the naive version first: "on error,
/// sleep and try again" never gives up, and "try N times" can still run for N x the longest
/// wait past any deadline the caller has. A budget counts attempts against `attempts` AND
/// measures time against `deadline` on the injected clock, and hands out full-jitter waits
/// cut to the time left, so a loop never sleeps past its deadline:
///
///     retry_budget budget{{policy, 5, 10s}, clk, rng};
///     while (budget.try_attempt()) {
///         if (auto r = co_await op(); r || !transient(r)) return r;
///         auto wait = budget.next_wait();
///         if (!wait) break;                 // attempts or time used up
///         co_await sleep_for(*wait);
///     }
///
/// Every retry loop of the project runs on one: the S3 client's `execute`, the daemon's wait
/// for the store at start, the Iggy session's reconnect, the G2 57/58 replay, the partition
/// writer's whole-operation retries and the credential source's first fetch and renewal.

#include "common/clock.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
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

/// The attempts and the time one operation may spend (see the file comment). Times come from
/// the injected clock; waiting is the caller's (its timer or sleeper). Not thread-safe.
class retry_budget {
public:
    struct limits {
        backoff_policy backoff;
        unsigned attempts = 0;                  ///< at most this many attempts; 0: no limit
        std::chrono::milliseconds deadline{0};  ///< every attempt and wait within this from the start; 0: none
        bool jitter = true;  ///< false: each wait is the ceiling itself (a fixed pause when base == cap)
        /// The backoff step of the first wait: a loop that goes on from where an earlier one
        /// stopped (its attempts) passes them here; 0 starts at `base`.
        unsigned first_step = 0;
    };

    /// Starts the budget now (on `clk`). `clk` and `rng` outlive the budget.
    retry_budget(limits l, const clock& clk, std::mt19937_64& rng);

    /// Before each attempt: true and counts it, or false when the budget is spent (attempts
    /// used up, or the deadline reached).
    [[nodiscard]] bool try_attempt();
    /// Gives the last attempt back (an attempt that must not count, such as one answered by
    /// a credentials refresh); its wait is not repeated either.
    void refund() noexcept;
    /// The wait before the next attempt: full jitter (or the ceiling, without `jitter`) for
    /// step `first_step + attempts() - 1` (`first_step - 1` before the first attempt, for a
    /// loop that resumes; never below 0), cut to the time left; nullopt when no attempt is
    /// left (attempts used up, or no time left).
    [[nodiscard]] std::optional<std::chrono::milliseconds> next_wait();
    /// The time left before the deadline, rounded up to whole milliseconds (0 exactly when
    /// `expired()`); nullopt without a deadline.
    [[nodiscard]] std::optional<std::chrono::milliseconds> left() const;
    /// Whether there is a deadline and it is reached.
    [[nodiscard]] bool expired() const { return deadline_ && clk_->steady_now() >= *deadline_; }
    /// Attempts counted so far.
    [[nodiscard]] unsigned attempts() const noexcept { return attempts_; }

private:
    limits limits_;
    const clock* clk_;
    std::mt19937_64* rng_;
    std::optional<clock::steady_time> deadline_;
    unsigned attempts_ = 0;
};

}  // namespace iss
