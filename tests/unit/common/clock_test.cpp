// SPDX-License-Identifier: Apache-2.0
#include "common/clock.hpp"

#include "catch2_compat.hpp"

using namespace std::chrono_literals;

TEST_CASE("the manual clock moves only when advanced, both clocks together", "[clock]") {
    iss::manual_clock c{iss::clock::system_time{1'000'000s}};
    const auto s0 = c.steady_now();
    CHECK(c.system_now() == iss::clock::system_time{1'000'000s});
    CHECK(c.system_now() == iss::clock::system_time{1'000'000s});
    c.advance(1500ms);
    CHECK(c.system_now() == iss::clock::system_time{1'000'000s} + 1500ms);
    CHECK(c.steady_now() - s0 == 1500ms);
}

TEST_CASE("a wall-clock jump leaves the steady clock alone", "[clock]") {
    iss::manual_clock c;
    const auto s0 = c.steady_now();
    c.set_system(iss::clock::system_time{5s});
    CHECK(c.system_now() == iss::clock::system_time{5s});
    CHECK(c.steady_now() == s0);
}

TEST_CASE("the real clock is usable through the interface", "[clock]") {
    const iss::clock& c = iss::real_clock::instance();
    const auto a = c.steady_now();
    CHECK(c.steady_now() >= a);
    CHECK(c.system_now().time_since_epoch() > 0s);
}
