// SPDX-License-Identifier: Apache-2.0
// The partition writer's whole-operation retries run on a `retry_budget` (common/backoff.hpp)
// over the injected clock and sleeper: single mode retries without end with waits under the
// backoff ceilings, group mode has one attempt per operation (invariant 5 in delivery.hpp).
#include "fakes.hpp"

#include "catch2_compat.hpp"

namespace pl = iss::pipeline;
using namespace std::chrono_literals;
using fakes::batch;
using fakes::make_writer;
using fakes::run;
using fakes::world;

TEST_CASE("single mode: a failing offset store is retried with waits under the backoff ceilings", "[pipeline][retry]") {
    world w;  // backoff 10 ms doubling, cap 100 ms
    w.rotation.max_records = 2;
    w.offsets.fail_next = 4;
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 1);
    const auto t0 = w.clock.steady_now();
    CHECK(run(wr->feed(b.span())) == pl::feed_status::ok);
    CHECK(w.offsets.stores == 5);
    CHECK(w.sleeper.sleeps == 4);
    CHECK(wr->counters().retries == 4);
    CHECK(w.offsets.stored.at(w.p) == 1);
    // The sleeper advances the clock by each wait: at most 10 + 20 + 40 + 80 ms in all.
    CHECK(w.clock.steady_now() - t0 <= 150ms);
}

TEST_CASE("single mode: the waits between upload attempts grow with the attempts, up to the cap", "[pipeline][retry]") {
    world w;
    w.options.retry_backoff = {100ms, 100ms};  // every wait U(0, 100 ms)
    w.rotation.max_records = 2;
    w.store.fail_next = 40;
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 1);
    const auto t0 = w.clock.steady_now();
    CHECK(run(wr->feed(b.span())) == pl::feed_status::ok);
    CHECK(w.store.puts == 41);
    CHECK(w.sleeper.sleeps == 40);
    const auto waited = w.clock.steady_now() - t0;
    CHECK(waited <= 4000ms);  // never above the cap
    CHECK(waited >= 400ms);   // jittered waits, not zero: 40 draws average 50 ms
}

TEST_CASE("group mode: a failing dead-letter send has one attempt, then the partition is re-read",
          "[pipeline][retry]") {
    world w;
    w.options.mode = pl::consumer_mode::group;
    w.options.on_bad_message = pl::bad_message_policy::dead_letter;
    w.dead_letters.fail_next = 3;
    auto rp = w.policy();
    auto wr = make_writer(w, rp, 0);
    batch b;
    b.add(1, 0, "BAD");
    CHECK(run(wr->feed(b.span())) == pl::feed_status::rewind);
    CHECK(w.dead_letters.fail_next == 2);  // exactly one send was tried
    CHECK(w.dead_letters.sent.empty());
    CHECK(w.sleeper.sleeps == 0);
    CHECK(w.offsets.stored.empty());
}

TEST_CASE("group mode: a failing HEAD of an existing object has one attempt", "[pipeline][retry]") {
    world w;
    w.options.mode = pl::consumer_mode::group;
    w.rotation.max_records = 2;
    auto rp = w.policy();
    {
        auto first = make_writer(w, rp, 0);
        auto b = batch::range(1, 2);
        REQUIRE(run(first->feed(b.span())) == pl::feed_status::ok);
    }
    w.offsets.stored.clear();
    w.store.fail_heads = 3;  // the 412 is followed by a HEAD that fails
    auto wr = make_writer(w, rp, 0);
    auto b = batch::range(1, 2);
    CHECK(run(wr->feed(b.span())) == pl::feed_status::rewind);
    CHECK(w.store.fail_heads == 2);  // exactly one HEAD was tried
    CHECK(w.sleeper.sleeps == 0);
}
