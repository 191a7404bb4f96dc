// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The table's Iceberg schema, made from `format.schema` (lib/format/schema.hpp): one Iceberg
/// field per column, field ids assigned as a REST catalog assigns them on create (the
/// columns 1..n in order, then the key and value ids of each map column, n+1, n+2, ...),
/// so the ids we write into Parquet and the manifests are the ones the created table has.
///
/// Types (Iceberg spec, "Schemas and Data Types"; Appendix A for the Parquet and Avro side):
///
/// | format.schema type | Iceberg type |
/// | --- | --- |
/// | string, json | string |
/// | int32 / int64 | int / long |
/// | float / double | float / double |
/// | boolean | boolean |
/// | timestamp_us | timestamptz (µs since the epoch, UTC) |
/// | date | date |
/// | binary | binary |
/// | map (the envelope's headers) | map<string, string> (values optional) |
///
/// `timestamp_ms` has no Iceberg type (Iceberg timestamps are microseconds, and a Parquet
/// TIMESTAMP(MILLIS) column is not a valid Iceberg column): config validation refuses it
/// when `iceberg` is set (`unsupported_columns`).

#include "common/error.hpp"
#include "format/schema.hpp"
#include "format/table.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace iss::iceberg {

/// Iceberg primitive types we write, plus `map` (string -> string).
enum class type_id : std::uint8_t { boolean, int_, long_, float_, double_, date, timestamptz, string, binary, map };

/// The spec's JSON type name (`"int"`, `"timestamptz"`; `"map"` for a map).
[[nodiscard]] std::string_view type_name(type_id t) noexcept;

/// One top-level field.
struct field {
    int id = 0;
    std::string name;
    type_id type = type_id::string;
    bool required = false;
    int key_id = 0;    ///< map only: the key's field id
    int value_id = 0;  ///< map only: the value's field id (the value is optional)
    format::column_type column = format::column_type::string;  ///< the format column it came from
};

/// A schema: fields in column order (field i is column i of the row).
struct table_schema {
    int schema_id = 0;
    std::vector<field> fields;
    /// The highest field id used (the table metadata's `last-column-id`).
    [[nodiscard]] int last_column_id() const noexcept;
    /// The field of a column name; nullptr when there is none.
    [[nodiscard]] const field* find(std::string_view name) const noexcept;
};

/// The Iceberg type of a format column; nullopt for `timestamp_ms`.
[[nodiscard]] std::optional<type_id> iceberg_type(format::column_type t) noexcept;

/// One sentence per column whose type has no Iceberg type (naming the column and what to use
/// instead); empty when every column maps. For config validation.
[[nodiscard]] std::vector<std::string> unsupported_columns(std::span<const format::column> cols);

/// The schema of `cols` (ids as the file comment says). errc::unsupported_type naming the
/// column when one has no Iceberg type.
[[nodiscard]] result<table_schema> make_schema(std::span<const format::column> cols);

/// The schema as JSON (spec Appendix C, "Schemas"): `{"type":"struct","schema-id":0,
/// "fields":[{"id":1,"name":"a","required":false,"type":"string"}, ...]}`; a map field's
/// type is `{"type":"map","key-id":..,"key":"string","value-id":..,"value-required":false,
/// "value":"string"}`. For the manifest's `schema` metadata and the create-table request.
[[nodiscard]] std::string schema_json(const table_schema& s);

/// The field ids for the Parquet writer (`format::parquet_options::field_ids`), one per
/// column in order: the data files then carry the ids the table's schema gives (Iceberg spec,
/// Appendix A "Parquet": column ids are required as the schema's field ids).
[[nodiscard]] std::vector<format::parquet_field_id> parquet_field_ids(const table_schema& s);

/// The table property naming the Parquet codec of new data files (Iceberg "Table properties",
/// write properties; the reference implementation's default is zstd).
inline constexpr std::string_view parquet_codec_property = "write.parquet.compression-codec";
/// Its value for the codec our data files are written with (`format.parquet.compression`):
/// `snappy`, `zstd`, `gzip`, `uncompressed`.
[[nodiscard]] std::string_view parquet_codec_name(format::parquet_codec c) noexcept;

}  // namespace iss::iceberg
