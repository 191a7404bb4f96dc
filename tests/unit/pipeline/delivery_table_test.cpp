// SPDX-License-Identifier: Apache-2.0
// Invariant 7 (lib/pipeline/delivery.hpp): the table step takes every durable object before
// the offset that covers it is stored; a failing step stores nothing and uploads nothing again.
#include "fakes.hpp"

#include "catch2_compat.hpp"

namespace pl = iss::pipeline;
using fakes::batch;
using fakes::make_writer;
using fakes::run;
using fakes::world;

namespace {
std::string key_of(world& w, std::uint64_t first) { return w.namer.key(w.p, first).get(); }
/// The keys of one table call.
std::vector<std::string> keys(const std::vector<pl::durable_object>& call) {
    std::vector<std::string> out;
    for (const auto& o : call) out.push_back(o.key.get());
    return out;
}
}  // namespace

TEST_CASE("inv7: the table step takes each durable object, in order, before the offset that covers it is stored",
          "[pipeline][delivery][inv7]") {
    world w;
    w.with_table = true;
    w.rotation.max_records = 3;
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 7);
    CHECK(run(wr->feed(b.span())) == pl::feed_status::ok);
    const auto put1 = w.index_of("put " + key_of(w, 0));
    const auto table1 = w.index_of("table 1 2 " + key_of(w, 0));
    const auto commit1 = w.index_of("commit 1 2");
    const auto put2 = w.index_of("put " + key_of(w, 3));
    const auto table2 = w.index_of("table 1 5 " + key_of(w, 3));
    const auto commit2 = w.index_of("commit 1 5");
    REQUIRE(commit2 < w.events.size());
    CHECK(put1 < table1);
    CHECK(table1 < commit1);
    CHECK(commit1 < put2);
    CHECK(put2 < table2);
    CHECK(table2 < commit2);
    REQUIRE(w.table.taken.size() == 2);
    const auto& first = w.table.taken[0];
    CHECK(first.partition == w.p);
    CHECK(first.range == pl::object_range{0, 2, 3});
    CHECK(first.size == w.store.objects.at(key_of(w, 0)).body.size());
    CHECK_FALSE(first.adopted);
    CHECK(w.table.taken[1].range == pl::object_range{3, 5, 3});
    CHECK(run(wr->flush(pl::rotate_reason::stop)));
    CHECK(w.index_of("table 1 7 " + key_of(w, 6)) < w.index_of("commit 1 7"));
    CHECK(w.table.calls.size() == 3);  // one call per stored offset, each object once
}

TEST_CASE("inv7: a failing table step stores no offset and uploads nothing again; single mode retries it after waits",
          "[pipeline][delivery][inv7]") {
    world w;
    w.with_table = true;
    w.rotation.max_records = 3;
    w.table.fail_next = 2;
    w.table.failure = GENERATE(pl::table_status::retryable, pl::table_status::fatal);
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 2);
    CHECK(run(wr->feed(b.span())) == pl::feed_status::ok);
    REQUIRE(w.table.calls.size() == 3);
    for (const auto& call : w.table.calls) CHECK(keys(call) == std::vector<std::string>{key_of(w, 0)});
    CHECK(w.store.puts == 1);
    CHECK(w.sleeper.sleeps == 2);
    CHECK(w.offsets.stores == 1);
    CHECK(w.index_of("table 1 2") < w.index_of("commit 1 2"));
    CHECK(w.offsets.stored.at(w.p) == 2);
}

TEST_CASE("inv7: group mode keeps the offset pending while the table step fails; retried with the same objects",
          "[pipeline][delivery][inv7]") {
    world w;
    w.with_table = true;
    w.options.mode = pl::consumer_mode::group;
    w.rotation.max_records = 3;
    w.table.fail_next = 2;
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 2);
    CHECK(run(wr->feed(b.span())) == pl::feed_status::ok);
    CHECK(wr->pending_commit() == 2u);
    CHECK(w.offsets.stores == 0);
    // The next object: the step gets the failed call's object again, with the new one.
    auto b2 = batch::range(3, 5);
    CHECK(run(wr->feed(b2.span())) == pl::feed_status::ok);
    CHECK(w.offsets.stores == 0);
    REQUIRE(w.table.calls.size() == 2);
    CHECK(keys(w.table.calls[1]) == std::vector<std::string>{key_of(w, 0), key_of(w, 3)});
    run(wr->tick());
    CHECK(w.table.calls.size() == 3);
    CHECK(keys(w.table.taken) == std::vector<std::string>{key_of(w, 0), key_of(w, 3)});
    CHECK(w.offsets.stored.at(w.p) == 5);
    CHECK_FALSE(wr->pending_commit());
    CHECK(w.store.puts == 2);
}

TEST_CASE("inv7: a deferring table step (a batch) keeps the offset pending without waits; stored once the step is ok",
          "[pipeline][delivery][inv7]") {
    world w;
    w.with_table = true;
    w.options.mode = GENERATE(pl::consumer_mode::single, pl::consumer_mode::group);
    w.rotation.max_records = 3;
    w.table.fail_next = 2;
    w.table.failure = pl::table_status::deferred;
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 2);
    CHECK(run(wr->feed(b.span())) == pl::feed_status::ok);
    CHECK(wr->pending_commit() == 2u);
    CHECK(w.offsets.stores == 0);
    CHECK(w.sleeper.sleeps == 0);
    for (int i = 0; i < 5 && w.offsets.stores == 0; ++i) run(wr->tick());
    REQUIRE(w.table.calls.size() == 3);  // deferred, deferred, ok
    for (const auto& call : w.table.calls) CHECK(keys(call) == std::vector<std::string>{key_of(w, 0)});
    CHECK(w.index_of("table 1 2") < w.index_of("commit 1 2"));
    CHECK(w.offsets.stores == 1);
    CHECK(w.offsets.stored.at(w.p) == 2);
    CHECK_FALSE(wr->pending_commit());
    CHECK(w.sleeper.sleeps == 0);
    CHECK(w.store.puts == 1);
}

TEST_CASE("inv7: a reconnect after a failed table step re-reads after the durable objects, which the step takes later",
          "[pipeline][delivery][inv7]") {
    world w;
    w.with_table = true;
    w.options.mode = pl::consumer_mode::group;
    w.rotation.max_records = 3;
    w.table.fail_next = 1;
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 4);
    CHECK(run(wr->feed(b.span())) == pl::feed_status::ok);
    CHECK(wr->pending_commit() == 2u);
    wr->drop("reconnected");
    CHECK(wr->next_offset() == 3u);  // not 0: the object 0..2 is durable, never uploaded again
    run(wr->tick());
    CHECK(keys(w.table.taken) == std::vector<std::string>{key_of(w, 0)});
    CHECK(w.offsets.stored.at(w.p) == 2);
    CHECK(w.store.puts == 1);
}

TEST_CASE("inv7: an adopted object goes to the table step marked adopted, with the existing object's range",
          "[pipeline][delivery][inv7]") {
    world w;
    w.with_table = true;
    w.rotation.max_records = 4;
    w.store.objects[key_of(w, 0)] = fakes::stored_object{"theirs", {0, 7, 8}, "x", false};
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 9);
    CHECK(run(wr->feed(b.span())) == pl::feed_status::ok);
    REQUIRE(w.table.taken.size() == 1);
    const auto& o = w.table.taken[0];
    CHECK(o.key.get() == key_of(w, 0));
    CHECK(o.adopted);
    CHECK(o.range == pl::object_range{0, 7, 8});
    CHECK_FALSE(o.size.has_value());
    CHECK(w.index_of("table 1 7 " + key_of(w, 0)) < w.index_of("commit 1 7"));
}

TEST_CASE("inv5+inv7: a hand-over has a batching table step commit at once, before the offset is given up",
          "[pipeline][delivery][inv5][inv7]") {
    // Issue 36: a revoked partition's durable objects are committed and its offset stored as
    // part of the revocation; a step that kept batching left the new owner waiting for the
    // server's rebalance timeout.
    world w;
    w.with_table = true;
    w.options.mode = pl::consumer_mode::group;
    w.rotation.max_records = 3;
    w.rotation.idle = std::chrono::minutes{10};
    w.table.batching = true;
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 4);  // 0..2 durable (deferred by the step), 3..4 open
    CHECK(run(wr->feed(b.span())) == pl::feed_status::ok);
    CHECK(wr->pending_commit() == 2u);
    CHECK(w.offsets.stores == 0);
    CHECK(run(wr->flush(pl::rotate_reason::hand_over)));
    CHECK(w.offsets.stored.at(w.p) == 4);
    const auto on = w.index_of("handing-over 1 on");
    const auto table = w.index_of("table 1 4 " + key_of(w, 3));
    const auto commit = w.index_of("commit 1 4");
    const auto off = w.index_of("handing-over 1 off");
    REQUIRE(off < w.events.size());
    CHECK(on < w.index_of("table 1 2 " + key_of(w, 0)));
    CHECK(on < table);
    CHECK(table < commit);
    CHECK(commit < off);
    CHECK(keys(w.table.taken) == std::vector<std::string>{key_of(w, 0), key_of(w, 3)});
    // A clean stop is no hand-over: the step keeps batching then (the daemon flushes it).
    auto more = batch::range(5, 6);
    CHECK(run(wr->feed(more.span())) == pl::feed_status::ok);
    CHECK_FALSE(run(wr->flush(pl::rotate_reason::stop)));
    CHECK(w.offsets.stored.at(w.p) == 4);
}

TEST_CASE("without a table step offsets are stored as soon as they are durable", "[pipeline][delivery][inv7]") {
    world w;
    w.rotation.max_records = 3;
    auto rp = w.policy();
    auto wr = make_writer(w, rp);
    auto b = batch::range(0, 2);
    CHECK(run(wr->feed(b.span())) == pl::feed_status::ok);
    CHECK(w.table.calls.empty());
    CHECK(w.offsets.stored.at(w.p) == 2);
}
