// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The wait between retries, behind an interface so that tests advance an injected clock
/// (`common/clock.hpp`) instead of sleeping. Retry loops take the wait from a `retry_budget`
/// (`common/backoff.hpp`) and hand it to a sleeper. Implementations: the pipeline's
/// `asio_sleeper` (a steady_timer that `interrupt()` cuts short); tests' fakes that advance a
/// `manual_clock`.

#include <boost/asio/awaitable.hpp>

#include <chrono>

namespace iss {

/// Waits for a duration on the caller's executor. Not thread-safe.
class sleeper {
public:
    virtual ~sleeper() = default;
    /// Returns after `d` (milliseconds), or earlier after `interrupt()`.
    virtual boost::asio::awaitable<void> sleep_for(std::chrono::milliseconds d) = 0;
    /// Ends a sleep in progress early (a stop was requested). Default: nothing.
    virtual void interrupt() {}
};

}  // namespace iss
