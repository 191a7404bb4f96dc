// SPDX-License-Identifier: Apache-2.0
#include "common/backoff.hpp"

#include "catch2_compat.hpp"

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

TEST_CASE("a retry budget stops at its attempt limit and hands out jittered waits under the ceilings",
          "[backoff][retry]") {
    iss::manual_clock clk;
    std::mt19937_64 rng{7};
    iss::retry_budget b{{{100ms, 1000ms}, 3, 0ms}, clk, rng};
    CHECK_FALSE(b.left().has_value());  // no deadline
    REQUIRE(b.try_attempt());
    const auto w1 = b.next_wait();
    REQUIRE(w1.has_value());
    CHECK(*w1 <= 100ms);
    REQUIRE(b.try_attempt());
    const auto w2 = b.next_wait();
    REQUIRE(w2.has_value());
    CHECK(*w2 <= 200ms);
    REQUIRE(b.try_attempt());
    CHECK_FALSE(b.next_wait().has_value());  // the third attempt was the last
    CHECK_FALSE(b.try_attempt());
    CHECK(b.attempts() == 3);
}

TEST_CASE("a retry budget never waits past its deadline on the injected clock", "[backoff][retry]") {
    iss::manual_clock clk;
    std::mt19937_64 rng{7};
    iss::retry_budget b{{{10'000ms, 10'000ms}, 0, 500ms}, clk, rng};
    REQUIRE(b.try_attempt());
    clk.advance(400ms);
    REQUIRE(b.left().has_value());
    CHECK(*b.left() == 100ms);
    for (int i = 0; i < 50; ++i) {
        const auto w = b.next_wait();
        REQUIRE(w.has_value());
        CHECK(*w <= 100ms);  // cut to the time left, whatever the ceiling
    }
    clk.advance(100ms);
    CHECK(b.expired());
    CHECK_FALSE(b.next_wait().has_value());
    CHECK_FALSE(b.try_attempt());
}

TEST_CASE("a refunded attempt does not count against the limit", "[backoff][retry]") {
    iss::manual_clock clk;
    std::mt19937_64 rng{1};
    iss::retry_budget b{{{1ms, 1ms}, 1, 0ms}, clk, rng};
    REQUIRE(b.try_attempt());
    b.refund();
    CHECK(b.attempts() == 0);
    REQUIRE(b.try_attempt());
    CHECK_FALSE(b.try_attempt());
}

TEST_CASE("a retry budget's time left is 0 exactly when it has expired", "[backoff][retry]") {
    iss::manual_clock clk;
    std::mt19937_64 rng{3};
    iss::retry_budget b{{{1ms, 1ms}, 0, 10ms}, clk, rng};
    clk.advance(9ms + 500us);
    CHECK_FALSE(b.expired());
    CHECK(*b.left() == 1ms);  // rounded up, so a step given the time left ends at the deadline
    clk.advance(500us);
    CHECK(b.expired());
    CHECK(*b.left() == 0ms);
}

TEST_CASE("a budget without jitter waits exactly the ceilings, cut to the time left", "[backoff][retry]") {
    iss::manual_clock clk;
    std::mt19937_64 rng{3};
    iss::retry_budget b{{{50ms, 50ms}, 0, 120ms, false}, clk, rng};
    REQUIRE(b.try_attempt());
    CHECK(b.next_wait() == std::optional{50ms});
    clk.advance(50ms);
    REQUIRE(b.try_attempt());
    CHECK(b.next_wait() == std::optional{50ms});
    clk.advance(50ms);
    REQUIRE(b.try_attempt());
    CHECK(b.next_wait() == std::optional{20ms});  // 20 ms left of 120
    clk.advance(20ms);
    CHECK_FALSE(b.try_attempt());
}

TEST_CASE("a budget that resumes goes on with the backoff where the earlier loop stopped", "[backoff][retry]") {
    iss::manual_clock clk;
    std::mt19937_64 rng{3};
    // Two attempts spent earlier: the wait before this loop's first attempt is step 1 (200 ms),
    // the one after it step 2 (400 ms).
    iss::retry_budget b{{{100ms, 10'000ms}, 0, 0ms, false, 2}, clk, rng};
    CHECK(b.next_wait() == std::optional{200ms});
    REQUIRE(b.try_attempt());
    CHECK(b.next_wait() == std::optional{400ms});
    REQUIRE(b.try_attempt());
    CHECK(b.next_wait() == std::optional{800ms});
}
