// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Errors of the iceberg module (docs/architecture.md §8.4.1).

#include "common/error.hpp"

namespace iss::iceberg {

enum class errc {
    bad_partition_spec = 1,  ///< an `iceberg.partition_by` entry cannot be used (the detail says why)
    bad_metadata,            ///< table metadata or a snapshot summary from the catalog cannot be read
    bad_avro,                ///< a manifest list read back is not an Avro file we can read
    unsupported_type,        ///< a column type has no Iceberg type here (timestamp_ms)
    overlap,    ///< a data file straddles the offset the table already holds: committing it would duplicate
    bad_batch,  ///< a batch holds a file at or past its partition's commit point (a caller's bug)
};

const boost::system::error_category& iceberg_category() noexcept;
inline error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), iceberg_category()}; }

}  // namespace iss::iceberg

namespace boost::system {
template <>
struct is_error_code_enum<iss::iceberg::errc> : std::true_type {};
}  // namespace boost::system
