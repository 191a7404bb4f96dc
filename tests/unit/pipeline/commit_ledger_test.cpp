// SPDX-License-Identifier: Apache-2.0
// The commit ledger (lib/pipeline/commit_ledger.hpp) without coroutines: feed it the events a
// partition writer sees, check its answers (where to poll, what a message is, the commit
// point, the table step's batches).
#include "pipeline/commit_ledger.hpp"

#include "catch2_compat.hpp"

namespace pl = iss::pipeline;
using opt = std::optional<std::uint64_t>;

namespace {
pl::durable_object object(std::string key, std::uint64_t first, std::uint64_t last) {
    return pl::durable_object{
        iss::object_key{std::move(key)}, {"s", "t", 1}, {first, last, last - first + 1}, 1, false};
}
}  // namespace

TEST_CASE("ledger: starts after the committed offset, or at the first retained one", "[pipeline][ledger]") {
    const pl::commit_ledger fresh{std::nullopt};
    CHECK_FALSE(fresh.next());
    CHECK_FALSE(fresh.commit_point(std::nullopt));
    CHECK(fresh.classify("", 0) == pl::intake::take);
    const pl::commit_ledger resumed{41};
    CHECK(resumed.next() == opt{42});
    CHECK(resumed.committed() == opt{41});
    CHECK(resumed.commit_point(std::nullopt) == opt{41});
    CHECK(resumed.stored_through(41));
    CHECK_FALSE(resumed.stored_through(42));
}

TEST_CASE("ledger: appended messages move the next offset; the commit point stays below the held objects (G3)",
          "[pipeline][ledger][g3]") {
    pl::commit_ledger l{std::nullopt};
    for (std::uint64_t o = 0; o < 5; ++o) l.appended("A", o);
    CHECK(l.next() == opt{5});
    CHECK(l.handled() == opt{4});
    CHECK(l.commit_point(std::nullopt) == opt{4});  // nothing held: the last handled
    CHECK(l.commit_point(3) == opt{2});             // an object opened at 3 is held
    CHECK_FALSE(l.commit_point(0));                 // held from the first offset: nothing to store
}

TEST_CASE("ledger: the commit point never falls inside a delivered object, chained (G3)", "[pipeline][ledger][g3]") {
    pl::commit_ledger l{std::nullopt};
    for (std::uint64_t o = 0; o <= 12; ++o) l.appended(o % 2 ? "B" : "A", o);
    // A's [3..10] and [1..4] delivered; B's object opened at 5 still open.
    l.written(3, 10);
    l.written(1, 4);
    // 5 falls inside [3..10] -> 3, which falls inside [1..4] -> 1: stores 0.
    CHECK(l.commit_point(5) == opt{0});
    CHECK(l.commit_point(11) == opt{10});  // above both
    CHECK(l.delivered() == 2);
    l.forget_through(4);
    CHECK(l.delivered() == 1);
    l.forget_through(10);
    CHECK(l.delivered() == 0);
}

TEST_CASE("ledger: adoption of an object that holds more marks only its encoded partition done (G2)",
          "[pipeline][ledger][g2]") {
    pl::commit_ledger l{std::nullopt};
    l.appended("A", 0);
    l.appended("B", 1);
    l.appended("A", 2);
    // A's object [0..2] meets an existing one ending at 6; B's object is open.
    CHECK_FALSE(l.adopted("A", 0, 2, 6, false));
    CHECK(l.covered("A", 4));
    CHECK(l.covered("A", 6));
    CHECK_FALSE(l.covered("A", 7));
    CHECK_FALSE(l.covered("B", 4));
    CHECK(l.classify("A", 4) == pl::intake::covered);
    CHECK(l.classify("B", 3) == pl::intake::take);
    CHECK(l.next() == opt{3});  // not alone: reading goes on with B's messages
    l.handled_through(4);       // A's 4, covered
    CHECK(l.next() == opt{5});
    // Past A's existing last offset its messages are wanted again.
    l.handled_through(6);
    CHECK_FALSE(l.covered("A", 6));
}

TEST_CASE("ledger: adoption with one encoded partition and nothing held reads on after the existing object",
          "[pipeline][ledger][inv3]") {
    pl::commit_ledger l{std::nullopt};
    for (std::uint64_t o = 0; o < 4; ++o) l.appended("", o);
    CHECK_FALSE(l.adopted("", 0, 3, 7, true));
    CHECK(l.next() == opt{8});
    CHECK(l.handled() == opt{7});
    CHECK(l.commit_point(std::nullopt) == opt{7});
}

TEST_CASE("ledger: adoption of an object that holds less re-reads only its encoded partition (G2)",
          "[pipeline][ledger][g2]") {
    pl::commit_ledger l{std::nullopt};
    for (std::uint64_t o = 0; o < 6; ++o) l.appended(o % 2 ? "B" : "A", o);
    // A's object [0..4] meets an existing one ending at 2: A is re-read from 3.
    CHECK(l.adopted("A", 0, 4, 2, false));
    CHECK(l.next() == opt{3});
    CHECK_FALSE(l.commit_point(1));                      // B's object at 1, inside A's delivered [0..2]
    CHECK(l.commit_point(std::nullopt) == opt{2});       // the re-read point 3 holds it back
    CHECK(l.classify("B", 3) == pl::intake::pass_over);  // B's 3 is held already
    CHECK(l.classify("A", 4) == pl::intake::take);
    l.passed_over(3);
    CHECK(l.next() == opt{4});
    l.appended("A", 4);
    CHECK(l.classify("A", 4) == pl::intake::pass_over);  // moved on with it
    CHECK(l.classify_unreadable(5) == pl::intake::pass_over);
    CHECK(l.classify_unreadable(6) == pl::intake::take);
    l.appended("A", 6);  // past the handled range: the re-read ends
    CHECK(l.commit_point(std::nullopt) == opt{6});
}

TEST_CASE("ledger: a re-read that reaches the last handled message ends there, with no message after it (G2)",
          "[pipeline][ledger][g2]") {
    // The end of a stream: A's re-read and B's held messages reach the head, nothing follows.
    pl::commit_ledger l{std::nullopt};
    for (std::uint64_t o = 0; o < 6; ++o) l.appended(o % 2 ? "B" : "A", o);
    CHECK(l.adopted("A", 0, 4, 2, false));  // A re-read from 3
    l.passed_over(3);                       // B's
    l.appended("A", 4);                     // A's next object opens at 4
    l.passed_over(5);                       // B's, the last handled message: the re-read is over
    CHECK(l.next() == opt{6});
    CHECK(l.classify("B", 6) == pl::intake::take);
    l.written(1, 5);  // B's object delivered
    l.written(4, 4);  // A's new object delivered
    // Everything up to 5 is durable: 5 may be stored (a re-read point left at 5 would pull it
    // into B's [1..5] and A's adopted [0..2]: nothing stored, lag forever at the end of a stream).
    CHECK(l.commit_point(std::nullopt) == opt{5});
    // The same when the last handled message is the re-read partition's own.
    pl::commit_ledger m{std::nullopt};
    for (std::uint64_t o = 0; o < 6; ++o) m.appended(o % 2 ? "A" : "B", o);
    CHECK(m.adopted("A", 1, 5, 3, false));  // A re-read from 4
    m.passed_over(4);                       // B's
    m.appended("A", 5);                     // A's, the last handled
    m.written(0, 4);
    m.written(5, 5);
    CHECK(m.commit_point(std::nullopt) == opt{5});
}

TEST_CASE("ledger: stored and pending offsets; a drop goes back to what is durable", "[pipeline][ledger][inv5]") {
    pl::commit_ledger l{9};
    for (std::uint64_t o = 10; o < 20; ++o) l.appended("", o);
    l.written(10, 14);
    l.stored(14);
    CHECK(l.committed() == opt{14});
    l.store_pending(17);
    CHECK(l.pending() == opt{17});
    l.dropped();
    CHECK(l.next() == opt{18});  // the pending offset is durable
    CHECK(l.delivered() == 0);
    l.clear_pending();
    l.dropped();
    CHECK(l.next() == opt{15});
    CHECK(l.handled() == opt{14});
    l.stopped_at(15);
    CHECK(l.next() == opt{15});
}

TEST_CASE("ledger: the table step's batches: whole objects at or below the offset, in order, until taken (inv7)",
          "[pipeline][ledger][inv7]") {
    pl::commit_ledger l{std::nullopt};
    l.for_table(object("b", 5, 8));
    l.for_table(object("a", 0, 4));
    l.for_table(object("c", 9, 12));
    auto batch = l.table_batch(8);
    REQUIRE(batch.size() == 2);
    CHECK(batch[0].key.get() == "a");
    CHECK(batch[1].key.get() == "b");
    CHECK(l.table_batch(8).size() == 2);  // a failed step: the same objects again
    l.tabled(8);
    CHECK(l.untabled() == 1);
    CHECK(l.table_batch(11).empty());  // c ends at 12
    // A drop keeps what is durable at or below the re-read point.
    l.store_pending(12);
    l.dropped();
    CHECK(l.untabled() == 1);
    pl::commit_ledger m{3};
    m.for_table(object("d", 4, 6));
    m.dropped();  // back to 3: d comes again as adopted
    CHECK(m.untabled() == 0);
}
