// SPDX-License-Identifier: Apache-2.0
#include "fakes.hpp"

#include "catch2_compat.hpp"

namespace pl = iss::pipeline;
using namespace std::chrono_literals;
using fakes::batch;
using fakes::run;
using fakes::world;

namespace {
pl::partition_ref part(std::uint32_t n) { return {"app", "requests", n}; }
}  // namespace

TEST_CASE("router: one writer per partition, started at the committed offset", "[pipeline][router]") {
    world w;
    w.offsets.stored[part(2)] = 41;
    auto r = w.make_router();
    auto b0 = batch::range(0, 2);
    auto b2 = batch::range(40, 44);  // 40, 41 are committed already
    CHECK(run(r->feed(part(0), b0.span())) == pl::feed_status::ok);
    CHECK(run(r->feed(part(2), b2.span())) == pl::feed_status::ok);
    CHECK(r->partitions().size() == 2);
    CHECK(r->find(part(0))->next_offset() == 3u);
    CHECK(run(r->stop()));
    CHECK(w.store.objects.at(w.namer.key(part(2), 42).get()).range == pl::object_range{42, 44, 3});
    CHECK(w.store.objects.at(w.namer.key(part(0), 0).get()).range == pl::object_range{0, 2, 3});
    CHECK(w.offsets.stored.at(part(0)) == 2);
    CHECK(w.offsets.stored.at(part(2)) == 44);
}

TEST_CASE("router: inv6 stop loses nothing buffered on any partition", "[pipeline][router][inv6]") {
    world w;
    w.rotation.max_records = 1000;
    auto r = w.make_router();
    std::uint64_t total = 0;
    for (std::uint32_t p = 0; p < 4; ++p) {
        auto b = batch::range(0, p * 3 + 1);
        total += b.messages.size();
        run(r->feed(part(p), b.span()));
    }
    CHECK(w.store.objects.empty());
    CHECK(run(r->stop()));
    std::uint64_t records = 0;
    for (const auto& [k, o] : w.store.objects) records += o.range.count;
    CHECK(records == total);
    CHECK(r->totals().records_written == total);
}

TEST_CASE("router: holds_data while any writer has records; not after stop or with only empty writers",
          "[pipeline][router]") {
    world w;
    w.rotation.max_records = 1000;
    auto r = w.make_router();
    CHECK_FALSE(r->holds_data());
    run(r->writer_for(part(3)));  // a writer that holds nothing
    CHECK_FALSE(r->holds_data());
    auto b = batch::range(0, 2);
    run(r->feed(part(1), b.span()));
    CHECK(r->holds_data());
    CHECK(run(r->stop()));
    CHECK_FALSE(r->holds_data());
}

TEST_CASE("router: inv5 release hands a partition over: flushed, committed, forgotten", "[pipeline][router][inv5]") {
    world w;
    w.options.mode = pl::consumer_mode::group;
    auto r = w.make_router();
    auto b = batch::range(0, 4);
    run(r->feed(part(1), b.span()));
    run(r->release(part(1)));
    CHECK(r->find(part(1)) == nullptr);
    CHECK(w.offsets.stored.at(part(1)) == 4);
    CHECK(w.store.objects.size() == 1);
}

TEST_CASE("router: drop_all (reconnect) uploads nothing and forgets every writer", "[pipeline][router][inv5]") {
    world w;
    auto r = w.make_router();
    auto b = batch::range(0, 4);
    run(r->feed(part(1), b.span()));
    r->drop_all("reconnected: a new group member");
    CHECK(r->partitions().empty());
    CHECK(w.store.puts == 0);
    CHECK(r->totals().records_dropped == 5);
}

TEST_CASE("router: a failed partition stops alone; the others keep running", "[pipeline][router][bad]") {
    world w;
    w.options.on_bad_message = pl::bad_message_policy::fail;
    auto r = w.make_router();
    batch bad;
    bad.add(0, 0, "BAD");
    CHECK(run(r->feed(part(0), bad.span())) == pl::feed_status::stopped);
    auto good = batch::range(0, 3);
    CHECK(run(r->feed(part(1), good.span())) == pl::feed_status::ok);
    CHECK(run(r->stop()));
    CHECK(w.store.objects.size() == 1);
    CHECK(r->find(part(0))->state() == pl::writer_state::failed);
}

TEST_CASE("router: time_to_due is the earliest of its writers; tick flushes the due ones", "[pipeline][router]") {
    world w;
    w.rotation.idle = 10s;
    auto r = w.make_router();
    auto b = batch::range(0, 1);
    run(r->feed(part(0), b.span()));
    w.clock.advance(4s);
    run(r->feed(part(1), b.span()));
    CHECK(r->time_to_due() == std::chrono::nanoseconds{6s});
    w.clock.advance(6s);
    run(r->tick());
    CHECK(w.store.objects.size() == 1);
    CHECK(r->time_to_due() == std::chrono::nanoseconds{4s});
}

TEST_CASE("router: relieve leaves a writer held for a step alone (holds nest)", "[pipeline][router][memory]") {
    world w;
    w.options.part_size = 1 << 20;
    pl::memory_budget budget{{2400, 1 << 20}};
    auto ports = w.ports();
    ports.memory = &budget;
    pl::router r{w.options, w.policy(), ports};
    auto big = batch::range(0, 40);    // partition 0: the larger open object
    auto small = batch::range(0, 10);  // partition 1
    REQUIRE(run(r.feed(part(0), big.span())) == pl::feed_status::ok);
    REQUIRE(run(r.feed(part(1), small.span())) == pl::feed_status::ok);
    REQUIRE(budget.buffered() > budget.relief_target());
    {
        // The consumer holds partition 0 for its step (its poll in flight); router::feed's
        // own hold nests inside and must not end the step's.
        const auto step = r.hold(*r.find(part(0)));
        { const auto inner = r.hold(*r.find(part(0))); }
        CHECK(r.busy(part(0)));
        run(r.relieve());
        CHECK(r.find(part(0))->holds_data());        // untouched
        CHECK_FALSE(r.find(part(1))->holds_data());  // the other one was closed instead
        CHECK(w.store.objects.count(w.namer.key(part(1), 0).get()) == 1);
    }
    CHECK_FALSE(r.busy(part(0)));
}
