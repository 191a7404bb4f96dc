// SPDX-License-Identifier: Apache-2.0
#include "iceberg/manifest.hpp"

#include "format/avro_container.hpp"
#include "iceberg/error.hpp"
#include "manifest_fixture.hpp"

#include <boost/json.hpp>

#include "catch2_compat.hpp"

using namespace iss;
using namespace iss::iceberg;

TEST_CASE("a manifest carries the spec's file metadata and one entry per data file", "[iceberg][manifest]") {
    const auto fx = test::fixture();
    const std::string bytes = write_manifest(fx.schema, fx.spec, fx.files);
    CHECK(bytes == write_manifest(fx.schema, fx.spec, fx.files));  // deterministic
    auto f = format::avro_ocf::read(bytes);
    REQUIRE(f.has_value());
    CHECK(f->count == fx.files.size());
    CHECK(f->metadata_value("avro.codec") == "deflate");
    CHECK(f->metadata_value("format-version") == "2");
    CHECK(f->metadata_value("content") == "data");
    CHECK(f->metadata_value("partition-spec-id") == "0");
    CHECK(f->metadata_value("schema-id") == "0");
    CHECK(f->metadata_value("schema") == schema_json(fx.schema));
    CHECK(f->metadata_value("partition-spec") == fx.spec.fields_json());
    // the Avro schema is valid JSON and names the partition fields with their ids
    const auto s = boost::json::parse(f->metadata_value("avro.schema")).as_object();
    CHECK(s.at("name") == "manifest_entry");
    const auto& part = s.at("fields").as_array()[4].at("type").at("fields").as_array()[3];
    CHECK(part.at("name") == "partition");
    CHECK(part.at("field-id") == 102);
    CHECK(part.at("type").at("fields").as_array()[0].at("field-id") == 1000);
    CHECK(part.at("type").at("fields").as_array()[1].at("name") == "tenant");
}

TEST_CASE("a manifest reads back: each entry's status, content, file path and record count", "[iceberg][manifest]") {
    const auto fx = test::fixture();
    REQUIRE(fx.files.size() >= 2);
    auto back = read_manifest(write_manifest(fx.schema, fx.spec, fx.files));
    REQUIRE(back.has_value());
    REQUIRE(back->size() == fx.files.size());
    for (std::size_t i = 0; i < fx.files.size(); ++i) {
        CHECK((*back)[i].status == 1);  // ADDED
        CHECK((*back)[i].content == 0);
        CHECK((*back)[i].file_path == fx.files[i].file_path);
        CHECK((*back)[i].record_count == fx.files[i].record_count);
    }
    auto bad = read_manifest("not avro");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error() == iceberg::errc::bad_avro);
    // a manifest list is not a manifest: its records have no data_file
    auto list = read_manifest(write_manifest_list(1, std::nullopt, 1, std::vector<manifest_file>(1)));
    REQUIRE_FALSE(list.has_value());
    CHECK_THAT(list.error().message(), Catch::Matchers::ContainsSubstring("status"));
}

TEST_CASE("an unpartitioned table's manifest has an empty partition record", "[iceberg][manifest]") {
    auto fx = test::fixture();
    fx.spec.fields.clear();
    for (auto& d : fx.files) d.partition.clear();
    const auto bytes = write_manifest(fx.schema, fx.spec, fx.files);
    auto f = format::avro_ocf::read(bytes);
    REQUIRE(f.has_value());
    CHECK(f->metadata_value("partition-spec") == "[]");
    const auto m = new_manifest_entry(fx.spec, fx.files, "s3://b/m.avro", 10, 7, 3);
    CHECK(m.partitions->empty());
}

TEST_CASE("the new manifest's list entry counts files and rows and bounds the partitions", "[iceberg][manifest]") {
    const auto fx = test::fixture();
    const auto m = new_manifest_entry(fx.spec, fx.files, "s3://lake/t/metadata/m0.avro", 1234, 42, 5);
    CHECK(m.manifest_length == 1234);
    CHECK(m.added_snapshot_id == 42);
    CHECK(m.sequence_number == 5);
    CHECK(m.min_sequence_number == 5);
    CHECK(m.added_files_count == 3);
    CHECK(m.added_rows_count == 10 + 20 + 5);
    CHECK(m.existing_files_count == 0);
    REQUIRE(m.partitions.has_value());
    REQUIRE(m.partitions->size() == 2);
    const auto& day = (*m.partitions)[0];
    CHECK_FALSE(day.contains_null);
    CHECK(day.lower_bound == single_value(type_id::date, value::of_int(20'794)));
    CHECK(day.upper_bound == single_value(type_id::date, value::of_int(20'795)));
    const auto& tenant = (*m.partitions)[1];
    CHECK(tenant.contains_null);  // the third file's tenant is null
    CHECK(tenant.lower_bound == "a");
    CHECK(tenant.upper_bound == "b");
}

TEST_CASE("a manifest list reads back as written, the parent's entries carried forward", "[iceberg][manifest]") {
    const auto fx = test::fixture();
    auto parent = test::parent_manifests();
    std::vector<manifest_file> all{new_manifest_entry(fx.spec, fx.files, "s3://lake/t/metadata/new.avro", 999, 77, 4)};
    all.insert(all.end(), parent.begin(), parent.end());
    const std::string bytes = write_manifest_list(77, 66, 4, all);
    auto f = format::avro_ocf::read(bytes);
    REQUIRE(f.has_value());
    CHECK(f->metadata_value("snapshot-id") == "77");
    CHECK(f->metadata_value("parent-snapshot-id") == "66");
    CHECK(f->metadata_value("sequence-number") == "4");
    CHECK(f->metadata_value("format-version") == "2");
    auto back = read_manifest_list(bytes);
    REQUIRE(back.has_value());
    CHECK(*back == all);
    // the first snapshot has no parent
    const auto first = format::avro_ocf::read(write_manifest_list(1, std::nullopt, 1, {}));
    REQUIRE(first.has_value());
    CHECK(first->metadata_value("parent-snapshot-id").empty());
    CHECK(read_manifest_list(write_manifest_list(1, std::nullopt, 1, {}))->empty());
}

TEST_CASE("a manifest list that is not one is refused, naming why", "[iceberg][manifest]") {
    auto r = read_manifest_list("not avro");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == iceberg::errc::bad_avro);
    CHECK_THAT(r.error().detail(), Catch::Matchers::ContainsSubstring("magic"));
    const auto fx = test::fixture();
    std::string bytes = write_manifest_list(1, std::nullopt, 1, test::parent_manifests());
    bytes.resize(bytes.size() - 5);
    CHECK_FALSE(read_manifest_list(bytes).has_value());
}

TEST_CASE("column statistics: counts, nulls and bounds in single-value form", "[iceberg][manifest]") {
    const auto fx = test::fixture();
    stats_collector c{fx.schema};
    std::vector<format::cell> row(fx.schema.fields.size());
    const auto put = [&](std::int64_t ts, const char* tenant, std::int64_t n) {
        row[0].k = format::cell::kind::integer;
        row[0].i = ts;
        row[1].k = tenant ? format::cell::kind::bytes : format::cell::kind::null;
        row[1].s = tenant ? tenant : "";
        row[2].k = format::cell::kind::integer;
        row[2].i = n;
        c.add(row);
    };
    put(100, "b", 5);
    put(50, nullptr, -3);
    put(75, "a", 9);
    const auto s = c.stats();
    CHECK(s.value_counts.at(1) == 3);
    CHECK(s.null_value_counts.at(1) == 0);
    CHECK(s.null_value_counts.at(2) == 1);
    CHECK(s.lower_bounds.at(1) == single_value(type_id::timestamptz, value::of_int(50)));
    CHECK(s.upper_bounds.at(1) == single_value(type_id::timestamptz, value::of_int(100)));
    CHECK(s.lower_bounds.at(2) == "a");
    CHECK(s.upper_bounds.at(2) == "b");
    CHECK(s.lower_bounds.at(3) == single_value(type_id::long_, value::of_int(-3)));
    CHECK(s.upper_bounds.at(3) == single_value(type_id::long_, value::of_int(9)));
    // long strings: the lower bound is a prefix, the upper bound the prefix incremented
    put(1, "abcdefghijklmnopqrstuvwxyz", 0);
    put(1, "zzzzzzzzzzzzzzzzzzzzzzz", 0);
    const auto t = c.stats();
    CHECK(t.lower_bounds.at(2) == "a");
    CHECK(t.upper_bounds.at(2) == "zzzzzzzzzzzzzzz{");
    c.reset();
    CHECK(c.stats().value_counts.at(1) == 0);
    CHECK(c.stats().lower_bounds.empty());
}
