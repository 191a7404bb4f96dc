// SPDX-License-Identifier: Apache-2.0
// Writes the fixture's manifest and manifest list (with the parent's entries carried forward)
// into DIR, with DIR/expected.json saying what they hold, for the independent reader
// (tests/readers/check_avro.py iceberg DIR: python3-avro against the spec's schemas); and
// DIR/fieldids.parquet, two rows of the envelope schema (with its headers map) written with
// the Iceberg field ids, for DuckDB's parquet_schema() (CTest iceberg.parquet_field_ids).
#include "format/table.hpp"
#include "iceberg/manifest.hpp"
#include "manifest_fixture.hpp"

#include <boost/json.hpp>

#include <fstream>
#include <iostream>
#include <iterator>
#include <string_view>

using namespace iss::iceberg;

namespace {

std::string hex(const std::string& s) {
    static constexpr char d[] = "0123456789abcdef";
    std::string out;
    for (unsigned char c : s) {
        out += d[c >> 4];
        out += d[c & 15];
    }
    return out;
}

boost::json::object int_map(const std::map<int, std::int64_t>& m) {
    boost::json::object o;
    for (const auto& [k, v] : m) o[std::to_string(k)] = v;
    return o;
}

boost::json::object hex_map(const std::map<int, std::string>& m) {
    boost::json::object o;
    for (const auto& [k, v] : m) o[std::to_string(k)] = hex(v);
    return o;
}

bool write(const std::string& path, const std::string& bytes) {
    std::ofstream out{path, std::ios::binary};
    out << bytes;
    return static_cast<bool>(out);
}

std::string field_ids_parquet() {
    const auto cols = iss::format::envelope_schema(true, iss::format::envelope_payload::string);
    iss::format::parquet_options o;
    o.field_ids = parquet_field_ids(make_schema(cols).value());
    auto w = iss::format::make_parquet_writer(cols, o);
    const std::pair<std::string_view, std::string_view> header{"tenant", "a"};
    std::vector<iss::format::cell> row(cols.size());
    for (std::size_t i = 0; i < cols.size(); ++i) {
        using ct = iss::format::column_type;
        switch (cols[i].type) {
            case ct::map:
                row[i].k = iss::format::cell::kind::map;
                row[i].entries = {&header, 1};
                break;
            case ct::string:
            case ct::json:
            case ct::binary:
                row[i].k = iss::format::cell::kind::bytes;
                row[i].s = "x";
                break;
            default: row[i].k = iss::format::cell::kind::integer; row[i].i = 7;
        }
    }
    std::string out;
    w->begin(out);
    w->append(row, out);
    w->append(row, out);
    w->finish(out);
    return out;
}

}  // namespace

/// `--read-list FILE`: what read_manifest_list makes of FILE, as a JSON array.
static int read_list(const char* path) {
    std::ifstream in{path, std::ios::binary};
    const std::string bytes{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
    auto list = read_manifest_list(bytes);
    if (!list) {
        std::cerr << list.error().message() << "\n";
        return 1;
    }
    boost::json::array out;
    for (const auto& m : *list) {
        boost::json::object o{{"manifest_path", m.manifest_path},
                              {"manifest_length", m.manifest_length},
                              {"partition_spec_id", m.partition_spec_id},
                              {"content", m.content},
                              {"sequence_number", m.sequence_number},
                              {"min_sequence_number", m.min_sequence_number},
                              {"added_snapshot_id", m.added_snapshot_id},
                              {"added_files_count", m.added_files_count},
                              {"existing_files_count", m.existing_files_count},
                              {"deleted_files_count", m.deleted_files_count},
                              {"added_rows_count", m.added_rows_count},
                              {"existing_rows_count", m.existing_rows_count},
                              {"deleted_rows_count", m.deleted_rows_count}};
        if (m.partitions) {
            boost::json::array p;
            for (const auto& s : *m.partitions)
                p.push_back({{"contains_null", s.contains_null},
                             {"contains_nan", s.contains_nan ? boost::json::value(*s.contains_nan) : nullptr},
                             {"lower_bound", s.lower_bound ? boost::json::value(hex(*s.lower_bound)) : nullptr},
                             {"upper_bound", s.upper_bound ? boost::json::value(hex(*s.upper_bound)) : nullptr}});
            o["partitions"] = std::move(p);
        } else {
            o["partitions"] = nullptr;
        }
        out.push_back(std::move(o));
    }
    std::cout << boost::json::serialize(out) << "\n";
    return 0;
}

int main(int argc, char** argv) {
    if (argc == 3 && std::string_view{argv[1]} == "--read-list") return read_list(argv[2]);
    if (argc != 2) {
        std::cerr << "usage: iceberg_manifest_sample DIR | --read-list FILE\n";
        return 2;
    }
    const std::string dir = argv[1];
    const auto fx = test::fixture();
    const std::string manifest = write_manifest(fx.schema, fx.spec, fx.files);
    const std::string mpath = "s3://lake/wh/iggy/app_orders/metadata/new-m0.avro";
    std::vector<manifest_file> list{
        new_manifest_entry(fx.spec, fx.files, mpath, static_cast<std::int64_t>(manifest.size()), 77, 4)};
    for (auto& m : test::parent_manifests()) list.push_back(m);
    const std::string ml = write_manifest_list(77, 66, 4, list);

    boost::json::object exp;
    exp["schema"] = boost::json::parse(schema_json(fx.schema));
    exp["partition_spec"] = boost::json::parse(fx.spec.fields_json());
    boost::json::array files;
    for (const auto& f : fx.files) {
        boost::json::object o;
        o["file_path"] = f.file_path;
        o["record_count"] = f.record_count;
        o["file_size_in_bytes"] = f.file_size_in_bytes;
        o["ts_day"] = f.partition[0].i;
        o["tenant"] = f.partition[1].null ? boost::json::value{} : boost::json::value(f.partition[1].s);
        o["value_counts"] = int_map(f.stats.value_counts);
        o["null_value_counts"] = int_map(f.stats.null_value_counts);
        o["lower_bounds"] = hex_map(f.stats.lower_bounds);
        o["upper_bounds"] = hex_map(f.stats.upper_bounds);
        files.push_back(std::move(o));
    }
    exp["files"] = std::move(files);
    boost::json::array manifests;
    for (const auto& m : list) {
        boost::json::object o;
        o["manifest_path"] = m.manifest_path;
        o["manifest_length"] = m.manifest_length;
        o["sequence_number"] = m.sequence_number;
        o["min_sequence_number"] = m.min_sequence_number;
        o["added_snapshot_id"] = m.added_snapshot_id;
        o["added_files_count"] = m.added_files_count;
        o["existing_files_count"] = m.existing_files_count;
        o["added_rows_count"] = m.added_rows_count;
        o["existing_rows_count"] = m.existing_rows_count;
        if (m.partitions) {
            boost::json::array p;
            for (const auto& s : *m.partitions)
                p.push_back({{"contains_null", s.contains_null},
                             {"lower_bound", s.lower_bound ? boost::json::value(hex(*s.lower_bound)) : nullptr},
                             {"upper_bound", s.upper_bound ? boost::json::value(hex(*s.upper_bound)) : nullptr}});
            o["partitions"] = std::move(p);
        } else {
            o["partitions"] = nullptr;
        }
        manifests.push_back(std::move(o));
    }
    exp["manifests"] = std::move(manifests);
    if (!write(dir + "/manifest.avro", manifest) || !write(dir + "/manifest-list.avro", ml) ||
        !write(dir + "/expected.json", boost::json::serialize(exp)) ||
        !write(dir + "/fieldids.parquet", field_ids_parquet())) {
        std::cerr << "iceberg_manifest_sample: cannot write into " << dir << "\n";
        return 1;
    }
    return 0;
}
