// SPDX-License-Identifier: Apache-2.0
// The open-object set (lib/pipeline/open_object_set.hpp) without coroutines: open, close and
// deliver plain entries, check its decisions (G3's lowest first offset, G4, G5, the closing
// order, the largest object).
#include "pipeline/open_object_set.hpp"

#include "catch2_compat.hpp"

namespace pl = iss::pipeline;
using ids = std::vector<std::string>;

namespace {
struct obj : pl::open_object_entry {
    std::uint64_t memory = 0;
};
using set = pl::open_object_set;
obj& open(set& s, std::string id, std::uint64_t first, std::optional<std::int64_t> bucket = {},
          std::uint64_t memory = 0) {
    auto o = std::make_unique<obj>();
    o->encoded = std::move(id);
    o->first_offset = first;
    o->bucket = bucket;
    o->memory = memory;
    return static_cast<obj&>(s.open(std::move(o)));
}
}  // namespace

TEST_CASE("open object set: one per encoded partition; found by id, discarded when empty",
          "[pipeline][open_object_set]") {
    set s;
    CHECK_FALSE(s.holds());
    CHECK(s.find("A") == nullptr);
    open(s, "A", 3);
    open(s, "B", 5);
    REQUIRE(s.find("A") != nullptr);
    CHECK(s.find("A")->first_offset == 3);
    CHECK(s.open_count() == 2);
    CHECK(s.ids() == ids{"A", "B"});
    s.discard("B");
    CHECK(s.open_count() == 1);
    CHECK(s.find("B") == nullptr);
}

TEST_CASE("open object set: the lowest first offset counts open and in-flight objects (G3)",
          "[pipeline][open_object_set][g3]") {
    set s;
    CHECK_FALSE(s.lowest_first());
    open(s, "A", 7);
    open(s, "B", 4);
    CHECK(s.lowest_first() == std::optional<std::uint64_t>{4});
    s.close({"B"});
    CHECK(s.lowest_first() == std::optional<std::uint64_t>{4});  // in flight: still held
    s.pop_front();
    CHECK(s.lowest_first() == std::optional<std::uint64_t>{7});
}

TEST_CASE("open object set: closed objects are delivered in first-offset order, whatever the closing order",
          "[pipeline][open_object_set][g3]") {
    set s;
    open(s, "C", 9);
    open(s, "A", 2);
    open(s, "B", 5);
    s.close({"C"});
    s.close({"B", "A", "missing"});
    CHECK(s.empty());
    CHECK(s.count() == 3);
    std::vector<std::uint64_t> order;
    while (s.in_flight()) {
        order.push_back(s.front().first_offset);
        s.pop_front();
    }
    CHECK(order == std::vector<std::uint64_t>{2, 5, 9});
    CHECK_FALSE(s.holds());
}

TEST_CASE("open object set: above max_open_objects the oldest first message makes room (G4)",
          "[pipeline][open_object_set][g4]") {
    set s;
    CHECK_FALSE(s.make_room(2));
    open(s, "B", 0);
    CHECK_FALSE(s.make_room(2));
    open(s, "A", 1);
    CHECK(s.make_room(2) == std::optional<std::string>{"B"});
    CHECK(s.make_room(3) == std::nullopt);
    CHECK(s.make_room(0) == std::optional<std::string>{"B"});  // (0 counts as 1)
    s.close({"B"});
    open(s, "C", 2);
    CHECK(s.make_room(2) == std::optional<std::string>{"A"});
}

TEST_CASE("open object set: a later time bucket closes the objects of every earlier bucket (G5)",
          "[pipeline][open_object_set][g5]") {
    set s;
    open(s, "x@1", 0, 1);
    open(s, "y@2", 1, 2);
    open(s, "z", 2);  // no time field in the key: never closed by a bucket
    CHECK(s.earlier_buckets(1).empty());
    CHECK(s.earlier_buckets(2) == ids{"x@1"});
    CHECK(s.earlier_buckets(3) == ids{"x@1", "y@2"});
}

TEST_CASE("open object set: the largest by memory is the one shed first", "[pipeline][open_object_set][memory]") {
    set s;
    const auto memory = [](const pl::open_object_entry& o) { return static_cast<const obj&>(o).memory; };
    CHECK_FALSE(s.largest(memory));
    open(s, "A", 0, {}, 10);
    open(s, "B", 1, {}, 30);
    open(s, "C", 2, {}, 20);
    CHECK(s.largest(memory) == std::optional<std::string>{"B"});
    std::uint64_t total = 0;
    s.close({"B"});
    s.for_each([&](pl::open_object_entry& o) { total += static_cast<obj&>(o).memory; });
    CHECK(total == 60);
    CHECK(s.largest(memory) == std::optional<std::string>{"C"});
    s.clear();
    CHECK_FALSE(s.holds());
}
