// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// A FIFO mutex for coroutines on one executor, the project's one lock between coroutines (the
/// Iggy session's one-request-in-flight rule is its user).
///
/// The naive version, a `bool busy` polled with short sleeps, wastes wake-ups and lets a late
/// arrival overtake earlier waiters. Here each waiter parks on its own timer that never
/// expires; `unlock` wakes the oldest (cancels its timer), so the lock passes in arrival order.
///
///     auto g = co_await m.lock();   // suspends until free; g releases it
///
/// A waiter whose own coroutine is cancelled while queued leaves the queue and throws
/// `operation_aborted`. `cancel_all` wakes every waiter; they re-check the lock (and their own
/// state: a closed client returns `closed`). Not thread-safe: every call on the executor given.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <deque>
#include <memory>
#include <utility>

namespace iss {

class async_mutex {
public:
    /// Holds the mutex until destroyed (movable, not copyable).
    class guard {
    public:
        explicit guard(async_mutex* m) noexcept : m_{m} {}
        guard(guard&& o) noexcept : m_{std::exchange(o.m_, nullptr)} {}
        guard& operator=(guard&&) = delete;
        ~guard() {
            if (m_) m_->unlock();
        }

    private:
        async_mutex* m_;
    };

    explicit async_mutex(boost::asio::any_io_executor ex) : ex_{std::move(ex)} {}
    async_mutex(const async_mutex&) = delete;
    async_mutex& operator=(const async_mutex&) = delete;

    /// Suspends until the mutex is free, then holds it. Throws `operation_aborted` when the
    /// calling coroutine is cancelled while it waits.
    boost::asio::awaitable<guard> lock();
    /// Wakes every waiter (each takes the mutex in turn once it is free).
    void cancel_all() noexcept;
    /// Whether someone holds it.
    [[nodiscard]] bool locked() const noexcept { return busy_; }
    /// Coroutines waiting for it.
    [[nodiscard]] std::size_t waiting() const noexcept { return waiters_.size(); }

private:
    void unlock() noexcept;

    boost::asio::any_io_executor ex_;
    bool busy_ = false;
    std::deque<std::shared_ptr<boost::asio::steady_timer>> waiters_;
};

}  // namespace iss
