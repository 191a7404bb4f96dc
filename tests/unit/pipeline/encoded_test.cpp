// SPDX-License-Identifier: Apache-2.0
// The delivery contract with several open objects per partition (one per encoded partition):
// the generalised rules G1..G5 of the essay in pipeline/delivery.hpp. Each test is written so
// that breaking its rule makes it fail; tests/unit/pipeline/mutants.py applies those breaks.
#include "fakes.hpp"
#include "format/key_fields.hpp"
#include "pipeline/adapters/key_namer.hpp"
#include "proto/message.hpp"

#include "catch2_compat.hpp"
#include <date/tz.h>

#include <random>
#include <set>

namespace pl = iss::pipeline;
using namespace std::chrono_literals;
using fakes::batch;
using fakes::run;
using fakes::world;

namespace {

using fakes::tenant_namer;

/// A world whose namer splits by tenant.
struct tworld : world {
    tenant_namer tnamer;
    pl::writer_ports tports() {
        pl::writer_ports wp{store, offsets, encoders, tnamer, sleeper, clock, &dead_letters};
        wp.workers = test_workers();
        return wp;
    }
    std::unique_ptr<pl::partition_writer> writer(const pl::rotation_policy& rp,
                                                 std::optional<std::uint64_t> committed = {}) {
        return std::make_unique<pl::partition_writer>(p, options, rp, tports(), committed);
    }
    std::string key(const std::string& tenant, std::uint64_t first) const {
        return fmt::format("{}/t={}/{:020}", p.partition, tenant, first);
    }
};

/// Messages whose tenants are given by a string: "ABAB" = 0:A, 1:B, 2:A, 3:B.
batch tenants(std::string_view who, std::uint64_t from = 0) {
    batch b;
    for (std::size_t i = 0; i < who.size(); ++i) {
        const std::uint64_t o = from + i;
        b.add(o, 1'000'000 + o * 1000, fmt::format("{}:m{}", who[i], o));
    }
    return b;
}

/// Feeds `msgs` (all offsets from 0) into `w` as a consumer would: from next_offset(), in
/// batches of up to `step`, re-polling after a rewind, until the writer has seen offset
/// `upto` - 1 (or stopped).
void feed_until(pl::partition_writer& w, const batch& msgs, std::uint64_t upto, std::size_t step) {
    for (int guard = 0; guard < 10'000; ++guard) {
        const std::uint64_t from = w.next_offset().value_or(0);
        if (from >= upto || w.state() != pl::writer_state::running) return;
        std::vector<pl::message> part;
        for (const auto& m : msgs.messages)
            if (m.offset >= from && m.offset < upto && part.size() < step) part.push_back(m);
        if (part.empty()) return;
        (void)run(w.feed(part));
    }
    FAIL("feeding did not converge");
}

}  // namespace

TEST_CASE("encoded: each encoded partition gets its own object, keyed by its own first offset (G1)",
          "[pipeline][encoded][g1]") {
    tworld w;
    auto rp = w.policy();
    auto wr = w.writer(rp);
    auto b = tenants("ABABA");
    CHECK(run(wr->feed(b.span())) == pl::feed_status::ok);
    CHECK(wr->open_objects() == 2);
    CHECK(run(wr->flush(pl::rotate_reason::stop)));
    REQUIRE(w.store.objects.size() == 2);
    CHECK(w.store.objects.at(w.key("A", 0)).range == pl::object_range{0, 4, 3});
    CHECK(w.store.objects.at(w.key("B", 1)).range == pl::object_range{1, 3, 2});
    CHECK(w.store.objects.at(w.key("A", 0)).body == "0:A:m0\n2:A:m2\n4:A:m4\n");
    CHECK(w.offsets.stored.at(w.p) == 4);
}

TEST_CASE("encoded: each message's key is parsed once where runs into one object end at another object's message",
          "[pipeline][encoded]") {
    // A run into one object ends before the first message that belongs elsewhere; that
    // message's key goes on already parsed (with a real namer a parse is a JSON field read).
    // (Parts larger than the objects here: a run also stops at a part boundary, and the
    // records after it are parsed again there.)
    tworld w;
    w.options.part_size = 1 << 20;
    auto rp = w.policy();
    auto wr = w.writer(rp);
    const std::string who = "AAAAAAAABABABABBBBBBBBAAB";
    auto b = tenants(who);
    CHECK(run(wr->feed(b.span())) == pl::feed_status::ok);
    CHECK(w.tnamer.encodes.load() == static_cast<int>(who.size()));
    CHECK(run(wr->flush(pl::rotate_reason::stop)));
    REQUIRE(w.store.objects.size() == 2);
    CHECK(w.store.objects.at(w.key("A", 0)).range.count == 13);
    CHECK(w.store.objects.at(w.key("B", 8)).range.count == 12);
}

TEST_CASE("encoded: the stored offset is one below the lowest first offset among the open objects (G3)",
          "[pipeline][encoded][g3]") {
    tworld w;
    w.rotation.max_records = 2;
    auto rp = w.policy();
    auto wr = w.writer(rp);
    // A0 A1 -> A's object [0,1] closes; B opens at 2; A3 A4 -> A's [3,4] closes.
    auto b = tenants("AABAA");
    CHECK(run(wr->feed(b.span())) == pl::feed_status::ok);
    REQUIRE(w.store.objects.count(w.key("A", 3)) == 1);
    // B's message 2 is only held: the stored offset is exactly 1 (not 2, not 4).
    CHECK(w.offsets.stored.at(w.p) == 1);
    CHECK(wr->commit_point() == std::optional<std::uint64_t>{1});
    CHECK(run(wr->flush(pl::rotate_reason::stop)));
    CHECK(w.offsets.stored.at(w.p) == 4);
}

TEST_CASE("encoded: objects closed together stay in flight until each is durable (G3)", "[pipeline][encoded][g3]") {
    tworld w;
    auto rp = w.policy();
    auto wr = w.writer(rp);
    auto b = tenants("AABB");  // A@0 [0,1], B@2 [2,3]
    run(wr->feed(b.span()));
    CHECK(w.offsets.stored.empty());
    CHECK(run(wr->flush(pl::rotate_reason::stop)));
    // Delivered in first-offset order; after A only 1 may be stored, B is still in flight.
    const auto put_a = w.index_of("put " + w.key("A", 0));
    const auto commit_1 = w.index_of("commit 1 1");
    const auto put_b = w.index_of("put " + w.key("B", 2));
    const auto commit_3 = w.index_of("commit 1 3");
    REQUIRE(put_b < w.events.size());
    CHECK(put_a < commit_1);
    CHECK(commit_1 < put_b);
    CHECK(put_b < commit_3);
    for (const auto& e : w.events)
        if (e.rfind("commit", 0) == 0) CHECK((e == "commit 1 1" || e == "commit 1 3"));
}

TEST_CASE("encoded: the stored offset never falls inside a delivered object (G3)", "[pipeline][encoded][g3]") {
    tworld w;
    w.rotation.max_records = 2;
    auto rp = w.policy();
    auto wr = w.writer(rp);
    // A0 B1 A2: A's object [0,2] is durable, B's (opened at 1) is open. Storing 0 would make a
    // restart read from 1 and meet A's message 2 without its first message 0.
    auto b = tenants("ABA");
    run(wr->feed(b.span()));
    REQUIRE(w.store.objects.count(w.key("A", 0)) == 1);
    CHECK(w.offsets.stored.empty());
    CHECK_FALSE(wr->commit_point().has_value());
    auto b2 = tenants("B", 3);  // B's object [1,3] closes: nothing open, 3 may be stored
    run(wr->feed(b2.span()));
    CHECK(w.offsets.stored.at(w.p) == 3);
}

TEST_CASE("encoded: a 412 marks done only that encoded partition's messages up to the existing last offset (G2)",
          "[pipeline][encoded][g2]") {
    tworld w;
    w.rotation.max_records = 2;
    // An earlier run wrote A's object at 0 holding A's messages up to 6.
    w.store.objects[w.key("A", 0)] = fakes::stored_object{"0:A:m0\n2:A:m2\n4:A:m4\n6:A:m6\n", {0, 6, 4}, "x", false};
    auto rp = w.policy();
    auto wr = w.writer(rp);
    auto b = tenants("ABABABAB");
    feed_until(*wr, b, 8, 8);
    CHECK(run(wr->flush(pl::rotate_reason::stop)));
    CHECK(w.store.objects.at(w.key("A", 0)).range == pl::object_range{0, 6, 4});
    CHECK(w.store.overwrites == 0);
    CHECK(wr->counters().objects_adopted == 1);
    // A's 4 and 6 are covered by the existing object; every message is in the bucket once.
    const auto got = w.bucket_offsets();
    for (std::uint64_t o = 0; o < 8; ++o) CHECK(got.at(o) == 1);
    for (const auto& [k, o] : w.store.objects)
        if (k != w.key("A", 0)) CHECK(k.find("t=A") == std::string::npos);
    CHECK(w.offsets.stored.at(w.p) == 7);
}

TEST_CASE("encoded: an existing object that holds less makes only its encoded partition re-read (G2)",
          "[pipeline][encoded][g2]") {
    tworld w;
    w.rotation.max_records = 3;
    w.store.objects[w.key("A", 0)] = fakes::stored_object{"0:A:m0\n2:A:m2\n", {0, 2, 2}, "x", false};
    auto rp = w.policy();
    auto wr = w.writer(rp);
    auto b = tenants("ABABAB");  // A closes at 4 with 0,2,4: 412, the existing one ends at 2
    CHECK(run(wr->feed(b.span())) == pl::feed_status::rewind);
    CHECK(wr->next_offset() == 3u);
    CHECK_FALSE(w.offsets.stored.count(w.p));  // B's object opened at 1 holds the offset back
    feed_until(*wr, b, 6, 2);
    CHECK(run(wr->flush(pl::rotate_reason::stop)));
    const auto got = w.bucket_offsets();
    for (std::uint64_t o = 0; o < 6; ++o) CHECK(got.at(o) == 1);
    CHECK(w.store.objects.at(w.key("A", 4)).range == pl::object_range{4, 4, 1});
    CHECK(w.store.objects.at(w.key("B", 1)).range == pl::object_range{1, 5, 3});
    CHECK(w.offsets.stored.at(w.p) == 5);
}

TEST_CASE("encoded: above max_open_objects the object with the oldest first message is closed first (G4)",
          "[pipeline][encoded][g4]") {
    tworld w;
    w.options.max_open_objects = 2;
    auto rp = w.policy();
    auto wr = w.writer(rp);
    auto b = tenants("BACAB");
    CHECK(run(wr->feed(b.span())) == pl::feed_status::ok);
    // C at 2 closed B (first message 0), not A; B at 4 then closed A (first message 1).
    CHECK(wr->open_objects() == 2);
    CHECK(w.store.objects.at(w.key("B", 0)).range == pl::object_range{0, 0, 1});
    CHECK(w.store.objects.at(w.key("A", 1)).range == pl::object_range{1, 3, 2});
    CHECK(w.store.objects.count(w.key("C", 2)) == 0);
    CHECK(run(wr->flush(pl::rotate_reason::stop)));
    CHECK(w.store.objects.at(w.key("C", 2)).range == pl::object_range{2, 2, 1});
    CHECK(w.store.objects.at(w.key("B", 4)).range == pl::object_range{4, 4, 1});
    CHECK(w.offsets.stored.at(w.p) == 4);
}

TEST_CASE("encoded: every stored offset is durable, and a restart from it writes each message exactly once",
          "[pipeline][encoded][g3][replay]") {
    // Property test over seeded random runs: three tenants, a first run that crashes after a
    // random number of messages (nothing flushed), a second run with other rotation limits
    // that crashes too, and a third that finishes. Offsets stored by any run must be durable
    // at the moment they are stored; the bucket must end with every message exactly once.
    for (std::uint32_t seed = 1; seed <= 300; ++seed) {
        std::mt19937 rng{seed};
        const std::size_t n = 10 + rng() % 30;
        std::string who;
        for (std::size_t i = 0; i < n; ++i) who += static_cast<char>('A' + rng() % 3);
        const batch msgs = tenants(who);
        tworld w;
        w.offsets.audit = [&](std::uint64_t off) {
            const auto got = w.bucket_offsets();
            for (std::uint64_t o = 0; o <= off; ++o) {
                INFO("seed " << seed << " tenants " << who << " stored " << off << " message " << o);
                REQUIRE(got.count(o) == 1);
            }
        };
        std::optional<std::uint64_t> committed;
        // Runs 0 and 1 crash; from run 2 on each run stops cleanly. A clean stop whose last
        // adoption found an existing object holding less leaves the stored offset below what
        // must be re-read, so the next start (run 3, 4) reads it again.
        for (int run_no = 0; run_no < 6 && committed != std::optional<std::uint64_t>{n - 1}; ++run_no) {
            w.rotation.max_records = 1 + rng() % 4;
            w.options.max_open_objects = 1 + rng() % 3;
            auto rp = w.policy();
            auto wr = w.writer(rp, committed);
            const std::uint64_t crash_at = run_no < 2 ? committed.value_or(0) + rng() % (n + 1) : n;
            if (run_no >= 2) w.rotation.max_records = 3;
            w.events.push_back(fmt::format("run {} from {} max_records {} max_open {} crash at {}", run_no,
                                           committed ? std::to_string(*committed) : "-", w.rotation.max_records,
                                           w.options.max_open_objects, crash_at));
            feed_until(*wr, msgs, std::min<std::uint64_t>(crash_at, n), 1 + rng() % 5);
            if (run_no >= 2) REQUIRE(run(wr->flush(pl::rotate_reason::stop)));
            if (w.offsets.stored.count(w.p)) committed = w.offsets.stored.at(w.p);
        }
        std::string trace;
        for (const auto& e : w.events) trace += e + "\n";
        INFO("seed " << seed << " tenants " << who << "\n" << trace);
        const auto got = w.bucket_offsets();
        for (std::uint64_t o = 0; o < n; ++o) {
            INFO("message " << o);
            CHECK(got.count(o) == 1);
            if (got.count(o)) CHECK(got.at(o) == 1);
        }
        CHECK(w.store.overwrites == 0);
        REQUIRE(committed == std::optional<std::uint64_t>{n - 1});
    }
}

// ---------------------------------------------------------------------------------------
// G5: time buckets with the production namer (Iggy append time, Europe/Berlin).

namespace {
/// µs of a UTC time.
std::uint64_t utc_us(int y, unsigned mo, unsigned d, int h, int mi) {
    using namespace std::chrono;
    const auto day = date::sys_days{date::year{y} / date::month{mo} / date::day{d}};
    return static_cast<std::uint64_t>(
        duration_cast<microseconds>((day + hours{h} + minutes{mi}).time_since_epoch()).count());
}
}  // namespace

TEST_CASE(
    "encoded: a later time bucket closes the objects of earlier ones; the two 02 hours of a fall-back night stay apart "
    "(G5)",
    "[pipeline][encoded][g5]") {
    world w;
    auto t = *iss::format::key_template::parse("{partition}/dt={date}/hour={hour}/{start_offset:020}");
    pl::template_key_namer namer{t, "", "jsonl", {}, date::locate_zone("Europe/Berlin"), "__HIVE_DEFAULT_PARTITION__"};
    REQUIRE(namer.closes_on_later_bucket());
    pl::writer_ports ports{w.store, w.offsets, w.encoders, namer, w.sleeper, w.clock, &w.dead_letters};
    auto rp = w.policy();
    pl::partition_writer wr{w.p, w.options, rp, ports, std::nullopt};
    batch b;
    // 2026-10-25: CEST ends at 01:00 UTC (03:00 CEST -> 02:00 CET).
    b.add(0, utc_us(2026, 10, 25, 0, 10), "x");  // 02:10 CEST
    b.add(1, utc_us(2026, 10, 25, 0, 50), "x");  // 02:50 CEST
    b.add(2, utc_us(2026, 10, 25, 1, 5), "x");   // 02:05 CET: same rendering, later bucket
    b.add(3, utc_us(2026, 10, 25, 2, 0), "x");   // 03:00 CET
    CHECK(run(wr.feed(b.span())) == pl::feed_status::ok);
    // 0..1 closed when 2 arrived, 2 when 3 arrived; 3 is open.
    CHECK(w.store.objects.at("1/dt=2026-10-25/hour=02/00000000000000000000").range == pl::object_range{0, 1, 2});
    CHECK(w.store.objects.at("1/dt=2026-10-25/hour=02/00000000000000000002").range == pl::object_range{2, 2, 1});
    CHECK(wr.open_objects() == 1);
    CHECK(w.offsets.stored.at(w.p) == 2);
    CHECK(run(wr.flush(pl::rotate_reason::stop)));
    CHECK(w.store.objects.count("1/dt=2026-10-25/hour=03/00000000000000000003") == 1);
}

TEST_CASE("encoded: with a field time source buckets do not close objects; out-of-order hours stay open together",
          "[pipeline][encoded][g5]") {
    world w;
    auto t = *iss::format::key_template::parse("{partition}/hour={hour}/{start_offset:020}");
    pl::template_key_namer namer{t,
                                 "",
                                 "jsonl",
                                 *iss::format::parse_time_source("field:ts"),
                                 date::locate_zone("UTC"),
                                 "__HIVE_DEFAULT_PARTITION__"};
    CHECK_FALSE(namer.closes_on_later_bucket());
    pl::writer_ports ports{w.store, w.offsets, w.encoders, namer, w.sleeper, w.clock, &w.dead_letters};
    auto rp = w.policy();
    pl::partition_writer wr{w.p, w.options, rp, ports, std::nullopt};
    batch b;
    b.add(0, 1, R"({"ts":"2026-01-01T10:30:00Z"})");
    b.add(1, 2, R"({"ts":"2026-01-01T11:10:00Z"})");
    b.add(2, 3, R"({"ts":1767262200000})");  // 2026-01-01T10:10:00Z as epoch ms: an hour back
    CHECK(run(wr.feed(b.span())) == pl::feed_status::ok);
    CHECK(wr.open_objects() == 2);
    CHECK(run(wr.flush(pl::rotate_reason::stop)));
    CHECK(w.store.objects.at("1/hour=10/00000000000000000000").range == pl::object_range{0, 2, 2});
    CHECK(w.store.objects.at("1/hour=11/00000000000000000001").range == pl::object_range{1, 1, 1});
}

TEST_CASE("encoded: with a field time source the two 02 hours of a fall-back night stay apart, interleaved (G5)",
          "[pipeline][encoded][g5]") {
    world w;
    auto t = *iss::format::key_template::parse("{partition}/dt={date}/hour={hour}/{start_offset:020}");
    pl::template_key_namer namer{t,
                                 "",
                                 "jsonl",
                                 *iss::format::parse_time_source("field:ts"),
                                 date::locate_zone("Europe/Berlin"),
                                 "__HIVE_DEFAULT_PARTITION__"};
    pl::writer_ports ports{w.store, w.offsets, w.encoders, namer, w.sleeper, w.clock, &w.dead_letters};
    auto rp = w.policy();
    pl::partition_writer wr{w.p, w.options, rp, ports, std::nullopt};
    batch b;
    // 2026-10-25, CEST ends at 01:00 UTC: both passes of the local 02 hour, out of order.
    b.add(0, 1, R"({"ts":"2026-10-25T02:10:00+02:00"})");  // 02:10 CEST
    b.add(1, 2, R"({"ts":"2026-10-25T02:05:00+01:00"})");  // 02:05 CET
    b.add(2, 3, R"({"ts":1792889400000})");                // 2026-10-25T00:50:00Z = 02:50 CEST
    b.add(3, 4, R"({"ts":"2026-10-25T01:40:00Z"})");       // 02:40 CET
    CHECK(run(wr.feed(b.span())) == pl::feed_status::ok);
    CHECK(wr.open_objects() == 2);
    CHECK(w.offsets.stored.count(w.p) == 0);  // below offset 0, the first message of the CEST object
    CHECK(run(wr.flush(pl::rotate_reason::stop)));
    REQUIRE(w.store.objects.size() == 2);
    CHECK(w.store.objects.at("1/dt=2026-10-25/hour=02/00000000000000000000").range == pl::object_range{0, 2, 2});
    CHECK(w.store.objects.at("1/dt=2026-10-25/hour=02/00000000000000000001").range == pl::object_range{1, 3, 2});
    CHECK(w.offsets.stored.at(w.p) == 3);
}

TEST_CASE("encoded: a message whose time cannot be read follows on_bad_message", "[pipeline][encoded][bad]") {
    world w;
    w.options.on_bad_message = pl::bad_message_policy::skip;
    auto t = *iss::format::key_template::parse("{partition}/hour={hour}/{start_offset:020}");
    pl::template_key_namer namer{t,
                                 "",
                                 "jsonl",
                                 *iss::format::parse_time_source("field:ts"),
                                 date::locate_zone("UTC"),
                                 "__HIVE_DEFAULT_PARTITION__"};
    pl::writer_ports ports{w.store, w.offsets, w.encoders, namer, w.sleeper, w.clock, &w.dead_letters};
    auto rp = w.policy();
    pl::partition_writer wr{w.p, w.options, rp, ports, std::nullopt};
    batch b;
    b.add(0, 1, R"({"ts":"2026-01-01T10:30:00Z"})");
    b.add(1, 2, R"({"no_ts":1})");
    b.add(2, 3, R"({"ts":"yesterday"})");
    b.add(3, 4, R"({"ts":"2026-01-01T10:40:00Z"})");
    CHECK(run(wr.feed(b.span())) == pl::feed_status::ok);
    CHECK(wr.counters().bad_skipped == 2);
    CHECK(run(wr.flush(pl::rotate_reason::stop)));
    CHECK(w.store.objects.at("1/hour=10/00000000000000000000").range == pl::object_range{0, 3, 2});
    CHECK(w.offsets.stored.at(w.p) == 3);

    world w2;  // fail: what precedes it is delivered, the partition stops at it
    pl::writer_ports ports2{w2.store, w2.offsets, w2.encoders, namer, w2.sleeper, w2.clock, &w2.dead_letters};
    pl::partition_writer wr2{w2.p, w2.options, rp, ports2, std::nullopt};
    CHECK(run(wr2.feed(b.span())) == pl::feed_status::stopped);
    CHECK(wr2.state() == pl::writer_state::failed);
    CHECK(w2.offsets.stored.at(w2.p) == 0);
    CHECK(wr2.next_offset() == 1u);
}
