// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The one wait of the project (docs/architecture.md §8.3.9): every pause between retries, every
/// poll interval and every periodic task waits on a `sleeper`, and every deadline of such a loop
/// is read from the injected clock (`common/clock.hpp`), so that tests drive both with a
/// `manual_clock` and a sleeper that advances it instead of sleeping. Retry loops take the wait
/// from a `retry_budget` (`common/backoff.hpp`) and hand it to a sleeper.
///
/// Implementations: `asio_sleeper` below (steady timers on an executor; the production one);
/// tests' `clock_sleeper` (`tests/support/clock_sleeper.hpp`), which advances a manual clock.
///
/// Cancellation (docs/architecture.md §8.4.5): a sleep whose caller is cancelled (an Asio
/// cancellation signal, or the executor shutting down) throws
/// `boost::system::system_error{asio::error::operation_aborted}`, like every other operation of
/// the project. `interrupt()` is not a cancellation: it is a wake-up (a stop was requested), and
/// the sleep returns normally; callers check their own stop flag afterwards.
///
/// Network steps are not waits of this kind: their deadlines are Beast's `expires_after` on the
/// event loop's steady clock, set in `common/net/connect.cpp` and `http/client.cpp` only.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <list>

namespace iss {

/// Waits for a duration on the caller's executor. Not thread-safe.
class sleeper {
public:
    virtual ~sleeper() = default;
    /// Returns after `d`, or earlier after `interrupt()`.
    /// \throws boost::system::system_error (`operation_aborted`) when the caller is cancelled.
    virtual boost::asio::awaitable<void> sleep_for(std::chrono::milliseconds d) = 0;
    /// Ends every sleep in progress early (a stop was requested); later sleeps wait in full.
    /// Default: nothing.
    virtual void interrupt() {}
};

/// The production sleeper: one steady timer per sleep on `ex`, so that any number of
/// coroutines (partition writers backing off, a consumer loop's poll interval) may sleep on one
/// sleeper at once without cutting each other short. Runs on one executor; `interrupt` must be
/// called on it. Outlives its sleeps.
class asio_sleeper final : public sleeper {
public:
    explicit asio_sleeper(boost::asio::any_io_executor ex) : ex_{std::move(ex)} {}
    asio_sleeper(const asio_sleeper&) = delete;
    asio_sleeper& operator=(const asio_sleeper&) = delete;
    boost::asio::awaitable<void> sleep_for(std::chrono::milliseconds d) override;
    void interrupt() override;

private:
    struct waiter;
    boost::asio::any_io_executor ex_;
    std::list<waiter*> waiting_;  ///< the sleeps in progress (each lives in its coroutine's frame)
};

}  // namespace iss
