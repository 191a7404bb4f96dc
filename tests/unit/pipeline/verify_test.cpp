// SPDX-License-Identifier: Apache-2.0
#include "pipeline/verify.hpp"

#include "catch2_compat.hpp"

namespace pl = iss::pipeline;
using Catch::Matchers::ContainsSubstring;

namespace {
pl::verified_object obj(std::string key, std::uint64_t first, std::uint64_t last) {
    return {std::move(key), {first, last, last - first + 1}};
}
const pl::partition_ref p0{"app", "events", 0};
}  // namespace

TEST_CASE("verify: contiguous objects up to the committed offset are fine, in any order", "[pipeline][verify]") {
    auto r = pl::verify_partition(p0, {obj("b", 10, 19), obj("a", 0, 9), obj("c", 20, 29)}, 29);
    CHECK(r.ok());
    CHECK(r.objects == 3);
    CHECK(r.lowest == 0u);
    CHECK(r.highest == 29u);
    CHECK(pl::describe_problems(r).empty());
    // Durable above the committed offset (commit pending): fine.
    CHECK(pl::verify_partition(p0, {obj("a", 0, 9), obj("b", 10, 19)}, 9).ok());
    // Nothing committed yet: the objects alone must touch.
    CHECK(pl::verify_partition(p0, {obj("a", 5, 9), obj("b", 10, 19)}, std::nullopt).ok());
}

TEST_CASE("verify: a deleted object is a gap named by its neighbours", "[pipeline][verify]") {
    auto r = pl::verify_partition(p0, {obj("a", 0, 9), obj("c", 20, 29)}, 29);
    REQUIRE_FALSE(r.ok());
    REQUIRE(r.gaps.size() == 1);
    CHECK(r.gaps[0].first == 10);
    CHECK(r.gaps[0].last == 19);
    const auto d = pl::describe_problems(r);
    REQUIRE(d.size() == 1);
    CHECK(d[0] == "app/events/0: gap: offsets 10..19 are in no object (after a, before c)");
}

TEST_CASE("verify: an overlapping object names the duplicate offsets and both keys", "[pipeline][verify]") {
    auto r = pl::verify_partition(p0, {obj("a", 0, 9), obj("b", 10, 19), obj("x", 5, 14)}, 19);
    REQUIRE_FALSE(r.ok());
    REQUIRE(r.overlaps.size() == 2);  // x overlaps both of its neighbours
    CHECK(r.overlaps[0].first == 5);
    CHECK(r.overlaps[0].last == 9);
    CHECK(r.overlaps[1].first == 10);
    CHECK(r.overlaps[1].last == 14);
    CHECK(r.gaps.empty());
    const auto d = pl::describe_problems(r);
    CHECK_THAT(d.at(0), ContainsSubstring("duplicate offsets 5..9 are in two objects: a and x"));
    CHECK_THAT(d.at(1), ContainsSubstring("duplicate offsets 10..14 are in two objects: x and b"));
}

TEST_CASE("verify: a committed offset beyond the bucket is a loss; a gap above it is not yet", "[pipeline][verify]") {
    auto r = pl::verify_partition(p0, {obj("a", 0, 9)}, 15);
    REQUIRE(r.committed_missing);
    CHECK(r.committed_missing->first == 10);
    CHECK(r.committed_missing->last == 15);
    CHECK_THAT(pl::describe_problems(r).at(0),
               ContainsSubstring("committed offset 15 is beyond the highest durable offset 9"));
    CHECK_FALSE(pl::verify_partition(p0, {}, 3).ok());
    // Gap above the committed offset: in flight, not a problem.
    CHECK(pl::verify_partition(p0, {obj("a", 0, 9), obj("c", 20, 29)}, 9).ok());
    // Unreadable metadata is a problem.
    CHECK_FALSE(pl::verify_partition(p0, {obj("a", 0, 9)}, 9, {"junk"}).ok());
}

TEST_CASE("verify: table and JSON", "[pipeline][verify]") {
    std::vector<pl::partition_report> rs{pl::verify_partition(p0, {obj("a", 0, 9), obj("c", 20, 29)}, 29)};
    CHECK_THAT(pl::render_verify_table(rs), ContainsSubstring("PROBLEM"));
    CHECK(pl::render_verify_json(rs, 20) ==
          "{\"partitions\":[{\"stream\":\"app\",\"topic\":\"events\",\"partition\":0,\"objects\":2,\"lowest\":0,"
          "\"highest\":29,\"committed\":29,\"gaps\":[[10,19]],\"overlaps\":[],\"refused\":0,\"ok\":false}],"
          "\"problems\":[\"app/"
          "events/0: "
          "gap: offsets 10..19 are in no object (after a, before c)\"],\"problem_count\":1,\"notes\":[],"
          "\"note_count\":0,\"ok\":false}\n");
    // Notes (another writer's data files) are listed and counted, and are no problem.
    std::vector<pl::partition_report> fine{pl::verify_partition(p0, {obj("a", 0, 9)}, 9)};
    const auto json = pl::render_verify_json(fine, 1, {"s3://b/t/data/x.parquet", "s3://b/t/data/y.parquet"});
    CHECK_THAT(json, ContainsSubstring("\"notes\":[\"s3://b/t/data/x.parquet\"],\"note_count\":2,\"ok\":true}"));
}

TEST_CASE("verify: offsets the format refused (skipped, dead-lettered) are accounted for; the rest stays a gap",
          "[pipeline][verify]") {
    // A stopped partition restarted with on_bad_message: skip: 0..9 in one object, 10 refused
    // and skipped, 11..19 in the next.
    auto r = pl::verify_partition(p0, {obj("a", 0, 9), obj("b", 11, 19)}, 19);
    REQUIRE(pl::unaccounted_spans(r).size() == 1);
    pl::account_refused(r, {10});
    CHECK(r.ok());
    CHECK(r.refused == 1);
    CHECK(pl::describe_problems(r).empty());
    CHECK_THAT(pl::render_verify_json({r}, 20), ContainsSubstring(R"("refused":1,"ok":true)"));

    // A real gap around a refused offset: 20..29 missing, 25 refused: 20..24 and 26..29 stay.
    r = pl::verify_partition(p0, {obj("a", 0, 19), obj("c", 30, 39)}, 39);
    pl::account_refused(r, {25});
    REQUIRE(r.gaps.size() == 2);
    CHECK((r.gaps[0].first == 20 && r.gaps[0].last == 24));
    CHECK((r.gaps[1].first == 26 && r.gaps[1].last == 29));
    CHECK(r.refused == 1);
    CHECK_FALSE(r.ok());

    // The last messages refused (nothing after them): the committed offset is covered by them.
    r = pl::verify_partition(p0, {obj("a", 0, 9)}, 11);
    REQUIRE(r.committed_missing);
    pl::account_refused(r, {10, 11});
    CHECK(r.ok());
    CHECK(r.refused == 2);
    // Only one of them refused: the other is still committed but in no object.
    r = pl::verify_partition(p0, {obj("a", 0, 9)}, 11);
    pl::account_refused(r, {10});
    REQUIRE(r.committed_missing);
    CHECK(r.committed_missing->first == 11);
    CHECK_FALSE(r.ok());
    // Refused offsets outside every problem change nothing.
    r = pl::verify_partition(p0, {obj("a", 0, 9)}, 9);
    pl::account_refused(r, {3, 12});
    CHECK(r.ok());
    CHECK(r.refused == 0);
}

namespace {
pl::verified_table_file file(std::string group, std::string name, std::uint64_t first, std::uint64_t last,
                             std::uint64_t count) {
    return {group + "/" + name, group, {first, last, count}, static_cast<std::int64_t>(count)};
}
}  // namespace

TEST_CASE("verify on a table: files of two partition values interleave; each value's files touch",
          "[pipeline][verify]") {
    // tenant=a holds 0, 2, 4..9 and tenant=b 1, 3, 10..19: their ranges cross, which is fine.
    std::vector<pl::verified_table_file> files{file("tenant=a", "0", 0, 9, 8), file("tenant=b", "1", 1, 19, 12)};
    auto r = pl::verify_table_partition(p0, files, 19);
    CHECK(r.ok());
    CHECK(r.objects == 2);
    CHECK(pl::describe_problems(r).empty());
    // The same file registered twice: its offsets twice in the table.
    files.push_back(files[1]);
    r = pl::verify_table_partition(p0, files, 19);
    REQUIRE(r.overlaps.size() == 1);
    CHECK_THAT(pl::describe_problems(r)[0],
               ContainsSubstring("duplicate offsets 1..19 are in two objects: tenant=b/1 and tenant=b/1"));
    // A value's file missing: offsets no file covers, up to the committed one.
    r = pl::verify_table_partition(p0, {file("tenant=a", "0", 0, 9, 8), file("tenant=b", "12", 12, 19, 8)}, 19);
    REQUIRE(r.gaps.size() == 1);
    CHECK(r.gaps[0].first == 10);
    CHECK(r.gaps[0].last == 11);
    // The manifest's row count is not the object's.
    files = {file("tenant=a", "0", 0, 9, 8)};
    files[0].record_count = 9;
    r = pl::verify_table_partition(p0, files, 9);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(pl::describe_problems(r)[0],
               ContainsSubstring("tenant=a/0 has 9 rows in the table's manifest, 8 in its object's metadata"));
}
