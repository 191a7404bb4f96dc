// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The Parquet writer's shared model (lib/format/parquet.cpp encodes, parquet_metadata.cpp
/// writes the footer): parquet.thrift's enum values, the per-leaf-column buffers of the
/// current row group, and the metadata kept per finished column chunk and row group. Written
/// from the Parquet format specification (apache/parquet-format: parquet.thrift,
/// LogicalTypes.md). Internal to lib/format.

#include "format/table.hpp"

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace iss::format::parquet_detail {

// parquet.thrift enum values.
enum class ptype : std::int32_t { boolean = 0, int32 = 1, int64 = 2, float32 = 4, float64 = 5, byte_array = 6 };
enum class repetition : std::int32_t { required = 0, optional = 1, repeated = 2 };
constexpr std::int32_t enc_plain = 0, enc_rle = 3, enc_rle_dictionary = 8;
constexpr std::int32_t page_data = 0, page_dictionary = 2;
// ConvertedType
constexpr std::int32_t ct_utf8 = 0, ct_map = 1, ct_date = 6, ct_ts_millis = 9, ct_ts_micros = 10, ct_json = 19;

/// Appends `v` in little-endian byte order (little-endian hosts only, as proto/).
template <class T>
void put_le(std::string& out, T v) {
    char b[sizeof v];
    std::memcpy(b, &v, sizeof v);
    out.append(b, sizeof v);
}

/// The statistics of one column chunk, as encoded min/max values.
struct stats {
    std::int64_t nulls = 0;
    bool any = false;
    std::int64_t imin = 0, imax = 0;
    double dmin = 0, dmax = 0;
    std::string smin, smax;
    bool strings_ok = true;  ///< false once a value is too long to keep as a bound
};

constexpr std::size_t max_stat_bytes = 256;

struct leaf {
    std::vector<std::string> path;  ///< path_in_schema
    ptype type = ptype::byte_array;
    column_type logical = column_type::string;
    unsigned max_def = 0, max_rep = 0;
    std::vector<std::uint8_t> defs, reps;  ///< one per level entry (only when max_* > 0)
    std::size_t entries = 0;               ///< level entries (values + nulls + empty maps)
    std::string fixed;                     ///< PLAIN fixed-width values (booleans: one byte each)
    std::string bytes;                     ///< byte-array values, concatenated
    std::vector<std::uint32_t> ends;       ///< end of each byte-array value in `bytes`
    // Dictionary of a byte-array column while it stays small.
    bool dict_on = true;
    std::unordered_map<std::string, std::uint32_t> dict;
    std::vector<const std::string*> dict_order;
    std::uint64_t dict_bytes = 0;
    std::vector<std::uint32_t> indices;
    stats st;

    [[nodiscard]] std::size_t values() const {
        return type == ptype::byte_array ? ends.size() : fixed.size() / width();
    }
    [[nodiscard]] std::size_t width() const {
        switch (type) {
            case ptype::boolean: return 1;
            case ptype::int32:
            case ptype::float32: return 4;
            default: return 8;
        }
    }
    [[nodiscard]] std::string_view value(std::size_t k) const {
        const std::uint32_t b = k == 0 ? 0 : ends[k - 1];
        return std::string_view{bytes}.substr(b, ends[k] - b);
    }
    void clear() {
        defs.clear();
        reps.clear();
        entries = 0;
        fixed.clear();
        bytes.clear();
        ends.clear();
        dict_on = true;
        dict.clear();
        dict_order.clear();
        dict_bytes = 0;
        indices.clear();
        st = {};
    }
};

/// A finished column chunk's footer metadata.
struct chunk_meta {
    std::int32_t type = 0;
    std::vector<std::int32_t> encodings;
    const std::vector<std::string>* path = nullptr;
    std::int64_t num_values = 0;
    std::int64_t uncompressed = 0;
    std::int64_t compressed = 0;
    std::int64_t data_page_offset = 0;
    std::optional<std::int64_t> dictionary_page_offset;
    stats st;
    ptype pt = ptype::byte_array;
};

struct row_group_meta {
    std::vector<chunk_meta> chunks;
    std::int64_t num_rows = 0;
    std::int64_t total_byte_size = 0;
    std::int64_t total_compressed = 0;
    std::int64_t file_offset = 0;
};

/// Appends the FileMetaData (Thrift compact protocol) of a file with columns `cols` (leaf
/// columns `leaves`; `leaf_of`: column -> its first leaf) and the row groups `groups`:
/// schema, row count, per-chunk column metadata with statistics, `o.created_by`, and one
/// TYPE_ORDER column order per leaf.
void write_file_metadata(std::string& out, const std::vector<column>& cols, const std::vector<leaf>& leaves,
                         const std::vector<std::size_t>& leaf_of, const std::vector<row_group_meta>& groups,
                         const parquet_options& o);

}  // namespace iss::format::parquet_detail
