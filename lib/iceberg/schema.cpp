// SPDX-License-Identifier: Apache-2.0
#include "iceberg/schema.hpp"

#include "format/json.hpp"
#include "iceberg/error.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace iss::iceberg {

std::string_view type_name(type_id t) noexcept {
    switch (t) {
        case type_id::boolean: return "boolean";
        case type_id::int_: return "int";
        case type_id::long_: return "long";
        case type_id::float_: return "float";
        case type_id::double_: return "double";
        case type_id::date: return "date";
        case type_id::timestamptz: return "timestamptz";
        case type_id::string: return "string";
        case type_id::binary: return "binary";
        case type_id::map: return "map";
    }
    return "string";
}

int table_schema::last_column_id() const noexcept {
    int m = 0;
    for (const auto& f : fields) m = std::max({m, f.id, f.key_id, f.value_id});
    return m;
}

const field* table_schema::find(std::string_view name) const noexcept {
    for (const auto& f : fields)
        if (f.name == name) return &f;
    return nullptr;
}

std::optional<type_id> iceberg_type(format::column_type t) noexcept {
    using ct = format::column_type;
    switch (t) {
        case ct::string:
        case ct::json: return type_id::string;
        case ct::int32: return type_id::int_;
        case ct::int64: return type_id::long_;
        case ct::float32: return type_id::float_;
        case ct::float64: return type_id::double_;
        case ct::boolean: return type_id::boolean;
        case ct::timestamp_us: return type_id::timestamptz;
        case ct::date: return type_id::date;
        case ct::binary: return type_id::binary;
        case ct::map: return type_id::map;
        case ct::timestamp_ms: return std::nullopt;
    }
    return std::nullopt;
}

std::vector<std::string> unsupported_columns(std::span<const format::column> cols) {
    std::vector<std::string> out;
    for (const auto& c : cols)
        if (!iceberg_type(c.type))
            out.push_back(
                fmt::format("column `{}`: type {} has no Iceberg type (Iceberg timestamps are microseconds); "
                            "use timestamp_us",
                            c.name, format::to_string(c.type)));
    return out;
}

result<table_schema> make_schema(std::span<const format::column> cols) {
    table_schema s;
    int next = static_cast<int>(cols.size()) + 1;
    int id = 1;
    for (const auto& c : cols) {
        const auto t = iceberg_type(c.type);
        if (!t) return error{errc::unsupported_type, unsupported_columns(std::span{&c, 1}).front()};
        field f{id++, c.name, *t, !c.nullable, 0, 0, c.type};
        if (*t == type_id::map) {
            f.key_id = next++;
            f.value_id = next++;
        }
        s.fields.push_back(std::move(f));
    }
    return s;
}

std::string schema_json(const table_schema& s) {
    std::string out = fmt::format(R"({{"type":"struct","schema-id":{},"fields":[)", s.schema_id);
    for (std::size_t i = 0; i < s.fields.size(); ++i) {
        const auto& f = s.fields[i];
        if (i > 0) out += ',';
        out += fmt::format(R"({{"id":{},"name":)", f.id);
        format::json::append_string(out, f.name);
        out += fmt::format(R"(,"required":{},"type":)", f.required ? "true" : "false");
        if (f.type == type_id::map)
            out += fmt::format(R"({{"type":"map","key-id":{},"key":"string","value-id":{},"value-required":false,)"
                               R"("value":"string"}})",
                               f.key_id, f.value_id);
        else out += fmt::format(R"("{}")", type_name(f.type));
        out += '}';
    }
    out += "]}";
    return out;
}

std::vector<format::parquet_field_id> parquet_field_ids(const table_schema& s) {
    std::vector<format::parquet_field_id> out;
    for (const auto& f : s.fields) out.push_back({f.id, f.key_id, f.value_id});
    return out;
}

std::string_view parquet_codec_name(format::parquet_codec c) noexcept {
    switch (c) {
        case format::parquet_codec::none: return "uncompressed";
        case format::parquet_codec::snappy: return "snappy";
        case format::parquet_codec::gzip: return "gzip";
        case format::parquet_codec::zstd: return "zstd";
    }
    return "uncompressed";
}

}  // namespace iss::iceberg
