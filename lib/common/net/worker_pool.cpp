// SPDX-License-Identifier: Apache-2.0
#include "common/net/worker_pool.hpp"

#include "common/cpus.hpp"

#include <pthread.h>
#include <sched.h>
#include <signal.h>

#include <algorithm>
#include <exception>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

namespace iss {

worker_pool::worker_pool(std::size_t threads) : threads_{threads} {
    if (threads_ == 0) return;
    // Signals (SIGTERM, SIGHUP) are the event loop's: the pool's threads start with all of
    // them blocked, so the kernel never picks one of those to run a handler.
    sigset_t all;
    sigset_t before;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &before);
    pool_ = std::make_unique<boost::asio::thread_pool>(threads_);
    pthread_sigmask(SIG_SETMASK, &before, nullptr);
}

worker_pool::~worker_pool() { join(); }

void worker_pool::join() noexcept {
    if (pool_) pool_->join();
}

std::size_t available_cores() noexcept {
    std::size_t n = 0;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) n = static_cast<std::size_t>(std::max(CPU_COUNT(&set), 0));
    if (n == 0) n = std::thread::hardware_concurrency();
    if (n == 0) n = 1;
    try {
        std::ifstream in{"/proc/self/cgroup"};
        const std::string text{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
        if (auto limit = cgroup_cpu_limit("/sys/fs/cgroup", text)) n = std::min(n, *limit);
    } catch (const std::exception&) {  // an unreadable cgroup tree: the affinity mask alone
    }
    return n;
}

}  // namespace iss
