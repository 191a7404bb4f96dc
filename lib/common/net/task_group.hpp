// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Child coroutines on one executor, and one wait for all of them: the project's one join
/// (the consumer's parallel partition polls, `verify`'s HEAD workers).
///
/// The naive version, spawning with `detached` and polling a counter, loses the children's
/// exceptions and either spins or sleeps too long. Here every child's completion is counted,
/// its result handed to the caller's callback, the first exception kept, and `wait` resumes
/// once the last child finishes:
///
///     task_group g{ex};
///     for (auto& w : workers) g.spawn(run(w), [&](std::size_t n) { total += n; });
///     co_await g.wait();   // rethrows the first child's exception
///
/// The group (and what the callbacks touch) must outlive its children: call `wait` before it
/// goes. Not thread-safe: spawn and wait on the executor given.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstddef>
#include <exception>
#include <memory>
#include <utility>

namespace iss {

class task_group {
public:
    explicit task_group(boost::asio::any_io_executor ex) : ex_{ex}, st_{std::make_shared<state>(ex)} {}
    task_group(const task_group&) = delete;
    task_group& operator=(const task_group&) = delete;

    /// Starts `task` now; `on_result(T)` runs with its value when it returns (not when it
    /// throws: `wait` rethrows that).
    template <class T, class OnResult>
    void spawn(boost::asio::awaitable<T> task, OnResult on_result) {
        ++st_->running;
        boost::asio::co_spawn(ex_, std::move(task),
                              [st = st_, f = std::move(on_result)](std::exception_ptr e, T v) mutable {
                                  if (e) {
                                      if (!st->error) st->error = e;
                                  } else {
                                      f(std::move(v));
                                  }
                                  st->finished();
                              });
    }
    /// Starts `task` now (no result).
    void spawn(boost::asio::awaitable<void> task) {
        ++st_->running;
        boost::asio::co_spawn(ex_, std::move(task), [st = st_](std::exception_ptr e) {
            if (e && !st->error) st->error = e;
            st->finished();
        });
    }

    /// Suspends until every child spawned so far has finished; then rethrows the first
    /// exception a child threw, if any.
    boost::asio::awaitable<void> wait() {
        while (st_->running > 0) {
            boost::system::error_code ec;  // the cancel() of the last child's completion
            co_await st_->done.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
        }
        if (auto e = std::exchange(st_->error, nullptr)) std::rethrow_exception(e);
    }

    /// Children not finished yet.
    [[nodiscard]] std::size_t running() const noexcept { return st_->running; }

private:
    struct state {
        explicit state(const boost::asio::any_io_executor& ex)
            : done{ex, boost::asio::steady_timer::time_point::max()} {}
        void finished() {
            if (--running == 0) done.cancel();
        }
        std::size_t running = 0;
        std::exception_ptr error;
        boost::asio::steady_timer done;  // never expires: cancelled when the last child finishes
    };

    boost::asio::any_io_executor ex_;
    std::shared_ptr<state> st_;
};

}  // namespace iss
