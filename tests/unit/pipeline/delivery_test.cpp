// SPDX-License-Identifier: Apache-2.0
// The delivery contract (docs/architecture.md §3), one section per invariant. Each test names the
// invariant it guards and is written so that breaking that invariant makes it fail.
#include "fakes.hpp"
#include "pipeline/error.hpp"

#include "catch2_compat.hpp"

namespace pl = iss::pipeline;
using namespace std::chrono_literals;
using fakes::batch;
using fakes::make_writer;
using fakes::run;
using fakes::world;

namespace {
std::string key_of(world& w, std::uint64_t first) { return w.namer.key(w.p, first).get(); }
}  // namespace

// ---------------------------------------------------------------------------------------
// Invariant 1: commit after durability

TEST_CASE("inv1: the offset is stored only after the PutObject that holds it succeeded", "[pipeline][delivery][inv1]") {
    world w;
    w.rotation.max_records = 3;
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 7);
    CHECK(run(wr->feed(b.span())) == pl::feed_status::ok);
    // Two objects closed (0..2, 3..5); 6, 7 still open and NOT committed.
    REQUIRE(w.store.objects.size() == 2);
    CHECK(w.offsets.stored.at(w.p) == 5);
    const auto put1 = w.index_of("put " + key_of(w, 0));
    const auto commit1 = w.index_of("commit 1 2");
    const auto put2 = w.index_of("put " + key_of(w, 3));
    const auto commit2 = w.index_of("commit 1 5");
    REQUIRE(commit1 < w.events.size());
    CHECK(put1 < commit1);
    CHECK(put2 < commit2);
    CHECK(wr->holds_data());
    CHECK(wr->committed() == 5u);
}

TEST_CASE("inv1: nothing is committed while the upload keeps failing", "[pipeline][delivery][inv1]") {
    world w;
    w.options.mode = pl::consumer_mode::group;  // gives up instead of retrying
    w.rotation.max_records = 2;
    w.store.fail_next = 1;
    auto rp = w.policy();
    auto wr = make_writer(w, rp, 9);
    auto b = batch::range(10, 11);
    CHECK(run(wr->feed(b.span())) == pl::feed_status::rewind);
    CHECK(w.store.objects.empty());
    CHECK(w.offsets.stores == 0);
    CHECK(wr->next_offset() == 10u);  // re-read from the committed offset
    CHECK_FALSE(wr->holds_data());
}

TEST_CASE("inv1: single mode retries the upload without end, then commits", "[pipeline][delivery][inv1]") {
    world w;
    w.rotation.max_records = 2;
    w.store.fail_next = 7;
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 1);
    CHECK(run(wr->feed(b.span())) == pl::feed_status::ok);
    CHECK(w.store.puts == 8);
    CHECK(w.sleeper.sleeps == 7);
    CHECK(wr->counters().retries == 7);
    CHECK(w.offsets.stored.at(w.p) == 1);
    CHECK(w.index_of("put " + key_of(w, 0)) < w.index_of("commit 1 1"));
}

TEST_CASE("inv1: a failed commit is retried and never moves ahead of durable data", "[pipeline][delivery][inv1]") {
    world w;
    w.options.mode = pl::consumer_mode::group;
    w.rotation.max_records = 2;
    w.offsets.fail_next = 1;
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 2);
    CHECK(run(wr->feed(b.span())) == pl::feed_status::ok);
    CHECK(w.offsets.stored.empty());
    CHECK(wr->pending_commit() == 1u);
    run(wr->tick());  // within the backoff (s3.retry.base, 10 ms here): not tried again yet
    CHECK(w.offsets.stores == 1);
    w.clock.advance(std::chrono::milliseconds{10});
    run(wr->tick());
    CHECK(w.offsets.stored.at(w.p) == 1);  // not 2: offset 2 is only buffered
    CHECK_FALSE(wr->pending_commit());
}

// ---------------------------------------------------------------------------------------
// Invariant 2: deterministic keys

TEST_CASE("inv2: a replay after a crash renders the same keys whatever the clock and trigger",
          "[pipeline][delivery][inv2]") {
    world w;
    w.rotation.max_records = 4;
    {
        auto rp = w.policy();
        auto wr = make_writer(w, rp);
        auto b = batch::range(0, 9);
        run(wr->feed(b.span()));  // objects 0..3, 4..7 written; 8, 9 open
    }
    // crash: the writer is gone with 8, 9
    const auto first_run = w.store.objects;
    // The commits of the first run are lost too (crash between upload and commit).
    w.offsets.stored.clear();
    w.clock.advance(std::chrono::hours{5});
    w.rotation.max_records = 0;  // the replay rotates on idle instead
    w.rotation.idle = 1s;
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    for (int guard = 0; guard < 10 && wr->next_offset().value_or(0) <= 11; ++guard) {
        auto b = batch::range(wr->next_offset().value_or(0), 11);
        run(wr->feed(b.span()));
        w.clock.advance(2s);
        run(wr->tick());
    }
    CHECK(wr->counters().objects_adopted == 2);
    for (const auto& [k, o] : first_run) CHECK(w.store.objects.at(k).body == o.body);  // same keys, untouched
    CHECK(w.store.overwrites == 0);
    for (const auto& [off, n] : w.bucket_offsets()) {
        INFO("offset " << off);
        CHECK(n == 1);
    }
    CHECK(w.bucket_offsets().size() == 12);
    CHECK(w.offsets.stored.at(w.p) == 11);
}

namespace {
struct clock_namer final : pl::key_namer {
    explicit clock_namer(iss::manual_clock& c) : c_{c} {}
    iss::object_key key(const pl::partition_ref& p, std::uint64_t first) const override {
        c_.advance(1s);  // as if it read the time
        return iss::object_key{fmt::format("{}/{}/{}", p.partition, first, c_.system_now().time_since_epoch().count())};
    }
    iss::manual_clock& c_;
};
struct no_offset_namer final : pl::key_namer {
    iss::object_key key(const pl::partition_ref& p, std::uint64_t) const override {
        return iss::object_key{fmt::format("{}/x", p.partition)};
    }
};
struct no_partition_namer final : pl::key_namer {
    iss::object_key key(const pl::partition_ref&, std::uint64_t f) const override {
        return iss::object_key{fmt::format("{}", f)};
    }
};
}  // namespace

TEST_CASE("inv2: a key namer that depends on anything but partition and first offset is refused",
          "[pipeline][delivery][inv2]") {
    iss::manual_clock c;
    const pl::partition_ref p{"s", "t", 0};
    CHECK(pl::check_key_namer(fakes::offset_namer{}, p).has_value());
    CHECK(pl::check_key_namer(clock_namer{c}, p).error() == pl::errc::nondeterministic_key);
    CHECK(pl::check_key_namer(no_offset_namer{}, p).error() == pl::errc::nondeterministic_key);
    CHECK(pl::check_key_namer(no_partition_namer{}, p).error() == pl::errc::nondeterministic_key);
}

TEST_CASE("inv2: the key is the namer's key for the object's FIRST offset", "[pipeline][delivery][inv2]") {
    world w;
    w.rotation.max_records = 5;
    auto rp = w.policy();
    auto wr = make_writer(w, rp, 99);
    auto b = batch::range(100, 109);
    run(wr->feed(b.span()));
    REQUIRE(w.store.objects.count(key_of(w, 100)) == 1);
    REQUIRE(w.store.objects.count(key_of(w, 105)) == 1);
    CHECK(w.store.objects.at(key_of(w, 105)).range == pl::object_range{105, 109, 5});
}

// ---------------------------------------------------------------------------------------
// Invariant 3: write once, adopt what exists

TEST_CASE("inv3: every write is conditional and carries the range metadata", "[pipeline][delivery][inv3]") {
    world w;
    w.rotation.max_records = 3;
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 2);
    run(wr->feed(b.span()));
    const auto& o = w.store.objects.at(key_of(w, 0));
    CHECK(o.range == pl::object_range{0, 2, 3});
    CHECK(o.body == "0:m0\n1:m1\n2:m2\n");
    CHECK(o.content_type == "application/x-ndjson");
    // Re-feeding from scratch (a replay) must hit the 412 path, not overwrite.
    auto wr2 = make_writer(w, rp);
    run(wr2->feed(b.span()));
    CHECK(w.store.overwrites == 0);
    CHECK(wr2->counters().objects_adopted == 1);
}

TEST_CASE("inv3: a 412 adopts an existing object that holds MORE: its messages are dropped, reading goes on after it",
          "[pipeline][delivery][inv3]") {
    world w;
    w.rotation.max_records = 4;
    // A stale owner / crashed run wrote 0..7 under the key of offset 0.
    w.store.objects[key_of(w, 0)] = fakes::stored_object{"theirs", {0, 7, 8}, "x", false};
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 9);
    CHECK(run(wr->feed(b.span())) == pl::feed_status::ok);
    CHECK(w.store.objects.at(key_of(w, 0)).body == "theirs");  // never overwritten
    CHECK(w.store.overwrites == 0);
    CHECK(w.offsets.stored.at(w.p) == 7);  // the existing last offset, committed
    CHECK(wr->counters().objects_adopted == 1);
    // 4..7 were dropped (covered); 8, 9 start the next object at key 8.
    CHECK(w.store.objects.count(key_of(w, 4)) == 0);
    CHECK(wr->holds_data());
    CHECK(run(wr->flush(pl::rotate_reason::stop)));
    CHECK(w.store.objects.at(key_of(w, 8)).range == pl::object_range{8, 9, 2});
}

TEST_CASE("inv3: a 412 adopts an existing object that holds LESS and re-reads what follows it",
          "[pipeline][delivery][inv3]") {
    world w;
    w.rotation.max_records = 6;
    w.store.objects[key_of(w, 0)] = fakes::stored_object{"theirs", {0, 2, 3}, "x", false};
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 9);
    CHECK(run(wr->feed(b.span())) == pl::feed_status::rewind);
    CHECK(wr->next_offset() == 3u);
    CHECK(w.offsets.stored.at(w.p) == 2);
    CHECK_FALSE(wr->holds_data());
    auto b2 = batch::range(3, 9);
    CHECK(run(wr->feed(b2.span())) == pl::feed_status::ok);
    CHECK(w.store.objects.at(key_of(w, 3)).range == pl::object_range{3, 8, 6});
    CHECK(w.store.objects.at(key_of(w, 0)).body == "theirs");
}

TEST_CASE("inv3: a 412 on CompleteMultipartUpload adopts and aborts the upload", "[pipeline][delivery][inv3]") {
    world w;
    w.options.part_size = 16;  // a few records per part
    w.rotation.max_records = 10;
    w.store.objects[key_of(w, 0)] = fakes::stored_object{"theirs", {0, 9, 10}, "x", true};
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 9);
    run(wr->feed(b.span()));
    CHECK(w.store.completes == 1);
    CHECK(w.store.aborts == 1);
    CHECK(w.store.uploads.empty());
    CHECK(w.store.objects.at(key_of(w, 0)).body == "theirs");
    CHECK(w.offsets.stored.at(w.p) == 9);
}

TEST_CASE("inv3: an existing object without usable metadata is never overwritten; the partition stops",
          "[pipeline][delivery][inv3]") {
    world w;
    w.rotation.max_records = 2;
    w.store.objects[key_of(w, 0)] = fakes::stored_object{"foreign", {0, 1, 2}, "x", false};
    w.store.strip_metadata = true;
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 1);
    CHECK(run(wr->feed(b.span())) == pl::feed_status::stopped);
    CHECK(wr->state() == pl::writer_state::failed);
    CHECK(w.store.objects.at(key_of(w, 0)).body == "foreign");
    CHECK(w.store.overwrites == 0);
    CHECK(w.offsets.stored.empty());
}

// ---------------------------------------------------------------------------------------
// Invariant 4: capabilities

TEST_CASE("inv4: the plan follows the probed capabilities and names the guarantee", "[pipeline][delivery][inv4]") {
    using pl::conditional_writes;
    using pl::consumer_mode;
    auto full = pl::plan_delivery({true, true}, conditional_writes::auto_detect, consumer_mode::group);
    CHECK(full->strategy == pl::upload_strategy::multipart_conditional);
    CHECK(full->if_none_match);
    CHECK(full->guarantee.find("exactly-once") != std::string::npos);
    auto rgw = pl::plan_delivery({true, false}, conditional_writes::auto_detect, consumer_mode::group);
    CHECK(rgw->strategy == pl::upload_strategy::single_part_conditional);
    CHECK(rgw->guarantee.find("part_size") != std::string::npos);
    auto none = pl::plan_delivery({false, false}, conditional_writes::auto_detect, consumer_mode::group);
    CHECK(none->strategy == pl::upload_strategy::head_then_write);
    CHECK(none->guarantee.find("duplicate") != std::string::npos);
    CHECK(pl::plan_delivery({false, false}, conditional_writes::required, consumer_mode::single).error() ==
          pl::errc::conditional_required);
    auto off = pl::plan_delivery({true, true}, conditional_writes::off, consumer_mode::single);
    CHECK(off->strategy == pl::upload_strategy::head_then_write);
    CHECK_FALSE(off->if_none_match);
}

TEST_CASE("inv4: where conditional Complete is not honoured, objects close at part_size and never go multipart",
          "[pipeline][delivery][inv4]") {
    world w;
    w.options.plan = *pl::plan_delivery({true, false}, pl::conditional_writes::auto_detect, pl::consumer_mode::group);
    w.options.part_size = 20;  // "N:mN\n" is 5-6 bytes: 4 records reach 20
    w.store.honours_complete = false;
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 11);
    run(wr->feed(b.span()));
    run(wr->flush(pl::rotate_reason::stop));
    CHECK(w.store.creates == 0);
    CHECK(w.store.completes == 0);
    CHECK(w.store.objects.size() == 3);
    for (const auto& [k, o] : w.store.objects) {
        CHECK_FALSE(o.multipart);
        CHECK(o.body.size() < 20 + 6);  // closed at the record that reached part_size
    }
    CHECK(w.bucket_offsets().size() == 12);
}

TEST_CASE(
    "inv4: with conditional Complete, a big object goes multipart with parts of part_size and a conditional Complete",
    "[pipeline][delivery][inv4]") {
    world w;
    w.options.part_size = 32;
    w.rotation.max_records = 40;
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 39);
    run(wr->feed(b.span()));
    REQUIRE(w.store.objects.size() == 1);
    const auto& o = w.store.objects.at(key_of(w, 0));
    CHECK(o.multipart);
    CHECK(o.range == pl::object_range{0, 39, 40});
    CHECK(w.store.largest_part == 32);
    CHECK(w.store.parts >= 6);
    REQUIRE(w.store.complete_conditions.size() == 1);
    CHECK(w.store.complete_conditions[0]);
    std::string expect;
    for (int i = 0; i < 40; ++i) expect += fmt::format("{}:m{}\n", i, i);
    CHECK(o.body == expect);
}

TEST_CASE("each part goes up with the digests computed while its bytes were produced, retries included",
          "[pipeline][delivery]") {
    world w;
    w.options.part_size = 32;
    w.rotation.max_records = 40;
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    // Records of varied sizes, so part boundaries fall inside records and spills.
    batch b;
    for (std::uint64_t o = 0; o < 100; ++o) b.add(o, 1'000'000 + o, fmt::format("m{}{}", o, std::string(o % 17, 'z')));
    // Failed writes are retried (a multipart upload from its first part): the last partial
    // part's digests, finished on the first attempt, must be the same on the next.
    w.store.fail_next = 4;
    w.store.fail_completes = 2;
    run(wr->feed(b.span()));
    run(wr->flush(pl::rotate_reason::stop));
    CHECK(w.store.fail_next == 0);
    CHECK(w.store.fail_completes == 0);
    CHECK(w.store.objects.size() == 3);
    CHECK(w.store.parts > 20);
    // Every part and put came with the writer's digests (CRC-32C, MD5, SHA-256), and the store
    // found each one right.
    CHECK(w.store.checksums_given == w.store.parts + w.store.puts);
    CHECK(w.store.bad_checksums == 0);
    CHECK(w.offsets.stored.at(w.p) == 99);
}

TEST_CASE("inv4: without conditional PutObject, a HEAD before the write adopts what a crashed run left",
          "[pipeline][delivery][inv4]") {
    world w;
    w.options.plan = *pl::plan_delivery({false, false}, pl::conditional_writes::auto_detect, pl::consumer_mode::single);
    w.store.honours_put = false;
    w.rotation.max_records = 3;
    w.store.objects[key_of(w, 0)] = fakes::stored_object{"theirs", {0, 2, 3}, "x", false};
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 5);
    run(wr->feed(b.span()));
    CHECK(w.store.overwrites == 0);
    CHECK(w.store.objects.at(key_of(w, 0)).body == "theirs");
    CHECK(w.store.objects.count(key_of(w, 3)) == 1);
}

// ---------------------------------------------------------------------------------------
// Invariant 5: ownership

TEST_CASE("inv5: flush on hand-over uploads and commits at once, before any trigger", "[pipeline][delivery][inv5]") {
    world w;
    w.options.mode = pl::consumer_mode::group;
    w.rotation.max_records = 1000;
    w.rotation.idle = 10min;
    auto rp = w.policy();
    auto wr = make_writer(w, rp, 4);
    auto b = batch::range(5, 9);
    run(wr->feed(b.span()));
    CHECK(w.store.objects.empty());
    CHECK(run(wr->flush(pl::rotate_reason::hand_over)));
    CHECK(w.store.objects.at(key_of(w, 5)).range == pl::object_range{5, 9, 5});
    CHECK(w.offsets.stored.at(w.p) == 9);
}

TEST_CASE("inv5: 3022/5006 on commit drops what is held, never what is durable", "[pipeline][delivery][inv5]") {
    world w;
    w.options.mode = pl::consumer_mode::group;
    w.rotation.max_records = 3;
    w.offsets.not_owner = true;
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 4);
    CHECK(run(wr->feed(b.span())) == pl::feed_status::stopped);
    CHECK(wr->state() == pl::writer_state::revoked);
    CHECK(w.store.objects.count(key_of(w, 0)) == 1);  // the durable object stays
    CHECK_FALSE(wr->holds_data());
}

TEST_CASE("inv5: group mode gives up on a failing store at once (bounded), single mode never does",
          "[pipeline][delivery][inv5]") {
    for (auto mode : {pl::consumer_mode::group, pl::consumer_mode::single}) {
        world w;
        w.options.mode = mode;
        w.rotation.max_records = 2;
        w.store.fail_next = 3;
        w.store.failure = pl::store_status::fatal;
        auto rp = w.policy();
        auto wr = make_writer(w, rp, 0);
        auto b = batch::range(1, 2);
        const auto s = run(wr->feed(b.span()));
        if (mode == pl::consumer_mode::group) {
            CHECK(s == pl::feed_status::rewind);
            CHECK(w.store.puts == 1);
            CHECK(wr->next_offset() == 1u);
            CHECK(wr->counters().records_dropped == 2);
            CHECK(w.offsets.stored.empty());
        } else {
            CHECK(s == pl::feed_status::ok);
            CHECK(w.store.puts == 4);
            CHECK(w.offsets.stored.at(w.p) == 2);
        }
    }
}

TEST_CASE("inv5: drop (after a reconnect) rewinds to the committed offset without uploading",
          "[pipeline][delivery][inv5]") {
    world w;
    auto rp = w.policy();
    auto wr = make_writer(w, rp, 10);
    auto b = batch::range(11, 15);
    run(wr->feed(b.span()));
    wr->drop("reconnected");
    CHECK(w.store.puts == 0);
    CHECK(wr->next_offset() == 11u);
    CHECK_FALSE(wr->holds_data());
}

// ---------------------------------------------------------------------------------------
// Invariant 6: clean stop

TEST_CASE("inv6: flush on stop uploads every buffered record and commits it", "[pipeline][delivery][inv6]") {
    world w;
    w.rotation.max_records = 100;
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 4);
    run(wr->feed(b.span()));
    REQUIRE(w.store.objects.empty());
    CHECK(run(wr->flush(pl::rotate_reason::stop)));
    CHECK(w.bucket_offsets().size() == 5);
    CHECK(w.offsets.stored.at(w.p) == 4);
    CHECK(run(wr->flush(pl::rotate_reason::stop)));  // nothing left: no second object
    CHECK(w.store.objects.size() == 1);
}

// ---------------------------------------------------------------------------------------
// Rotation inside the writer

TEST_CASE("rotation: max_bytes counts the object as uploaded", "[pipeline][delivery][rotation]") {
    world w;
    w.rotation.max_bytes = 10;  // two records of 5 bytes
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 5);
    run(wr->feed(b.span()));
    CHECK(w.store.objects.size() == 3);
    CHECK(w.store.objects.at(key_of(w, 2)).body == "2:m2\n3:m3\n");
}

TEST_CASE("rotation: max_span uses record time and closes BEFORE the message past the span",
          "[pipeline][delivery][rotation]") {
    world w;
    w.rotation.max_span = 3s;
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 9, 0, 1'000'000);  // one message per second of record time
    run(wr->feed(b.span()));
    CHECK(w.store.objects.at(key_of(w, 0)).range == pl::object_range{0, 2, 3});
    CHECK(w.store.objects.at(key_of(w, 3)).range == pl::object_range{3, 5, 3});
    CHECK(w.store.objects.at(key_of(w, 6)).range == pl::object_range{6, 8, 3});
}

TEST_CASE("rotation: an idle partition is flushed by the timer without new data", "[pipeline][delivery][rotation]") {
    world w;
    w.rotation.idle = 5s;
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 2);
    run(wr->feed(b.span()));
    CHECK(wr->time_to_due() == std::chrono::nanoseconds{5s});
    w.clock.advance(4s);
    run(wr->tick());
    CHECK(w.store.objects.empty());
    w.clock.advance(1s);
    run(wr->tick());
    CHECK(w.store.objects.size() == 1);
    CHECK(w.offsets.stored.at(w.p) == 2);
    CHECK_FALSE(wr->time_to_due());
}

TEST_CASE("rotation: the schedule closes objects at aligned wall-clock boundaries", "[pipeline][delivery][rotation]") {
    world w;
    w.clock.set_system(iss::clock::system_time{std::chrono::seconds{1'700'000'000}});  // 22:13:20 UTC
    w.rotation.schedule = 1h;
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 0);
    run(wr->feed(b.span()));
    w.clock.advance(46min);  // 22:59:20
    run(wr->tick());
    CHECK(w.store.objects.empty());
    w.clock.advance(40s);  // 23:00:00
    run(wr->tick());
    CHECK(w.store.objects.size() == 1);
}

// ---------------------------------------------------------------------------------------
// on_bad_message

TEST_CASE("bad message, fail: what precedes it is delivered and the partition stops at it",
          "[pipeline][delivery][bad]") {
    world w;
    w.options.on_bad_message = pl::bad_message_policy::fail;
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 2);
    b.add(3, 0, "BAD");
    b.add(4, 0, "m4");
    CHECK(run(wr->feed(b.span())) == pl::feed_status::stopped);
    CHECK(wr->state() == pl::writer_state::failed);
    CHECK(w.store.objects.at(key_of(w, 0)).range == pl::object_range{0, 2, 3});
    CHECK(w.offsets.stored.at(w.p) == 2);
    CHECK(wr->next_offset() == 3u);
}

TEST_CASE("bad message, skip: counted, covered by the object, committed with it", "[pipeline][delivery][bad]") {
    world w;
    w.options.on_bad_message = pl::bad_message_policy::skip;
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    batch b;
    b.add(0, 0, "BAD");  // no object open: committed at once
    b.add(1, 0, "m1");
    b.add(2, 0, "BAD");
    CHECK(run(wr->feed(b.span())) == pl::feed_status::ok);
    CHECK(w.offsets.stored.at(w.p) == 0);
    CHECK(wr->counters().bad_skipped == 2);
    run(wr->flush(pl::rotate_reason::stop));
    CHECK(w.store.objects.at(key_of(w, 1)).range == pl::object_range{1, 2, 1});
    CHECK(w.offsets.stored.at(w.p) == 2);
}

TEST_CASE("bad message, dead_letter: sent (acked) before its offset is committed", "[pipeline][delivery][bad]") {
    world w;
    w.options.on_bad_message = pl::bad_message_policy::dead_letter;
    w.dead_letters.fail_next = 2;
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    batch b;
    b.add(0, 0, "BAD");
    CHECK(run(wr->feed(b.span())) == pl::feed_status::ok);
    REQUIRE(w.dead_letters.sent.size() == 1);
    CHECK(w.dead_letters.sent[0].second.find("not JSON") != std::string::npos);
    CHECK(w.index_of("dead-letter 1 0") < w.index_of("commit 1 0"));
    CHECK(w.offsets.stored.at(w.p) == 0);
    CHECK(wr->counters().bad_dead_lettered == 1);
}

TEST_CASE("messages below the next offset are ignored (a re-polled batch adds nothing)", "[pipeline][delivery]") {
    world w;
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 4);
    run(wr->feed(b.span()));
    run(wr->feed(b.span()));
    run(wr->flush(pl::rotate_reason::stop));
    CHECK(w.store.objects.at(key_of(w, 0)).range == pl::object_range{0, 4, 5});
}
