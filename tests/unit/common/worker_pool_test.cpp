// SPDX-License-Identifier: Apache-2.0
// common/net/worker_pool.hpp: a job runs on a pool thread and the awaiting coroutine resumes
// on its own (event-loop) thread with the result; exceptions come back; jobs of several
// coroutines run at once; a pool without threads runs jobs inline; the default worker count
// is the affinity count capped by the cgroup (cpus_test.cpp tests the cgroup part).
#include "common/net/worker_pool.hpp"

#include "common/cpus.hpp"
#include "common/net/task_group.hpp"
#include "run_coro.hpp"

#include <boost/asio/detached.hpp>

#include "catch2_compat.hpp"
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <thread>

namespace net = boost::asio;
using test::run;

TEST_CASE("worker pool: the job runs on a pool thread, the coroutine resumes on its own", "[net][worker_pool]") {
    iss::worker_pool pool{2};
    CHECK(pool.threads() == 2);
    const auto loop = std::this_thread::get_id();
    run([&](net::any_io_executor) -> net::awaitable<void> {
        std::thread::id ran;
        const int v = co_await pool.run([&] {
            ran = std::this_thread::get_id();
            return 42;
        });
        CHECK(v == 42);
        CHECK(ran != loop);
        CHECK(std::this_thread::get_id() == loop);
    });
}

TEST_CASE("worker pool: an exception of the job is rethrown in the coroutine", "[net][worker_pool]") {
    iss::worker_pool pool{1};
    std::string caught;
    run([&](net::any_io_executor) -> net::awaitable<void> {
        try {
            co_await pool.run([]() -> int { throw std::runtime_error{"job failed"}; });
        } catch (const std::runtime_error& e) {
            caught = e.what();
        }
    });
    CHECK(caught == "job failed");
}

TEST_CASE("worker pool: jobs of concurrent coroutines run at the same time", "[net][worker_pool]") {
    iss::worker_pool pool{2};
    std::atomic<int> inside{0};
    std::atomic<int> most{0};
    run([&](net::any_io_executor ex) -> net::awaitable<void> {
        iss::task_group g{ex};
        for (int i = 0; i < 2; ++i) {
            g.spawn(pool.run([&] {
                const int n = ++inside;
                int m = most.load();
                while (n > m && !most.compare_exchange_weak(m, n)) {}
                // Wait (bounded) for the other job to be inside too: only a pool that runs
                // both at once gets there.
                for (int k = 0; k < 2000 && most.load() < 2; ++k)
                    std::this_thread::sleep_for(std::chrono::milliseconds{1});
                --inside;
                return 0;
            }),
                    [](int) {});
        }
        co_await g.wait();
    });
    CHECK(most.load() == 2);
}

TEST_CASE("worker pool: without threads the job runs inline on the caller's thread", "[net][worker_pool]") {
    iss::worker_pool pool{0};
    CHECK(pool.threads() == 0);
    const auto loop = std::this_thread::get_id();
    run([&](net::any_io_executor) -> net::awaitable<void> {
        std::thread::id ran;
        co_await pool.run([&] {
            ran = std::this_thread::get_id();
            return 0;
        });
        CHECK(ran == loop);
    });
    CHECK(iss::available_cores() >= 1);
}

TEST_CASE("available_cores is the affinity count capped by the process's cgroup", "[worker_pool][cgroup]") {
    cpu_set_t set;
    CPU_ZERO(&set);
    REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
    std::size_t want = static_cast<std::size_t>(CPU_COUNT(&set));
    std::ifstream in{"/proc/self/cgroup"};
    const std::string text{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
    if (auto limit = iss::cgroup_cpu_limit("/sys/fs/cgroup", text)) want = std::min(want, *limit);
    CHECK(iss::available_cores() == want);
}

// daemon/cmd_run.cpp: a second signal stops the event loop while a job may be running on a pool
// thread, writing into an object of the suspended coroutine's frame; ~io_context destroys that
// frame (its locals in reverse order: the object first, the pool after it). join() before the
// io_context goes lets the job end while the object is alive.
TEST_CASE("worker pool: join() before the loop's frames are destroyed ends a running job first", "[net][worker_pool]") {
    std::atomic<bool> started{false};
    std::atomic<bool> object_alive{false};
    std::atomic<int> wrote_into_dead_object{-1};  // -1: the job did not end
    iss::worker_pool* published = nullptr;
    {
        net::io_context io{1};
        net::co_spawn(
            io,
            [&]() -> net::awaitable<void> {
                iss::worker_pool pool{1};
                published = &pool;
                struct open_object {  // declared after the pool, destroyed before it
                    std::atomic<bool>& alive;
                    explicit open_object(std::atomic<bool>& a) : alive{a} { alive = true; }
                    ~open_object() { alive = false; }
                } object{object_alive};
                co_await pool.run([&] {
                    started = true;
                    std::this_thread::sleep_for(std::chrono::milliseconds{100});
                    wrote_into_dead_object = object_alive ? 0 : 1;
                    return 0;
                });
                published = nullptr;
            },
            net::detached);
        while (!started) io.run_one_for(std::chrono::milliseconds{10});
        io.stop();  // the second signal: the frame stays suspended, its job still runs
        REQUIRE(published != nullptr);
        published->join();
        CHECK(wrote_into_dead_object == 0);
        published->join();  // idempotent; ~worker_pool in the frame joins once more
        // Leaving the scope: ~io_context destroys the frame (object, then pool) after the job ended.
    }
    CHECK(wrote_into_dead_object == 0);
}
