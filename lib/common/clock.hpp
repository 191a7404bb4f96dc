// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The injected clock (docs/architecture.md §8.7.4). Time-dependent logic (rotation by age, schedules,
/// backoff, SigV4 dates, log timestamps) takes a `clock&` and never calls `now()` itself, so
/// tests drive it with `manual_clock`.

#include <chrono>
#include <mutex>

namespace iss {

/// Wall-clock and monotonic time. Implementations are thread-safe.
class clock {
public:
    using system_time = std::chrono::system_clock::time_point;
    using steady_time = std::chrono::steady_clock::time_point;

    virtual ~clock() = default;
    /// Wall-clock time (UTC): object names, schedules, SigV4 `x-amz-date`, log lines.
    [[nodiscard]] virtual system_time system_now() const = 0;
    /// Monotonic time: timeouts, idle detection, backoff.
    [[nodiscard]] virtual steady_time steady_now() const = 0;
};

/// The process's real clocks.
class real_clock final : public clock {
public:
    [[nodiscard]] system_time system_now() const override { return std::chrono::system_clock::now(); }
    [[nodiscard]] steady_time steady_now() const override { return std::chrono::steady_clock::now(); }
    /// The one shared instance.
    static real_clock& instance();
};

/// A clock that moves only when told: both times advance together by `advance()`.
class manual_clock final : public clock {
public:
    /// Starts at `start` (wall clock); the steady clock starts at an arbitrary fixed epoch.
    explicit manual_clock(system_time start = system_time{std::chrono::seconds{1'700'000'000}});
    [[nodiscard]] system_time system_now() const override;
    [[nodiscard]] steady_time steady_now() const override;
    /// Moves both clocks forward by `d` (must be >= 0).
    void advance(std::chrono::nanoseconds d);
    /// Sets the wall clock only (a clock jump; the steady clock does not move).
    void set_system(system_time t);

private:
    mutable std::mutex mu_;
    system_time system_;
    steady_time steady_;
};

}  // namespace iss
