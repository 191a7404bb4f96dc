// SPDX-License-Identifier: Apache-2.0
#pragma once
// The tests' sleeper (common/net/sleeper.hpp): it does not sleep, it records each wait and moves
// a manual clock forward by `slowdown` times it (a wake-up later than asked), so tests drive a
// retry loop's time, and every other wait, through the injected clock. `on_sleep`, when set,
// runs after each wait (a test that stops the loop it drives after n waits).
#include "common/clock.hpp"
#include "common/net/sleeper.hpp"

#include <chrono>
#include <functional>
#include <vector>

namespace iss::test {

struct clock_sleeper final : iss::sleeper {
    explicit clock_sleeper(iss::manual_clock& c, int slowdown = 1) : clock{c}, slowdown{slowdown} {}
    boost::asio::awaitable<void> sleep_for(std::chrono::milliseconds d) override {
        waits.push_back(d);
        ++sleeps;
        clock.advance(d * slowdown);
        if (on_sleep) on_sleep();
        co_return;
    }
    void interrupt() override { ++interrupts; }
    iss::manual_clock& clock;
    int slowdown;
    std::vector<std::chrono::milliseconds> waits;
    int sleeps = 0;      ///< waits.size(), as an int
    int interrupts = 0;  ///< interrupt() calls
    std::function<void()> on_sleep;
};

}  // namespace iss::test
