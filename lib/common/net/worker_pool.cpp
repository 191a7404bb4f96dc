// SPDX-License-Identifier: Apache-2.0
#include "common/net/worker_pool.hpp"

#include <pthread.h>
#include <sched.h>
#include <signal.h>

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

worker_pool::~worker_pool() {
    if (pool_) pool_->join();
}

std::size_t available_cores() noexcept {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        const int n = CPU_COUNT(&set);
        if (n > 0) return static_cast<std::size_t>(n);
    }
    const unsigned h = std::thread::hardware_concurrency();
    return h > 0 ? h : 1;
}

}  // namespace iss
