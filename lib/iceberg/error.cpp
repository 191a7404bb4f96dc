// SPDX-License-Identifier: Apache-2.0
#include "iceberg/error.hpp"

namespace iss::iceberg {

namespace {
const char* iceberg_message(int ev) noexcept {
    switch (static_cast<errc>(ev)) {
        case errc::bad_partition_spec: return "invalid partition transform (check iceberg.partition_by)";
        case errc::bad_metadata: return "table metadata from the catalog cannot be read";
        case errc::bad_avro: return "manifest list is not a readable Avro file";
        case errc::unsupported_type: return "column type has no Iceberg type (check format.schema)";
        case errc::overlap:
            return "a data file overlaps the offsets the table already holds (committing it would duplicate rows)";
        case errc::bad_batch: return "a data file in the batch is not below its partition's commit point";
    }
    return nullptr;
}
}  // namespace

const boost::system::error_category& iceberg_category() noexcept {
    static const simple_category cat{"iceberg", iceberg_message};
    return cat;
}

}  // namespace iss::iceberg
