// SPDX-License-Identifier: Apache-2.0
#pragma once
// A sleeper (common/net/sleeper.hpp) that does not sleep: it records each wait and moves a
// manual clock forward by `slowdown` times it (a wake-up later than asked), so tests drive a
// retry loop's time through the injected clock.
#include "common/clock.hpp"
#include "common/net/sleeper.hpp"

#include <chrono>
#include <vector>

namespace iss::test {

struct clock_sleeper final : iss::sleeper {
    explicit clock_sleeper(iss::manual_clock& c, int slowdown = 1) : clock{c}, slowdown{slowdown} {}
    boost::asio::awaitable<void> sleep_for(std::chrono::milliseconds d) override {
        waits.push_back(d);
        clock.advance(d * slowdown);
        co_return;
    }
    iss::manual_clock& clock;
    int slowdown;
    std::vector<std::chrono::milliseconds> waits;
};

}  // namespace iss::test
