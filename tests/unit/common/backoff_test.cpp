#include "common/backoff.hpp"

#include <catch2/catch.hpp>

using namespace std::chrono_literals;

TEST_CASE("the backoff ceiling doubles from base and stops at cap", "[backoff]") {
    const iss::backoff_policy p{200ms, 5000ms};
    CHECK(iss::backoff_ceiling(p, 0) == 200ms);
    CHECK(iss::backoff_ceiling(p, 1) == 400ms);
    CHECK(iss::backoff_ceiling(p, 4) == 3200ms);
    CHECK(iss::backoff_ceiling(p, 5) == 5000ms);
    CHECK(iss::backoff_ceiling(p, 1000) == 5000ms);  // no overflow
}

TEST_CASE("full-jitter delays stay within [0, ceiling] and spread over it", "[backoff]") {
    const iss::backoff_policy p{100ms, 1000ms};
    std::mt19937_64 rng{42};
    std::chrono::milliseconds lo{100000}, hi{0};
    for (int i = 0; i < 2000; ++i) {
        const auto d = iss::full_jitter_delay(p, 3, rng);  // ceiling 800 ms
        REQUIRE(d >= 0ms);
        REQUIRE(d <= 800ms);
        lo = std::min(lo, d);
        hi = std::max(hi, d);
    }
    CHECK(lo < 100ms);  // jitter really reaches low...
    CHECK(hi > 700ms);  // ...and high values
}
