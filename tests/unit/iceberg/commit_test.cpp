// SPDX-License-Identifier: Apache-2.0
#include "iceberg/commit.hpp"

#include "format/avro_container.hpp"
#include "iceberg/error.hpp"
#include "manifest_fixture.hpp"

#include <boost/json.hpp>

#include "catch2_compat.hpp"
#include <fmt/format.h>

using namespace iss;
using namespace iss::iceberg;
namespace json = boost::json;

namespace {

const source_partition p0{"app", "orders", 0};
const source_partition p1{"app", "orders", 1};

/// Table metadata as a REST catalog returns it (LoadTableResult), with `snapshots` JSON.
std::string load_result(std::string snapshots, std::string refs, std::int64_t last_seq) {
    return fmt::format(
        R"({{"metadata-location":"s3://lake/wh/t/metadata/v3.metadata.json","metadata":{{"format-version":2,)"
        R"("table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1","location":"s3://lake/wh/t/","last-sequence-number":{},)"
        R"("last-updated-ms":1,"last-column-id":3,"current-schema-id":0,"schemas":[{{"type":"struct","schema-id":0,)"
        R"("fields":[{{"id":1,"name":"ts","required":true,"type":"timestamptz"}},{{"id":2,"name":"tenant",)"
        R"("required":false,"type":"string"}},{{"id":3,"name":"n","required":false,"type":"long"}}]}}],)"
        R"("default-spec-id":0,"partition-specs":[{{"spec-id":0,"fields":[{{"name":"ts_day","transform":"day",)"
        R"("source-id":1,"field-id":1000}},{{"name":"tenant","transform":"identity","source-id":2,"field-id":1001}}]}}],)"
        R"("last-partition-id":1001,"properties":{{}},"snapshots":[{}],"refs":{{{}}}}}}})",
        last_seq, snapshots, refs);
}

std::string snapshot(std::int64_t id, std::optional<std::int64_t> parent, std::int64_t seq, std::string offsets,
                     std::int64_t total_records = 100) {
    json::object summary{{"operation", "append"},
                         {"total-records", fmt::format("{}", total_records)},
                         {"total-data-files", "4"},
                         {"total-files-size", "4000"}};
    if (!offsets.empty()) summary[offsets_key] = offsets;
    json::object s{{"snapshot-id", id},
                   {"sequence-number", seq},
                   {"timestamp-ms", 1'800'000'000'000LL + seq},
                   {"manifest-list", fmt::format("s3://lake/wh/t/metadata/snap-{}.avro", id)},
                   {"summary", summary}};
    if (parent) s["parent-snapshot-id"] = *parent;
    return json::serialize(s);
}

std::string main_ref(std::int64_t id) { return fmt::format(R"("main":{{"snapshot-id":{},"type":"branch"}})", id); }

table_state empty_table() { return parse_table_metadata(load_result("", "", 0)).value(); }

/// A table whose main is snapshot 20 (parent 10): p0 holds up to 100, and another stream's partition up to 7.
table_state table_at_20() {
    const std::string s10 = snapshot(10, std::nullopt, 1, R"({"app":{"orders":{"0":50}}})", 50);
    const std::string s20 = snapshot(20, 10, 2, R"({"app":{"orders":{"0":100}},"other":{"t":{"3":7}}})");
    return parse_table_metadata(load_result(s10 + "," + s20, main_ref(20), 2)).value();
}

std::vector<pending_file> batch(const test::table_fixture& fx) {
    // file 0: p0 100..109, file 1: p0 110..129, file 2: p1 0..4
    return {{fx.files[0], p0, 100, 109}, {fx.files[1], p0, 110, 129}, {fx.files[2], p1, 0, 4}};
}

/// Each partition's commit point just past its files' last offsets.
offset_map next_of(std::span<const pending_file> files) {
    offset_map m;
    for (const auto& f : files) m[f.source] = std::max(m[f.source], f.last_offset + 1);
    return m;
}

commit_input input(const test::table_fixture& fx, const table_state& t, std::span<const pending_file> files,
                   std::vector<manifest_file> parent = {}) {
    commit_input in;
    in.schema = &fx.schema;
    in.spec = &fx.spec;
    in.table = &t;
    in.parent_manifests = std::move(parent);
    in.files = files;
    in.now_ms = 1'800'000'000'500LL;
    in.namespace_levels = {"lake", "raw"};
    in.table_name = "app_orders";
    in.next_offsets = next_of(files);
    return in;
}

commit_plan plan(const test::table_fixture& fx, const table_state& t, std::span<const pending_file> files,
                 std::vector<manifest_file> parent = {}) {
    return plan_commit(input(fx, t, files, std::move(parent))).value();
}

}  // namespace

TEST_CASE("offsets are a nested JSON object per stream, topic and partition", "[iceberg][commit]") {
    offset_map m{{p0, 10}, {p1, 0}, {{"b", "t", 7}, 99}};
    CHECK(offsets_json(m) == R"({"app":{"orders":{"0":10,"1":0}},"b":{"t":{"7":99}}})");
    CHECK(parse_offsets(offsets_json(m)).value() == m);
    CHECK(parse_offsets("{}").value().empty());
    for (const char* bad : {"[]", "{\"a\":1}", R"({"a":{"t":{"x":1}}})", R"({"a":{"t":{"0":-1}}})", "nope"}) {
        INFO(bad);
        auto r = parse_offsets(bad);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error() == iceberg::errc::bad_metadata);
    }
    CHECK(merge_offsets({{p0, 10}, {p1, 5}}, {{p0, 8}, {{"x", "y", 0}, 1}}) ==
          offset_map{{p0, 10}, {p1, 5}, {{"x", "y", 0}, 1}});
    CHECK(merge_offsets({{p0, 10}}, {{p0, 12}}).at(p0) == 12);
}

TEST_CASE("table metadata: main from refs, else the current snapshot; its summary offsets", "[iceberg][commit]") {
    const auto t = table_at_20();
    CHECK(t.table_uuid == "9c12d441-03fe-4693-9a96-a0705ddf69c1");
    CHECK(t.location == "s3://lake/wh/t");
    CHECK(t.last_sequence_number == 2);
    REQUIRE(t.main() != nullptr);
    CHECK(t.main()->snapshot_id == 20);
    CHECK(t.on_main(10));
    CHECK(t.on_main(20));
    CHECK_FALSE(t.on_main(30));
    CHECK(t.committed_offsets().value() == offset_map{{p0, 100}, {{"other", "t", 3}, 7}});
    CHECK(t.schema_fields.size() == 3);
    // no refs: current-snapshot-id; -1 or absent: empty
    auto bare = json::parse(load_result(snapshot(10, std::nullopt, 1, ""), "", 1)).at("metadata").as_object();
    bare.erase("refs");
    bare["current-snapshot-id"] = 10;
    CHECK(parse_table_metadata(json::serialize(bare))->main_snapshot_id == 10);
    bare["current-snapshot-id"] = -1;
    CHECK_FALSE(parse_table_metadata(json::serialize(bare))->main_snapshot_id.has_value());
    const auto e = empty_table();
    CHECK(e.main() == nullptr);
    CHECK(e.committed_offsets().value().empty());
}

TEST_CASE("the committed offsets are the newest on main's ancestry: another writer's snapshot does not hide ours",
          "[iceberg][commit]") {
    // 30 and 40 are other writers' appends (PyIceberg's, Spark's): their summaries have no
    // iggy-s3-sink.offsets; 20's still hold for the data files the table has.
    const std::string s10 = snapshot(10, std::nullopt, 1, R"({"app":{"orders":{"0":50}}})", 50);
    const std::string s20 = snapshot(20, 10, 2, R"({"app":{"orders":{"0":100}}})");
    const std::string s30 = snapshot(30, 20, 3, "");
    const std::string s40 = snapshot(40, 30, 4, "");
    const auto t = parse_table_metadata(load_result(s10 + "," + s20 + "," + s30 + "," + s40, main_ref(40), 4)).value();
    CHECK(t.committed_offsets().value() == offset_map{{p0, 100}});
    // ... so a batch already in the table is found there, not committed again
    const auto fx = test::fixture();
    const std::vector<pending_file> done{{fx.files[0], p0, 90, 99}};
    CHECK(decide(t, done, 0).what == decision::kind::done);
    // an ancestry without the key (its snapshots expired, or never ours): nothing committed
    const auto foreign = parse_table_metadata(load_result(s30, main_ref(30), 3)).value();
    CHECK(foreign.committed_offsets().value().empty());
}

TEST_CASE("table metadata that cannot be used is refused, naming why", "[iceberg][commit]") {
    const auto why = [](const std::string& text) {
        auto r = parse_table_metadata(text);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error() == iceberg::errc::bad_metadata);
        return r.error().detail();
    };
    auto md = json::parse(load_result("", "", 0)).at("metadata").as_object();
    md["format-version"] = 1;
    CHECK_THAT(why(json::serialize(md)), Catch::Matchers::ContainsSubstring("format-version 1"));
    md["format-version"] = 2;
    md.erase("table-uuid");
    CHECK_THAT(why(json::serialize(md)), Catch::Matchers::ContainsSubstring("table-uuid"));
    CHECK_THAT(why(load_result("", main_ref(5), 0)), Catch::Matchers::ContainsSubstring("snapshot 5"));
    CHECK_THAT(why("[1]"), Catch::Matchers::ContainsSubstring("not a JSON object"));
}

TEST_CASE("the first commit: no parent, sequence 1, ref asserted absent", "[iceberg][commit]") {
    const auto fx = test::fixture();
    const auto t = empty_table();
    const auto files = batch(fx);
    const auto p = plan(fx, t, files);
    CHECK_FALSE(p.parent_snapshot_id.has_value());
    CHECK(p.sequence_number == 1);
    CHECK(p.snapshot_id > 0);
    CHECK(p.manifest_path == fmt::format("s3://lake/wh/t/metadata/iggy-{}-m0.avro", p.snapshot_id));
    CHECK(p.manifest_list_path == fmt::format("s3://lake/wh/t/metadata/snap-{}-iggy.avro", p.snapshot_id));
    const auto body = json::parse(p.request_body).as_object();
    CHECK(body.at("identifier") == json::parse(R"({"namespace":["lake","raw"],"name":"app_orders"})"));
    const auto& req = body.at("requirements").as_array();
    REQUIRE(req.size() == 2);
    CHECK(req[0] == json::parse(R"({"type":"assert-table-uuid","uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1"})"));
    CHECK(req[1] == json::parse(R"({"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":null})"));
    const auto& up = body.at("updates").as_array();
    REQUIRE(up.size() == 2);
    CHECK(up[0].at("action") == "add-snapshot");
    CHECK(up[1] == json::value{{"action", "set-snapshot-ref"},
                               {"ref-name", "main"},
                               {"type", "branch"},
                               {"snapshot-id", p.snapshot_id}});
    const auto& snap = up[0].at("snapshot").as_object();
    CHECK(json::serialize(snap) == p.snapshot_json);
    CHECK(snap.at("snapshot-id") == p.snapshot_id);
    CHECK_FALSE(snap.contains("parent-snapshot-id"));
    CHECK(snap.at("sequence-number") == 1);
    CHECK(snap.at("timestamp-ms") == 1'800'000'000'500LL);
    CHECK(snap.at("manifest-list").as_string() == p.manifest_list_path);
    const auto& sum = snap.at("summary").as_object();
    CHECK(sum.at("operation") == "append");
    CHECK(sum.at("added-data-files") == "3");
    CHECK(sum.at("added-records") == "35");
    CHECK(sum.at("added-files-size") == "3035");
    CHECK(sum.at("changed-partition-count") == "3");
    CHECK(sum.at("total-records") == "35");
    CHECK(sum.at("total-data-files") == "3");
    CHECK(sum.at("total-delete-files") == "0");
    CHECK(parse_offsets(sum.at(offsets_key).as_string()).value() == offset_map{{p0, 130}, {p1, 5}});
    CHECK(p.offsets == offset_map{{p0, 130}, {p1, 5}});
    // the list holds the one new manifest
    const auto list = read_manifest_list(p.manifest_list).value();
    REQUIRE(list.size() == 1);
    CHECK(list[0].manifest_path == p.manifest_path);
    CHECK(list[0].manifest_length == static_cast<std::int64_t>(p.manifest.size()));
    CHECK(list[0].added_snapshot_id == p.snapshot_id);
    CHECK(list[0].sequence_number == 1);
    CHECK(format::avro_ocf::read(p.manifest_list)->metadata_value("parent-snapshot-id").empty());
}

TEST_CASE("a commit on a parent: totals add up, offsets merge, the parent's manifests carry forward",
          "[iceberg][commit]") {
    const auto fx = test::fixture();
    const auto t = table_at_20();
    const std::vector<pending_file> files{{fx.files[2], p1, 0, 4}};
    const auto parent = test::parent_manifests();
    const auto p = plan(fx, t, files, parent);
    CHECK(p.parent_snapshot_id == 20);
    CHECK(p.sequence_number == 3);
    const auto snap = json::parse(p.snapshot_json).as_object();
    CHECK(snap.at("parent-snapshot-id") == 20);
    const auto& sum = snap.at("summary").as_object();
    CHECK(sum.at("total-records") == "105");
    CHECK(sum.at("total-data-files") == "5");
    CHECK(sum.at("total-files-size") == "5005");
    // every partition of the parent's summary is kept (several daemons write one table)
    CHECK(p.offsets == offset_map{{p0, 100}, {p1, 5}, {{"other", "t", 3}, 7}});
    const auto req = json::parse(p.request_body).at("requirements").as_array();
    CHECK(req[1].at("snapshot-id") == 20);
    const auto list = read_manifest_list(p.manifest_list).value();
    REQUIRE(list.size() == 3);
    CHECK(list[0].manifest_path == p.manifest_path);
    CHECK(list[1] == parent[0]);
    CHECK(list[2] == parent[1]);
    CHECK(format::avro_ocf::read(p.manifest_list)->metadata_value("parent-snapshot-id") == "20");
    // the parent's timestamp is later than this host's clock: the snapshot's is one past it
    CHECK(snap.at("timestamp-ms").as_int64() == 1'800'000'000'500LL);
    auto later = t;
    later.snapshots.back().timestamp_ms = 1'900'000'000'000LL;
    CHECK(json::parse(plan(fx, later, files).snapshot_json).at("timestamp-ms") == 1'900'000'000'001LL);
    // the table's metadata changed after this host's clock (a schema or property update by
    // another host): the snapshot is one past `last-updated-ms`
    CHECK(t.last_updated_ms == 1);  // as the metadata says
    auto updated = t;
    updated.last_updated_ms = 1'950'000'000'000LL;
    CHECK(json::parse(plan(fx, updated, files).snapshot_json).at("timestamp-ms") == 1'950'000'000'001LL);
}

TEST_CASE("a retry on the same parent is the same snapshot, byte for byte; a new parent a new one",
          "[iceberg][commit]") {
    const auto fx = test::fixture();
    const auto files = batch(fx);
    const auto a = plan(fx, empty_table(), files);
    const auto b = plan(fx, empty_table(), files);
    CHECK(a.snapshot_id == b.snapshot_id);
    CHECK(a.manifest == b.manifest);
    CHECK(a.manifest_list == b.manifest_list);
    CHECK(a.request_body == b.request_body);
    const auto c = plan(fx, table_at_20(), files);
    CHECK(c.snapshot_id != a.snapshot_id);
    const std::vector<pending_file> fewer{files[0]};
    CHECK(plan(fx, empty_table(), fewer).snapshot_id != a.snapshot_id);
}

TEST_CASE("the summary records the commit point; files at or past it are refused", "[iceberg][commit]") {
    const auto fx = test::fixture();
    // two objects of p0 interleaved in offsets (one per partition value): 100..104 and 101..105,
    // while an object from 103 on is still open: the commit point is 103, neither may go in
    std::vector<pending_file> files{{fx.files[0], p0, 100, 104}, {fx.files[1], p0, 101, 105}};
    const auto table = empty_table();  // commit_input points at it
    auto in = input(fx, table, files);
    in.next_offsets = {{p0, 103}};
    auto r = plan_commit(in);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == iceberg::errc::bad_batch);
    CHECK_THAT(r.error().detail(), Catch::Matchers::ContainsSubstring("ends at offset 104 of app/orders/0"));
    // once the open one is durable (the commit point is 110), both go in and 110 is recorded
    in.next_offsets = {{p0, 110}};
    const auto p = plan_commit(in).value();
    CHECK(p.offsets == offset_map{{p0, 110}});
    // a file whose partition has no commit point is a caller's bug too
    in.next_offsets = {{p1, 5}};
    CHECK(plan_commit(in).error() == iceberg::errc::bad_batch);
}

TEST_CASE("after a failed commit: our snapshot on main is done", "[iceberg][commit]") {
    const auto fx = test::fixture();
    const auto files = batch(fx);
    const auto t = table_at_20();
    // a 500 after the catalog applied it: main is our snapshot (or a later one built on it)
    const std::string ours = snapshot(77, 20, 3, R"({"app":{"orders":{"0":130,"1":5}}})");
    const std::string later = snapshot(88, 77, 4, R"({"app":{"orders":{"0":130,"1":5}},"x":{"y":{"0":1}}})");
    const auto applied =
        parse_table_metadata(load_result(snapshot(20, std::nullopt, 2, "") + "," + ours + "," + later, main_ref(88), 4))
            .value();
    auto d = decide(applied, files, 77);
    CHECK(d.what == decision::kind::done);
    CHECK(d.remaining.empty());
    // the same table, asked about a snapshot that never made it: decided by the offsets (covered)
    d = decide(applied, files, 12345);
    CHECK(d.what == decision::kind::done);
    (void)t;
}

TEST_CASE("after a failed commit: offsets decide done, rebuild with what is left, or overlap", "[iceberg][commit]") {
    const auto fx = test::fixture();
    const auto files = batch(fx);  // p0 100..109, p0 110..129, p1 0..4
    const auto table_with = [](const std::string& offsets) {
        return parse_table_metadata(load_result(snapshot(30, std::nullopt, 1, offsets), main_ref(30), 1)).value();
    };
    // 409: another daemon committed other partitions only -> rebuild with every file
    auto d = decide(table_with(R"({"app":{"orders":{"0":100}},"z":{"z":{"0":9}}})"), files, 1);
    CHECK(d.what == decision::kind::rebuild);
    CHECK(d.remaining.size() == 3);
    // another owner committed p0 up to 110 (the same first object): the rest remains
    d = decide(table_with(R"({"app":{"orders":{"0":110}}})"), files, 1);
    CHECK(d.what == decision::kind::rebuild);
    REQUIRE(d.remaining.size() == 2);
    CHECK(d.remaining[0].first_offset == 110);
    CHECK(d.remaining[1].source == p1);
    // everything covered
    d = decide(table_with(R"({"app":{"orders":{"0":130,"1":5}}})"), files, 1);
    CHECK(d.what == decision::kind::done);
    CHECK(d.remaining.empty());
    // the table holds p0 up to 105: the first file straddles it
    d = decide(table_with(R"({"app":{"orders":{"0":105}}})"), files, 1);
    CHECK(d.what == decision::kind::overlap);
    CHECK(d.remaining.empty());
    CHECK_THAT(d.detail, Catch::Matchers::ContainsSubstring("100..109"));
    CHECK_THAT(d.detail, Catch::Matchers::ContainsSubstring("up to 104"));
    // the boundary: the table holds up to 108, the first file ends at 109
    d = decide(table_with(R"({"app":{"orders":{"0":109}}})"), files, 1);
    CHECK(d.what == decision::kind::overlap);
    // an empty table (the create raced with ours): rebuild with all
    d = decide(empty_table(), files, 1);
    CHECK(d.what == decision::kind::rebuild);
    CHECK(d.remaining.size() == 3);
    // a summary we cannot read is never guessed at
    d = decide(table_with("not json"), files, 1);
    CHECK(d.what == decision::kind::overlap);
}

TEST_CASE("an existing table must have our columns' ids and our partition spec", "[iceberg][commit]") {
    const auto fx = test::fixture();
    const auto t = table_at_20();
    CHECK(check_table_matches(t, fx.schema, fx.spec).empty());
    auto other = fx.spec;
    other.fields.pop_back();
    const auto p = check_table_matches(t, fx.schema, other);
    REQUIRE(p.size() == 1);
    CHECK_THAT(p[0], Catch::Matchers::ContainsSubstring("partition spec"));
    auto schema = fx.schema;
    schema.fields[1].id = 9;
    schema.fields.push_back(schema.fields[0]);
    schema.fields.back().name = "extra";
    const auto q = check_table_matches(t, schema, fx.spec);
    REQUIRE(q.size() == 2);
    CHECK_THAT(q[0], Catch::Matchers::ContainsSubstring("`tenant` has field id 2 in the table, 9 here"));
    CHECK_THAT(q[1], Catch::Matchers::ContainsSubstring("no column `extra`"));
}

TEST_CASE("the topics' creation times: recorded beside the offsets, merged with the parent's, absent in old tables",
          "[iceberg][commit]") {
    const topic_created_map m{{{"app", "orders"}, 1'700'000'000'000'000ULL}, {{"b", "t"}, 7}};
    CHECK(topics_json(m) == R"({"app":{"orders":1700000000000000},"b":{"t":7}})");
    CHECK(parse_topics(topics_json(m)).value() == m);
    for (const char* bad : {"[]", R"({"a":1})", R"({"a":{"t":-1}})", R"({"a":{"t":"x"}})"}) {
        INFO(bad);
        CHECK_FALSE(parse_topics(bad).has_value());
    }
    // A table written before the key: its offsets stand, no creation time is known.
    const auto old = table_at_20();
    CHECK(old.committed_topics().value().empty());
    // The batch records its topic's creation time; the parent's other topics are carried.
    const auto fx = test::fixture();
    const auto files = batch(fx);
    auto in = input(fx, old, files);
    in.topics_created = {{{"app", "orders"}, 500}};
    const auto first = plan_commit(in).value();
    const auto summary = [](const commit_plan& p) { return json::parse(p.snapshot_json).at("summary").as_object(); };
    CHECK(summary(first).at(topics_key) == R"({"app":{"orders":500}})");
    CHECK(summary(first).at(offsets_key) == R"({"app":{"orders":{"0":130,"1":5}},"other":{"t":{"3":7}}})");
    // No creation time in the batch and none in the parent: no key (as before).
    CHECK_FALSE(summary(plan(fx, old, files)).contains(topics_key));
    // The parent records two topics; the batch's topic takes its new time, the other is carried.
    const std::string s10 = snapshot(10, std::nullopt, 1, R"({"app":{"orders":{"0":100}}})");
    auto md = json::parse(load_result(s10, main_ref(10), 1));
    md.at("metadata").at("snapshots").as_array()[0].at("summary").as_object()[topics_key] =
        R"({"app":{"orders":500},"other":{"t":9}})";
    const auto parent = parse_table_metadata(json::serialize(md)).value();
    CHECK(parent.committed_topics().value() == topic_created_map{{{"app", "orders"}, 500}, {{"other", "t"}, 9}});
    const std::vector<pending_file> later{{fx.files[0], p0, 100, 109}};
    auto in2 = input(fx, parent, later);
    in2.topics_created = {{{"app", "orders"}, 600}};
    CHECK(summary(plan_commit(in2).value()).at(topics_key) == R"({"app":{"orders":600},"other":{"t":9}})");
}
