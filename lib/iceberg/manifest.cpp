// SPDX-License-Identifier: Apache-2.0
// Manifests and manifest lists (manifest.hpp cites the spec sections). The Avro schemas are
// the spec's v2 `manifest_entry` / `data_file` and `manifest_file` / `field_summary`, with
// their field ids, written as the reference implementation names the records (r2, r102,
// r508, k117_v118, ...); maps with int keys are arrays of key/value records with logical
// type `map` (Appendix A, "Avro").
#include "iceberg/manifest.hpp"

#include "format/avro_container.hpp"
#include "format/json.hpp"
#include "iceberg/avro_datum.hpp"
#include "iceberg/error.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace iss::iceberg {

namespace {

using namespace detail;
namespace ocf = format::avro_ocf;

std::string avro_partition_type(type_id t) {
    switch (t) {
        case type_id::boolean: return R"("boolean")";
        case type_id::int_: return R"("int")";
        case type_id::long_: return R"("long")";
        case type_id::float_: return R"("float")";
        case type_id::double_: return R"("double")";
        case type_id::date: return R"({"type":"int","logicalType":"date"})";
        case type_id::timestamptz: return R"({"type":"long","logicalType":"timestamp-micros","adjust-to-utc":true})";
        case type_id::string: return R"("string")";
        case type_id::binary:
        case type_id::map: return R"("bytes")";
    }
    return R"("bytes")";
}

std::string int_map(std::string_view name, int id, int key_id, int value_id, std::string_view value_type) {
    return fmt::format(R"({{"name":"{}","type":["null",{{"type":"array","items":{{"type":"record","name":"k{}_v{}",)"
                       R"("fields":[{{"name":"key","type":"int","field-id":{}}},{{"name":"value","type":"{}",)"
                       R"("field-id":{}}}]}},"logicalType":"map"}}],"default":null,"field-id":{}}})",
                       name, key_id, value_id, key_id, value_type, value_id, id);
}

void set_int_map(avro_value_t& rec, const char* name, const std::map<int, std::int64_t>* longs,
                 const std::map<int, std::string>* bytes) {
    avro_value_t u = member(rec, name);
    if ((longs == nullptr || longs->empty()) && (bytes == nullptr || bytes->empty())) {
        none(u);
        return;
    }
    avro_value_t arr = some(u);
    const auto add = [&](int k) {
        avro_value_t e;
        check(avro_value_append(&arr, &e, nullptr));
        avro_value_t key = member(e, "key");
        check(avro_value_set_int(&key, k));
        return member(e, "value");
    };
    if (longs != nullptr)
        for (const auto& [k, v] : *longs) {
            avro_value_t val = add(k);
            check(avro_value_set_long(&val, v));
        }
    if (bytes != nullptr)
        for (const auto& [k, v] : *bytes) {
            avro_value_t val = add(k);
            set_bytes(val, v);
        }
}

void set_partition_value(avro_value_t& u, type_id t, const value& v) {
    if (v.null) {
        none(u);
        return;
    }
    avro_value_t b = some(u);
    switch (t) {
        case type_id::boolean: check(avro_value_set_boolean(&b, v.i != 0 ? 1 : 0)); return;
        case type_id::int_:
        case type_id::date: check(avro_value_set_int(&b, static_cast<int32_t>(v.i))); return;
        case type_id::long_:
        case type_id::timestamptz: check(avro_value_set_long(&b, v.i)); return;
        case type_id::float_: check(avro_value_set_float(&b, static_cast<float>(v.d))); return;
        case type_id::double_: check(avro_value_set_double(&b, v.d)); return;
        case type_id::string: set_string(b, v.s); return;
        case type_id::binary:
        case type_id::map: set_bytes(b, v.s); return;
    }
}

void set_opt_bytes(avro_value_t& rec, const char* name, const std::optional<std::string>& v) {
    avro_value_t u = member(rec, name);
    if (!v) return none(u);
    avro_value_t b = some(u);
    set_bytes(b, *v);
}

void set_long(avro_value_t& rec, const char* name, std::int64_t v) {
    avro_value_t f = member(rec, name);
    check(avro_value_set_long(&f, v));
}

void set_int(avro_value_t& rec, const char* name, std::int32_t v) {
    avro_value_t f = member(rec, name);
    check(avro_value_set_int(&f, v));
}

std::string finish(std::string_view schema, std::span<const std::pair<std::string, std::string>> meta,
                   std::uint64_t count, const std::string& block) {
    std::string out, scratch;
    const auto sync = ocf::make_sync(schema);
    ocf::write_header(out, schema, format::avro_codec::deflate, sync, meta);
    if (count > 0) ocf::write_block(out, count, block, format::avro_codec::deflate, sync, scratch);
    return out;
}

}  // namespace

std::string manifest_entry_schema(const partition_spec& spec) {
    std::string part;
    for (const auto& f : spec.fields) {
        if (!part.empty()) part += ',';
        part += R"({"name":)";
        format::json::append_string(part, f.name);
        part += fmt::format(R"(,"type":["null",{}],"default":null,"field-id":{}}})",
                            avro_partition_type(f.result_type()), f.field_id);
    }
    return fmt::format(
        R"({{"type":"record","name":"manifest_entry","fields":[)"
        R"({{"name":"status","type":"int","field-id":0}},)"
        R"({{"name":"snapshot_id","type":["null","long"],"default":null,"field-id":1}},)"
        R"({{"name":"sequence_number","type":["null","long"],"default":null,"field-id":3}},)"
        R"({{"name":"file_sequence_number","type":["null","long"],"default":null,"field-id":4}},)"
        R"({{"name":"data_file","type":{{"type":"record","name":"r2","fields":[)"
        R"({{"name":"content","type":"int","field-id":134}},)"
        R"({{"name":"file_path","type":"string","field-id":100}},)"
        R"({{"name":"file_format","type":"string","field-id":101}},)"
        R"({{"name":"partition","type":{{"type":"record","name":"r102","fields":[{}]}},"field-id":102}},)"
        R"({{"name":"record_count","type":"long","field-id":103}},)"
        R"({{"name":"file_size_in_bytes","type":"long","field-id":104}},)"
        R"({},{},{},{},{},{},)"
        R"({{"name":"key_metadata","type":["null","bytes"],"default":null,"field-id":131}},)"
        R"({{"name":"split_offsets","type":["null",{{"type":"array","items":"long","element-id":133}}],"default":null,"field-id":132}},)"
        R"({{"name":"equality_ids","type":["null",{{"type":"array","items":"int","element-id":136}}],"default":null,"field-id":135}},)"
        R"({{"name":"sort_order_id","type":["null","int"],"default":null,"field-id":140}})"
        R"(]}},"field-id":2}}]}})",
        part, int_map("column_sizes", 108, 117, 118, "long"), int_map("value_counts", 109, 119, 120, "long"),
        int_map("null_value_counts", 110, 121, 122, "long"), int_map("nan_value_counts", 137, 138, 139, "long"),
        int_map("lower_bounds", 125, 126, 127, "bytes"), int_map("upper_bounds", 128, 129, 130, "bytes"));
}

std::string manifest_file_schema() {
    return R"({"type":"record","name":"manifest_file","fields":[)"
           R"({"name":"manifest_path","type":"string","field-id":500},)"
           R"({"name":"manifest_length","type":"long","field-id":501},)"
           R"({"name":"partition_spec_id","type":"int","field-id":502},)"
           R"({"name":"content","type":"int","field-id":517},)"
           R"({"name":"sequence_number","type":"long","field-id":515},)"
           R"({"name":"min_sequence_number","type":"long","field-id":516},)"
           R"({"name":"added_snapshot_id","type":"long","field-id":503},)"
           R"({"name":"added_files_count","type":"int","field-id":504},)"
           R"({"name":"existing_files_count","type":"int","field-id":505},)"
           R"({"name":"deleted_files_count","type":"int","field-id":506},)"
           R"({"name":"added_rows_count","type":"long","field-id":512},)"
           R"({"name":"existing_rows_count","type":"long","field-id":513},)"
           R"({"name":"deleted_rows_count","type":"long","field-id":514},)"
           R"({"name":"partitions","type":["null",{"type":"array","items":{"type":"record","name":"r508","fields":[)"
           R"({"name":"contains_null","type":"boolean","field-id":509},)"
           R"({"name":"contains_nan","type":["null","boolean"],"default":null,"field-id":518},)"
           R"({"name":"lower_bound","type":["null","bytes"],"default":null,"field-id":510},)"
           R"({"name":"upper_bound","type":["null","bytes"],"default":null,"field-id":511}]},)"
           R"("element-id":508}],"default":null,"field-id":507},)"
           R"({"name":"key_metadata","type":["null","bytes"],"default":null,"field-id":519}]})";
}

std::string write_manifest(const table_schema& schema, const partition_spec& spec, std::span<const data_file> files) {
    const std::string avro_schema = manifest_entry_schema(spec);
    avro_datum d{avro_schema};
    std::string block;
    for (const auto& f : files) {
        d.reset();
        avro_value_t& e = d.root();
        set_int(e, "status", 1);  // ADDED
        for (const char* inherited : {"snapshot_id", "sequence_number", "file_sequence_number"}) {
            avro_value_t u = member(e, inherited);
            none(u);
        }
        avro_value_t df = member(e, "data_file");
        set_int(df, "content", 0);
        avro_value_t path = member(df, "file_path");
        set_string(path, f.file_path);
        avro_value_t fmt_ = member(df, "file_format");
        set_string(fmt_, "PARQUET");
        avro_value_t part = member(df, "partition");
        for (std::size_t i = 0; i < spec.fields.size(); ++i) {
            avro_value_t u;
            check(avro_value_get_by_index(&part, i, &u, nullptr));
            set_partition_value(u, spec.fields[i].result_type(), i < f.partition.size() ? f.partition[i] : value{});
        }
        set_long(df, "record_count", f.record_count);
        set_long(df, "file_size_in_bytes", f.file_size_in_bytes);
        set_int_map(df, "column_sizes", &f.stats.column_sizes, nullptr);
        set_int_map(df, "value_counts", &f.stats.value_counts, nullptr);
        set_int_map(df, "null_value_counts", &f.stats.null_value_counts, nullptr);
        set_int_map(df, "nan_value_counts", &f.stats.nan_value_counts, nullptr);
        set_int_map(df, "lower_bounds", nullptr, &f.stats.lower_bounds);
        set_int_map(df, "upper_bounds", nullptr, &f.stats.upper_bounds);
        for (const char* absent : {"key_metadata", "split_offsets", "equality_ids", "sort_order_id"}) {
            avro_value_t u = member(df, absent);
            none(u);
        }
        d.encode(block);
    }
    const std::vector<std::pair<std::string, std::string>> meta{{"schema", schema_json(schema)},
                                                                {"schema-id", fmt::format("{}", schema.schema_id)},
                                                                {"partition-spec", spec.fields_json()},
                                                                {"partition-spec-id", fmt::format("{}", spec.spec_id)},
                                                                {"format-version", "2"},
                                                                {"content", "data"}};
    return finish(avro_schema, meta, files.size(), block);
}

manifest_file new_manifest_entry(const partition_spec& spec, std::span<const data_file> files,
                                 std::string manifest_path, std::int64_t manifest_length, std::int64_t snapshot_id,
                                 std::int64_t sequence_number) {
    manifest_file m;
    m.manifest_path = std::move(manifest_path);
    m.manifest_length = manifest_length;
    m.partition_spec_id = spec.spec_id;
    m.sequence_number = sequence_number;
    m.min_sequence_number = sequence_number;
    m.added_snapshot_id = snapshot_id;
    m.added_files_count = static_cast<std::int32_t>(files.size());
    for (const auto& f : files) m.added_rows_count += f.record_count;
    std::vector<field_summary> sums;
    for (std::size_t i = 0; i < spec.fields.size(); ++i) {
        const type_id t = spec.fields[i].result_type();
        field_summary s;
        std::optional<value> lo, hi;
        for (const auto& f : files) {
            const value& v = f.partition.at(i);
            if (v.null) {
                s.contains_null = true;
                continue;
            }
            if (!lo || compare(t, v, *lo) < 0) lo = v;
            if (!hi || compare(t, v, *hi) > 0) hi = v;
        }
        if (t == type_id::float_ || t == type_id::double_) s.contains_nan = false;
        if (lo) s.lower_bound = single_value(t, *lo);
        if (hi) s.upper_bound = single_value(t, *hi);
        sums.push_back(std::move(s));
    }
    m.partitions = std::move(sums);
    return m;
}

std::string write_manifest_list(std::int64_t snapshot_id, std::optional<std::int64_t> parent_snapshot_id,
                                std::int64_t sequence_number, std::span<const manifest_file> manifests) {
    const std::string avro_schema = manifest_file_schema();
    avro_datum d{avro_schema};
    std::string block;
    for (const auto& m : manifests) {
        d.reset();
        avro_value_t& r = d.root();
        avro_value_t path = member(r, "manifest_path");
        set_string(path, m.manifest_path);
        set_long(r, "manifest_length", m.manifest_length);
        set_int(r, "partition_spec_id", m.partition_spec_id);
        set_int(r, "content", m.content);
        set_long(r, "sequence_number", m.sequence_number);
        set_long(r, "min_sequence_number", m.min_sequence_number);
        set_long(r, "added_snapshot_id", m.added_snapshot_id);
        set_int(r, "added_files_count", m.added_files_count);
        set_int(r, "existing_files_count", m.existing_files_count);
        set_int(r, "deleted_files_count", m.deleted_files_count);
        set_long(r, "added_rows_count", m.added_rows_count);
        set_long(r, "existing_rows_count", m.existing_rows_count);
        set_long(r, "deleted_rows_count", m.deleted_rows_count);
        avro_value_t pu = member(r, "partitions");
        if (!m.partitions) {
            none(pu);
        } else {
            avro_value_t arr = some(pu);
            for (const auto& s : *m.partitions) {
                avro_value_t e;
                check(avro_value_append(&arr, &e, nullptr));
                avro_value_t cn = member(e, "contains_null");
                check(avro_value_set_boolean(&cn, s.contains_null ? 1 : 0));
                avro_value_t nan = member(e, "contains_nan");
                if (s.contains_nan) {
                    avro_value_t b = some(nan);
                    check(avro_value_set_boolean(&b, *s.contains_nan ? 1 : 0));
                } else {
                    none(nan);
                }
                set_opt_bytes(e, "lower_bound", s.lower_bound);
                set_opt_bytes(e, "upper_bound", s.upper_bound);
            }
        }
        set_opt_bytes(r, "key_metadata", m.key_metadata);
        d.encode(block);
    }
    std::vector<std::pair<std::string, std::string>> meta{{"snapshot-id", fmt::format("{}", snapshot_id)}};
    if (parent_snapshot_id) meta.emplace_back("parent-snapshot-id", fmt::format("{}", *parent_snapshot_id));
    meta.emplace_back("sequence-number", fmt::format("{}", sequence_number));
    meta.emplace_back("format-version", "2");
    return finish(avro_schema, meta, manifests.size(), block);
}

namespace {

manifest_file read_one(avro_value_t& r) {
    manifest_file m;
    avro_value_t v;
    const auto num = [&](const char* name, auto& out) {
        if (!find(r, name, v)) return;
        if (auto p = present(v)) out = static_cast<std::remove_reference_t<decltype(out)>>(get_long(*p));
    };
    if (!find(r, "manifest_path", v)) throw std::runtime_error{"a manifest_file has no manifest_path"};
    m.manifest_path = get_bytes(v);
    num("manifest_length", m.manifest_length);
    num("partition_spec_id", m.partition_spec_id);
    num("content", m.content);
    num("sequence_number", m.sequence_number);
    num("min_sequence_number", m.min_sequence_number);
    num("added_snapshot_id", m.added_snapshot_id);
    num("added_files_count", m.added_files_count);  // v1: added_data_files_count is the same id
    num("added_data_files_count", m.added_files_count);
    num("existing_files_count", m.existing_files_count);
    num("existing_data_files_count", m.existing_files_count);
    num("deleted_files_count", m.deleted_files_count);
    num("deleted_data_files_count", m.deleted_files_count);
    num("added_rows_count", m.added_rows_count);
    num("existing_rows_count", m.existing_rows_count);
    num("deleted_rows_count", m.deleted_rows_count);
    if (find(r, "partitions", v))
        if (auto arr = present(v)) {
            std::size_t n = 0;
            check(avro_value_get_size(&*arr, &n));
            std::vector<field_summary> sums;
            for (std::size_t i = 0; i < n; ++i) {
                avro_value_t e, f;
                check(avro_value_get_by_index(&*arr, i, &e, nullptr));
                field_summary s;
                if (find(e, "contains_null", f)) s.contains_null = get_bool(f);
                if (find(e, "contains_nan", f))
                    if (auto b = present(f)) s.contains_nan = get_bool(*b);
                if (find(e, "lower_bound", f))
                    if (auto b = present(f)) s.lower_bound = get_bytes(*b);
                if (find(e, "upper_bound", f))
                    if (auto b = present(f)) s.upper_bound = get_bytes(*b);
                sums.push_back(std::move(s));
            }
            m.partitions = std::move(sums);
        }
    if (find(r, "key_metadata", v))
        if (auto b = present(v)) m.key_metadata = get_bytes(*b);
    return m;
}

manifest_entry_view read_entry(avro_value_t& r) {
    manifest_entry_view e;
    avro_value_t v, f, df;
    if (!find(r, "status", v)) throw std::runtime_error{"a manifest_entry has no status"};
    e.status = static_cast<std::int32_t>(get_long(v));
    if (!find(r, "data_file", df)) throw std::runtime_error{"a manifest_entry has no data_file"};
    if (find(df, "content", f)) e.content = static_cast<std::int32_t>(get_long(f));
    if (!find(df, "file_path", f)) throw std::runtime_error{"a data_file has no file_path"};
    e.file_path = get_bytes(f);
    if (find(df, "record_count", f)) e.record_count = get_long(f);
    return e;
}

/// Every datum of an Avro container file, each read by `one` (a record of the writer's schema).
template <class T, class Fn>
result<std::vector<T>> read_datums(std::string_view bytes, const char* what, Fn one) {
    auto f = ocf::read(bytes);
    if (!f) return error{errc::bad_avro, f.error().detail()};
    const std::string_view schema = f->metadata_value("avro.schema");
    if (schema.empty()) return error{errc::bad_avro, "the file has no avro.schema"};
    std::vector<T> out;
    try {
        avro_datum d{schema};
        avro_reader_t reader = avro_reader_memory(f->datums.data(), static_cast<int64_t>(f->datums.size()));
        struct closer {
            avro_reader_t r;
            ~closer() { avro_reader_free(r); }
        } close{reader};
        for (std::uint64_t i = 0; i < f->count; ++i) {
            d.reset();
            if (!d.read(reader)) return error{errc::bad_avro, fmt::format("{} {} does not decode", what, i)};
            out.push_back(one(d.root()));
        }
    } catch (const std::exception& e) {
        return error{errc::bad_avro, e.what()};
    }
    return out;
}

}  // namespace

result<std::vector<manifest_file>> read_manifest_list(std::string_view bytes) {
    return read_datums<manifest_file>(bytes, "manifest_file", [](avro_value_t& r) { return read_one(r); });
}

result<std::vector<manifest_entry_view>> read_manifest(std::string_view bytes) {
    return read_datums<manifest_entry_view>(bytes, "manifest_entry", [](avro_value_t& r) { return read_entry(r); });
}

}  // namespace iss::iceberg
