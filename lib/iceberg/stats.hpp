// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Column statistics of one data file, gathered row by row as the object is written, for the
/// manifest's `value_counts`, `null_value_counts`, `lower_bounds` and `upper_bounds` (Iceberg
/// spec, "Data File Fields"; bounds in Appendix D's single-value serialization).
///
/// Cheap: one comparison per cell. Kept for the primitive columns (not the headers map).
/// String and binary bounds are cut to 16 bytes as the reference implementation's default
/// metrics mode `truncate(16)` does: the lower bound is the prefix (at a code point boundary
/// for strings), the upper bound the prefix with its last byte incremented (dropped when
/// every byte is 0xFF, or for a string whose prefix would then not be UTF-8).

#include "format/schema.hpp"
#include "iceberg/partition.hpp"
#include "iceberg/schema.hpp"

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace iss::iceberg {

/// Per field id (the manifest's `data_file` fields 108-111, 125, 126).
struct column_stats {
    std::map<int, std::int64_t> column_sizes;  ///< bytes stored per leaf column (Parquet column chunks)
    std::map<int, std::int64_t> value_counts;
    std::map<int, std::int64_t> null_value_counts;
    std::map<int, std::int64_t> nan_value_counts;  ///< float and double columns only
    std::map<int, std::string> lower_bounds;       ///< single-value serialization
    std::map<int, std::string> upper_bounds;
    friend bool operator==(const column_stats&, const column_stats&) = default;
};

/// Gathers `column_stats` over the rows of one data file. Not thread-safe; `reset` for the next file.
class stats_collector {
public:
    explicit stats_collector(const table_schema& schema);
    /// One row, cells in column order (as `format::row_reader` gives them).
    void add(std::span<const format::cell> row);
    [[nodiscard]] column_stats stats() const;
    void reset();
    /// Adds `column_sizes` from the bytes the Parquet writer stored per leaf column
    /// (`format::writer::column_bytes()`, leaves in schema order: a column's, or a map's key
    /// then value), keyed by the leaf's field id (a map's `key_id`, `value_id`). A count that
    /// does not match the schema's leaves adds nothing.
    void add_column_sizes(column_stats& s, std::span<const std::int64_t> leaf_bytes) const;

private:
    struct column {
        std::int64_t values = 0;
        std::int64_t nulls = 0;
        std::int64_t nans = 0;
        std::optional<value> min, max;
    };
    std::vector<field> fields_;
    std::vector<column> cols_;
};

/// Orders two non-null values of type `t` (signed integers, IEEE numbers with -0.0 before
/// +0.0, unsigned bytes for string and binary): <0, 0, >0.
[[nodiscard]] int compare(type_id t, const value& a, const value& b) noexcept;

}  // namespace iss::iceberg
