// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Turns a provider into a credentials source that renews temporary credentials before
/// they expire.
///
/// The naive version: every request calls the provider (an STS round trip per upload), or
/// credentials are fetched once and every upload fails an hour later. Here:
///
/// - Credentials are fetched once at `start()` and kept. `current()` answers from memory.
/// - A background task (off the upload path) renews them at `refresh_time()`: 5 minutes
///   before expiry, or at three quarters of a lifetime shorter than 20 minutes. A failed
///   renewal is logged (warn) and retried with full-jitter backoff while the old
///   credentials are still valid; past expiry it logs an error and keeps retrying.
/// - One refresh at a time: every caller that needs new credentials at once (first use,
///   expired credentials, `refresh_rejected()`) waits for the same refresh in flight.
/// - `refresh_rejected(generation)` (the store answered ExpiredToken/TokenRefreshRequired)
///   renews only when no newer generation exists yet, so a burst of rejections costs one
///   fetch.
///
/// Time: expiry decisions use the injected clock's monotonic time: at each fetch the lifetime
/// left (`expiry` minus the wall clock then) becomes a steady deadline for the renewal and for
/// the use, so a wall-clock step later (NTP, an operator; docs/operations.md, "The clock
/// jumps") neither renews early nor keeps expired keys. The background task sleeps on a steady
/// timer for the difference. Threading: one io_context thread; not thread-safe. Keep the
/// object alive (it is shared-owned by the tasks it spawns) and call `stop()` before
/// shutting down, so no timer keeps the io_context running.

#include "aws/credentials.hpp"
#include "common/backoff.hpp"
#include "common/clock.hpp"
#include "common/net/sleeper.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <memory>
#include <random>

namespace iss::aws {

/// Renewal settings.
struct refresh_options {
    std::chrono::seconds ahead{300};  ///< renew this long before expiry (long lifetimes)
    backoff_policy retry{std::chrono::milliseconds{200},
                         std::chrono::milliseconds{30'000}};  ///< after a failed renewal
    unsigned start_attempts = 3;                              ///< fetches tried at start for transient failures
    /// The waits (start's retries, the background renewal); null = the source's own
    /// `iss::asio_sleeper`. Outlives the source. Tests pass one that advances a manual clock.
    iss::sleeper* sleeper = nullptr;
};

/// When to renew credentials obtained at `obtained` that expire at `expiry`:
/// `expiry - min(ahead, lifetime / 4)` (so a 1 h lifetime renews 5 minutes before expiry,
/// a 4 s lifetime after 3 s).
[[nodiscard]] system_time refresh_time(system_time obtained, system_time expiry, std::chrono::seconds ahead);
/// Until when credentials are used without waiting for a renewal: `expiry - min(10 s, lifetime / 10)`.
[[nodiscard]] system_time usable_until(system_time obtained, system_time expiry);

/// Counters (tests, logs).
struct refresh_stats {
    std::uint64_t fetches = 0;   ///< provider fetches started
    std::uint64_t failures = 0;  ///< fetches that failed
    std::uint64_t forced = 0;    ///< refreshes asked for by a store rejection
};

/// A credentials source over one provider (often a chain).
class refreshing_source final : public credentials_source, public std::enable_shared_from_this<refreshing_source> {
public:
    refreshing_source(boost::asio::any_io_executor ex, std::shared_ptr<provider> p,
                      const iss::clock& clk = real_clock::instance(), refresh_options o = {},
                      std::uint64_t seed = std::random_device{}());
    ~refreshing_source() override;

    /// Fetches the first credentials (up to `start_attempts` times for transient failures) and,
    /// when they expire, starts the background renewal (`background = false`: renewals happen
    /// only when a caller needs them; unit tests). The identity is for the start log.
    task<result<identity>> start(bool background = true);
    /// Ends the background renewal (idempotent).
    void stop();

    task<result<signing_credentials>> current() override;
    task<result<signing_credentials>> refresh_rejected(std::uint64_t generation) override;
    [[nodiscard]] bool refreshable() const noexcept override;

    /// The identity in force (empty before start).
    [[nodiscard]] const identity& last() const noexcept;
    [[nodiscard]] std::uint64_t generation() const noexcept;
    [[nodiscard]] const refresh_stats& stats() const noexcept;

private:
    struct impl;
    std::shared_ptr<impl> impl_;
};

}  // namespace iss::aws
