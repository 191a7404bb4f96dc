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

TEST_CASE("single mode: a refused upload marks the store refusing, counted by code, until an upload succeeds",
          "[pipeline][retry][health]") {
    world w;  // backoff 10 ms doubling, cap 100 ms
    w.rotation.max_records = 2;
    w.store.failure = pl::store_status::fatal;
    w.store.failure_code = "AccessDenied";
    w.store.fail_next = 6;
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 1);
    const auto t0 = w.clock.steady_now();
    CHECK(run(wr->feed(b.span())) == pl::feed_status::ok);  // retried in place until it went up
    CHECK(w.store.puts == 7);
    CHECK(w.sleeper.sleeps == 6);
    CHECK(w.clock.steady_now() - t0 <= 6 * 100ms);  // never a wait above the cap
    CHECK(w.health.store_refusals().at("AccessDenied") == 6);
    CHECK_FALSE(w.health.store_refusal());  // the upload that succeeded ended it
    CHECK_FALSE(wr->retry_at());
    CHECK(w.offsets.stored.at(w.p) == 1);
}

TEST_CASE("group mode: a refused upload holds the partition back, the waits doubling up to the cap",
          "[pipeline][retry][health]") {
    world w;  // backoff 10 ms doubling, cap 100 ms
    w.options.mode = pl::consumer_mode::group;
    w.rotation.max_records = 2;
    w.store.failure = pl::store_status::fatal;
    w.store.failure_code = "KMS.DisabledException";
    w.store.fail_next = 100;
    auto rp = w.policy();
    auto wr = make_writer(w, rp, 0);
    const std::chrono::milliseconds want[] = {10ms, 20ms, 40ms, 80ms, 100ms, 100ms};
    for (const auto wait : want) {
        auto b = batch::range(1, 2);
        CHECK(run(wr->feed(b.span())) == pl::feed_status::rewind);  // dropped, re-read later
        REQUIRE(wr->retry_at());
        CHECK(*wr->retry_at() - w.clock.steady_now() == wait);
        REQUIRE(w.health.store_refusal());
        CHECK(w.health.store_refusal()->code == "KMS.DisabledException");
        w.clock.advance(wait);
    }
    CHECK(w.sleeper.sleeps == 0);  // group mode never waits inside an operation
    CHECK(w.offsets.stored.empty());
    CHECK(w.dead_letters.sent.empty());
    w.store.fail_next = 0;  // the key is enabled again
    auto b = batch::range(1, 2);
    CHECK(run(wr->feed(b.span())) == pl::feed_status::ok);
    CHECK_FALSE(wr->retry_at());
    CHECK_FALSE(w.health.store_refusal());
    CHECK(w.offsets.stored.at(w.p) == 2);
}

TEST_CASE("group mode: a certificate that does not verify holds the partition back too, and is no refusal",
          "[pipeline][retry][health]") {
    world w;  // backoff 10 ms doubling, cap 100 ms
    w.options.mode = pl::consumer_mode::group;
    w.rotation.max_records = 2;
    w.store.failure = pl::store_status::fatal;
    w.store.failure_code = "";  // no answer came (the handshake failed): s3::answer_code is empty
    w.store.fail_next = 100;
    auto rp = w.policy();
    auto wr = make_writer(w, rp, 0);
    for (const auto wait : {10ms, 20ms, 40ms}) {
        auto b = batch::range(1, 2);
        CHECK(run(wr->feed(b.span())) == pl::feed_status::rewind);
        REQUIRE(wr->retry_at());  // not re-read and re-sent at once (a handshake storm)
        CHECK(*wr->retry_at() - w.clock.steady_now() == wait);
        // The S3 client names it (store: unreachable: tls_certificate), not the refusal state.
        CHECK_FALSE(w.health.store_refusal());
        w.clock.advance(wait);
    }
    w.store.fail_next = 0;  // the certificate verifies again
    auto b = batch::range(1, 2);
    CHECK(run(wr->feed(b.span())) == pl::feed_status::ok);
    CHECK_FALSE(wr->retry_at());
    CHECK(w.offsets.stored.at(w.p) == 2);
}

TEST_CASE("a spool directory that is gone closes objects at one part instead; nothing is lost",
          "[pipeline][spool][health]") {
    world w;  // part_size 64 bytes, multipart with conditional Complete: objects past a part spool
    w.options.spool_dir = "/nonexistent/iggy-s3-sink-test-spool";
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 39);  // far more than a part
    CHECK(run(wr->feed(b.span())) == pl::feed_status::ok);
    CHECK(w.health.spool_errors(pl::spool_error_reason::missing) >= 1);
    REQUIRE(w.health.spool());
    CHECK(w.health.spool()->reason == pl::spool_error_reason::missing);
    CHECK(w.store.creates == 0);  // nothing was spooled, so nothing went up as multipart
    CHECK(w.store.puts >= 1);     // closed objects of about one part each
    CHECK(run(wr->flush(pl::rotate_reason::stop)));
    CHECK(w.offsets.stored.at(w.p) == 39);
    std::uint64_t records = 0;
    for (const auto& [key, o] : w.store.objects) records += o.range.count;
    CHECK(records == 40);
}

TEST_CASE("group mode: a failing offset store is retried at a backoff up to the cap, not at every tick",
          "[pipeline][retry][inv5]") {
    world w;
    w.options.mode = pl::consumer_mode::group;
    w.options.retry_backoff = {100ms, 1000ms};
    w.rotation.max_records = 2;
    w.offsets.failure = pl::offset_status::fatal;  // InvalidOffset (4100): a topic created again
    w.offsets.fail_next = 1000;
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 1);
    CHECK(run(wr->feed(b.span())) == pl::feed_status::ok);
    CHECK(w.offsets.stores == 1);
    REQUIRE(wr->pending_commit() == 1);
    CHECK(wr->time_to_due() == std::chrono::nanoseconds{100ms});  // the loop wakes when the backoff ends
    // 100 ticks of 50 ms (5 s): attempts after waits of 100, 200, 400, 800 ms, then 1 s each.
    for (int i = 0; i < 100; ++i) {
        w.clock.advance(50ms);
        run(wr->tick());
    }
    CHECK(w.offsets.stores >= 5);  // still retried: nothing is lost
    CHECK(w.offsets.stores <= 10);
    CHECK(w.sleeper.sleeps == 0);  // group mode never waits inside an operation
    CHECK(wr->pending_commit() == 1);
    CHECK(w.offsets.stored.empty());
    w.clock.advance(2000ms);  // the backoff over without a tick: the loop is woken at base, not spun
    CHECK(wr->time_to_due() == std::chrono::nanoseconds{100ms});
    // The store answers again: the offset is stored at the next attempt, within the cap.
    w.offsets.fail_next = 0;
    for (int i = 0; i < 20 && wr->pending_commit(); ++i) {
        w.clock.advance(50ms);
        run(wr->tick());
    }
    CHECK_FALSE(wr->pending_commit());
    CHECK(w.offsets.stored.at(w.p) == 1);
}
