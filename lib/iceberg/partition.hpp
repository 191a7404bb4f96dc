// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The table's partition spec from `iceberg.partition_by` (Iceberg spec, "Partitioning",
/// "Partition Transforms", Appendix B "32-bit Hash Requirements", Appendix C "Partition
/// Specs", Appendix D "Single-value serialization").
///
/// `partition_by` entries: `identity(c)`, `year(c)`, `month(c)`, `day(c)`, `hour(c)`,
/// `bucket(N, c)`, `truncate(W, c)`, over the columns of `format.schema`:
///
/// | transform | source types | result | partition field name |
/// | --- | --- | --- | --- |
/// | identity | any but map | the source type | `c` |
/// | year, month | date, timestamptz | int (years / months since 1970) | `c_year`, `c_month` |
/// | day | date, timestamptz | date | `c_day` |
/// | hour | timestamptz | int (hours since the epoch) | `c_hour` |
/// | bucket[N] | int, long, date, timestamptz, string, binary | int: `(murmur3_x86_32(x) & INT_MAX) % N` | `c_bucket` |
/// | truncate[W] | int, long (`v - (((v % W) + W) % W)`), string (W code points), binary (W bytes) | the source type | `c_trunc` |
///
/// Partition field ids start at 1000 (spec-id 0). A record's partition value is one value per
/// field; the path of a data file is `name=value/...` with the values in the reference
/// implementation's human form (`ts_day=2026-12-07/tenant=a`, `ts_hour=2026-12-07-10`,
/// `ts_month=2026-12`, null as `null`), names and values URL-encoded as Java's
/// URLEncoder does (space `+`, bytes outside `A-Za-z0-9.-*_` as `%XX`).
///
/// Each data file holds one partition value: the pipeline puts `partition_spec::path` of a
/// record into the object key (lib/iceberg/README.md, "Object keys"), so records of another
/// value go to another open object, as `{field:...}` placeholders split objects today.

#include "common/error.hpp"
#include "format/schema.hpp"
#include "iceberg/schema.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace iss::iceberg {

/// One value of an Iceberg type: `i` for boolean (0/1), int, long, date (days),
/// timestamptz (µs); `d` for float and double; `s` for string (UTF-8) and binary.
struct value {
    bool null = true;
    std::int64_t i = 0;
    double d = 0;
    std::string s;
    friend bool operator==(const value&, const value&) = default;
    static value of_int(std::int64_t v) { return value{false, v, 0, {}}; }
    static value of_bytes(std::string v) { return value{false, 0, 0, std::move(v)}; }
};

/// The value of a row cell (lib/format/schema.hpp) in its column's Iceberg type.
[[nodiscard]] value from_cell(const format::cell& c);

enum class transform : std::uint8_t { identity, year, month, day, hour, bucket, truncate };

/// One partition field.
struct partition_field {
    std::string name;
    iceberg::transform transform = transform::identity;
    int param = 0;           ///< N of bucket, W of truncate
    int source_id = 0;       ///< the schema field id
    std::size_t column = 0;  ///< the source column's index in a row
    type_id source_type = type_id::string;
    int field_id = 1000;
    /// The Iceberg type of the partition value (the table above).
    [[nodiscard]] type_id result_type() const noexcept;
    /// The spec's transform text: `identity`, `day`, `bucket[16]`, `truncate[4]`.
    [[nodiscard]] std::string transform_text() const;
};

/// A partition spec (spec-id 0; unpartitioned when `fields` is empty).
struct partition_spec {
    int spec_id = 0;
    std::vector<partition_field> fields;

    /// The partition value of a row (cells in column order, as `format::row_reader` gives them).
    [[nodiscard]] std::vector<value> values(std::span<const format::cell> row) const;
    /// The data file path under `data/` for a partition value (see the file comment); empty
    /// for an unpartitioned table. \pre `v.size() == fields.size()`.
    [[nodiscard]] std::string path(std::span<const value> v) const;
    /// Appendix C: `{"spec-id":0,"fields":[{"name":..,"transform":..,"source-id":..,"field-id":..}]}`.
    [[nodiscard]] std::string json() const;
    /// Only the fields array (a manifest's `partition-spec` metadata).
    [[nodiscard]] std::string fields_json() const;
    /// The highest partition field id (999 when unpartitioned: the metadata's `last-partition-id`).
    [[nodiscard]] int last_partition_id() const noexcept;
};

/// Every problem of `partition_by` against the columns (one sentence each, naming the entry
/// and, for an unknown transform or column, the accepted ones); empty when it is valid.
/// `unchecked`: names of columns left out of `cols` because they have problems of their own
/// (check-config lists those): an entry on one is checked for its syntax only.
[[nodiscard]] std::vector<std::string> check_partition_by(std::span<const std::string> entries,
                                                          std::span<const format::column> cols,
                                                          std::span<const std::string> unchecked = {});

/// The spec of `partition_by` over `schema`; errc::bad_partition_spec with the problems of
/// `check_partition_by` joined by "; ".
[[nodiscard]] result<partition_spec> parse_partition_by(std::span<const std::string> entries,
                                                        const table_schema& schema);

/// 32-bit Murmur3, x86 variant, seed 0, as a signed int (Appendix B).
[[nodiscard]] std::int32_t murmur3_x86_32(std::string_view bytes) noexcept;
/// Appendix B's hash of a value of type `t` (int, long, date, timestamptz as a long's 8
/// little-endian bytes; string, binary as their bytes). \pre `t` is bucketable, `!v.null`.
[[nodiscard]] std::int32_t bucket_hash(type_id t, const value& v) noexcept;
/// A transform applied to a value of the field's source type (null stays null).
[[nodiscard]] value apply(const partition_field& f, const value& v);
/// Appendix D: the binary single-value serialization of `v` as type `t` (int, date: 4 bytes
/// LE; long, timestamptz: 8 bytes LE; float 4, double 8 bytes LE IEEE 754; boolean one byte;
/// string and binary: the bytes). \pre `!v.null`, `t` is not map.
[[nodiscard]] std::string single_value(type_id t, const value& v);
/// The reference implementation's human string of a partition value (`2026-12-07`, `2026-12`,
/// `2026-12-07-10`, `2026`, `null`; binary as base64).
[[nodiscard]] std::string human_string(const partition_field& f, const value& v);

}  // namespace iss::iceberg
