// SPDX-License-Identifier: Apache-2.0
#pragma once
// A table (ts timestamptz, tenant string, n long), partitioned by day(ts), identity(tenant),
// with three data files, and a parent snapshot's manifest list entries: shared by the
// manifest unit tests and the python3-avro sample (manifest_sample.cpp).
#include "iceberg/manifest.hpp"
#include "iceberg/partition.hpp"
#include "iceberg/schema.hpp"

#include <string>
#include <vector>

namespace iss::iceberg::test {

struct table_fixture {
    table_schema schema;
    partition_spec spec;
    std::vector<data_file> files;
};

inline table_fixture fixture() {
    std::vector<format::column> cols(3);
    cols[0].name = "ts";
    cols[0].type = format::column_type::timestamp_us;
    cols[0].nullable = false;
    cols[1].name = "tenant";
    cols[1].type = format::column_type::string;
    cols[2].name = "n";
    cols[2].type = format::column_type::int64;
    table_fixture f;
    f.schema = make_schema(cols).value();
    const std::vector<std::string> by{"day(ts)", "identity(tenant)"};
    f.spec = parse_partition_by(by, f.schema).value();
    const auto file = [&](std::string key, std::int64_t day, std::optional<std::string> tenant, std::int64_t rows) {
        data_file d;
        d.file_path = "s3://lake/wh/iggy/app_orders/data/" + key;
        d.partition = {value::of_int(day), tenant ? value::of_bytes(*tenant) : value{}};
        d.record_count = rows;
        d.file_size_in_bytes = 1000 + rows;
        d.stats.value_counts = {{1, rows}, {2, rows}, {3, rows}};
        d.stats.null_value_counts = {{1, 0}, {2, tenant ? 0 : rows}, {3, 0}};
        d.stats.lower_bounds = {{1, single_value(type_id::timestamptz, value::of_int(day * 86'400'000'000LL))}};
        d.stats.upper_bounds = {{1, single_value(type_id::timestamptz, value::of_int(day * 86'400'000'000LL + 5))}};
        return d;
    };
    f.files.push_back(file("ts_day=2026-12-07/tenant=a/app+orders+0+00000000000000000000.parquet", 20'794, "a", 10));
    f.files.push_back(file("ts_day=2026-12-08/tenant=b/app+orders+0+00000000000000000010.parquet", 20'795, "b", 20));
    f.files.push_back(
        file("ts_day=2026-12-08/tenant=null/app+orders+1+00000000000000000000.parquet", 20'795, std::nullopt, 5));
    return f;
}

/// What a parent snapshot's list held: two manifests, one with no partition summaries and key metadata.
inline std::vector<manifest_file> parent_manifests() {
    manifest_file a;
    a.manifest_path = "s3://lake/wh/iggy/app_orders/metadata/old-0.avro";
    a.manifest_length = 4321;
    a.sequence_number = 2;
    a.min_sequence_number = 1;
    a.added_snapshot_id = 66;
    a.added_files_count = 2;
    a.existing_files_count = 1;
    a.added_rows_count = 300;
    a.existing_rows_count = 7;
    a.partitions = std::vector<field_summary>{
        {false, std::nullopt, std::string{"\x1a\x51\0\0", 4}, std::string{"\x1b\x51\0\0", 4}},
        {true, false, std::nullopt, std::nullopt}};
    manifest_file b;
    b.manifest_path = "s3://lake/wh/iggy/app_orders/metadata/old-1.avro";
    b.manifest_length = 99;
    b.sequence_number = 1;
    b.min_sequence_number = 1;
    b.added_snapshot_id = 55;
    b.added_files_count = 1;
    b.added_rows_count = 1;
    b.key_metadata = std::string{"\x00\xFFk", 3};
    return {a, b};
}

}  // namespace iss::iceberg::test
