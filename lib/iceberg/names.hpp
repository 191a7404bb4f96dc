// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Names of a table and where its data files go: `iceberg.table` rendered for a source topic,
/// `iceberg.namespace` split into levels, a table location split into bucket and key prefix,
/// and a data file's object key under it (spec "Table Location Specification": data files
/// go under `<location>/data/`).

#include "common/error.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace iss::iceberg {

/// `iceberg.table` with `{stream}` and `{topic}` replaced (other text kept as is).
[[nodiscard]] std::string table_name(std::string_view tmpl, std::string_view stream, std::string_view topic);

/// `a.b.c` -> {"a", "b", "c"} (the REST identifier's namespace levels).
[[nodiscard]] std::vector<std::string> namespace_levels(std::string_view ns);

/// A table location in S3: the bucket and the key prefix (no leading or trailing `/`).
struct s3_location {
    std::string bucket;
    std::string prefix;
};
/// Splits `s3://bucket/path/to/table` (also `s3a://`, `s3n://`); common::errc::parse_error
/// naming the location when it is not an S3 URI with a bucket.
[[nodiscard]] result<s3_location> split_location(std::string_view location);

/// The object key of a data file: `<prefix>/data/<partition path>/<file name>` (no partition
/// path segment for an unpartitioned table).
[[nodiscard]] std::string data_key(const s3_location& table, std::string_view partition_path,
                                   std::string_view file_name);

}  // namespace iss::iceberg
