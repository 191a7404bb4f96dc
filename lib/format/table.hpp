// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The typed formats (Parquet, Avro, CSV) behind one interface: rows of cells
/// (`schema.hpp`'s `row_reader`) in, the bytes of ONE object out. Each is behind
/// `format::record_writer` (writer.hpp) with a `row_reader` in front (record_writers.cpp).
///
/// Bytes are deterministic: the same rows give the same object, byte for byte (no clock, no
/// randomness), so a replay after a crash writes the same object.

#include "format/schema.hpp"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace iss::format {

/// One object at a time; reusable (`begin` after `finish`). Not thread-safe.
class table_writer {
public:
    virtual ~table_writer() = default;
    /// Starts an object (Parquet: `PAR1`; Avro: the container header; CSV: the header row).
    virtual void begin(std::string& out) = 0;
    /// Appends one row (cells in column order, already checked against the schema). Output
    /// may lag: Parquet appends a whole row group once it is full, Avro a block.
    virtual void append(std::span<const cell> row, std::string& out) = 0;
    /// Appends what is buffered and the format's trailer (Parquet: the footer).
    virtual void finish(std::string& out) = 0;
    /// Bytes held for the object and not yet appended to `out` (an estimate of what they
    /// will encode to: the uncompressed size), for rotation by size.
    [[nodiscard]] virtual std::uint64_t buffered_bytes() const noexcept = 0;
    /// After `finish`: per leaf column (Parquet's leaves in schema order: a column, or a map's
    /// key then value), the bytes of its column chunks as stored (`total_compressed_size`:
    /// page headers and compressed pages, summed over the row groups; Iceberg's
    /// `column_sizes`). Empty for formats that do not store columns apart (CSV, Avro).
    [[nodiscard]] virtual std::vector<std::int64_t> column_bytes() const { return {}; }
};

/// Parquet's page compression (`format.parquet.compression`).
enum class parquet_codec : std::uint8_t { none, snappy, gzip, zstd };

/// A column's Iceberg field ids (Iceberg spec, Appendix A "Parquet": column ids are stored
/// as the schema elements' `field_id`): `id` on the column; a map column's `key_id` and
/// `value_id` on its key and value (its repeated `key_value` group has none).
struct parquet_field_id {
    std::int32_t id = 0;
    std::int32_t key_id = 0;
    std::int32_t value_id = 0;
    friend bool operator==(const parquet_field_id&, const parquet_field_id&) = default;
};

struct parquet_options {
    parquet_codec codec = parquet_codec::snappy;
    std::uint64_t row_group_size = 64ull << 20;       ///< uncompressed bytes buffered before a row group is written
    std::uint64_t page_size = 1ull << 20;             ///< uncompressed values per data page (about)
    std::uint64_t dictionary_max_bytes = 1ull << 20;  ///< a string column's dictionary beyond this falls back to plain
    std::uint32_t dictionary_max_values = 65'536;     ///< ... or beyond this many distinct values
    int level = 0;                                    ///< zstd/gzip level; 0: the codec's default (zstd 3, gzip 6)
    std::string created_by = "iggy-s3-sink";          ///< the footer's `created_by`
    /// One per column, in order (lib/iceberg's `parquet_field_ids`); empty: no field ids.
    std::vector<parquet_field_id> field_ids;
};

/// A Parquet writer (parquet.cpp).
[[nodiscard]] std::unique_ptr<table_writer> make_parquet_writer(std::vector<column> cols, parquet_options o);

struct csv_options {
    char delimiter = ',';
    std::string null_text;  ///< how a null is written (default empty; an empty string is then `""`)
};
/// An RFC 4180 CSV writer (csv.cpp).
[[nodiscard]] std::unique_ptr<table_writer> make_csv_writer(std::vector<column> cols, csv_options o);

/// Avro's block codec (`format.avro.codec`).
enum class avro_codec : std::uint8_t { null, deflate, snappy };
struct avro_options {
    avro_codec codec = avro_codec::null;
    std::uint64_t block_size = 1ull << 20;  ///< uncompressed bytes per block (about)
};
/// An Avro object container writer (avro.cpp).
[[nodiscard]] std::unique_ptr<table_writer> make_avro_writer(std::vector<column> cols, avro_options o);

}  // namespace iss::format
