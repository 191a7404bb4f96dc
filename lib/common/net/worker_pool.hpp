// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The worker pool (`performance.workers`): threads that run CPU-heavy jobs (formatting and
/// compressing records) while the event loop goes on with network I/O. The project's one
/// place where work leaves the event-loop thread.
///
///     worker_pool pool{4};
///     std::size_t n = co_await pool.run([&] { return encode_run(...); });
///
/// `run` posts the job to a pool thread and resumes the awaiting coroutine on its own
/// executor (the event loop) with the job's result; an exception thrown by the job is
/// rethrown there. The job must touch nothing the event loop touches meanwhile: the caller
/// hands it data no other coroutine reads or writes until `run` returns (the partition
/// writer's open object of a busy partition, for example).
///
/// A pool of 0 threads (`inline_pool()`) runs every job on the caller's thread, at once: the
/// behaviour of `performance.workers: 1`, where the event-loop thread does everything.

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>

namespace iss {

class worker_pool {
public:
    /// `threads` 0: no threads; jobs run inline on the caller's thread.
    explicit worker_pool(std::size_t threads);
    /// Waits for running jobs to finish, then joins the threads.
    ~worker_pool();
    worker_pool(const worker_pool&) = delete;
    worker_pool& operator=(const worker_pool&) = delete;

    /// Waits for the running and queued jobs to finish and ends the threads (idempotent; the
    /// destructor calls it). For an owner that must outlive every job before a frame the jobs
    /// write into is destroyed (daemon/cmd_run.cpp: the event loop stopped by a second signal).
    /// No `run` may follow.
    void join() noexcept;

    /// Pool threads (0: inline).
    [[nodiscard]] std::size_t threads() const noexcept { return threads_; }

    /// Runs `job()` on a pool thread (inline when the pool has none) and returns its result
    /// on the awaiting coroutine's executor. `job` is moved into the pool's own frame; what
    /// it refers to must outlive the call (the awaiting frame does).
    template <class F>
    boost::asio::awaitable<std::invoke_result_t<F&>> run(F job) {
        if (!pool_) co_return job();
        co_return co_await boost::asio::co_spawn(
            pool_->get_executor(),
            [j = std::move(job)]() mutable -> boost::asio::awaitable<std::invoke_result_t<F&>> { co_return j(); },
            boost::asio::use_awaitable);
    }

private:
    std::size_t threads_ = 0;
    std::unique_ptr<boost::asio::thread_pool> pool_;
};

/// The number of CPUs this process may use, at least 1: its affinity mask (sched_getaffinity),
/// capped by the cgroup v2 CPU quota (`cgroup_cpu_limit` in common/cpus.hpp, over
/// /sys/fs/cgroup and /proc/self/cgroup). The default of `performance.workers`.
[[nodiscard]] std::size_t available_cores() noexcept;

}  // namespace iss
