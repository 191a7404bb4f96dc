// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The `key_namer` of an Iceberg table (lib/iceberg/README.md, "Object keys: one partition
/// value per object"): a record's row (format::row_reader over the format's columns) gives its
/// partition value (`partition_spec::values`); the encoded partition is the value's path
/// (`ts_day=2026-12-07/tenant=a`), so records of another value go to another open object; the
/// key is `<table prefix>/data/<path>/<stream>+<topic>+<partition>+<first offset:020>.parquet`
/// (iceberg::data_key). A replay renders the same key: the values come from the message alone.
/// Time transforms are in UTC (Iceberg's rule), whatever `naming.timezone` says.
///
/// The partition value of each key made is kept (`values_of`) for the table step's plan (a
/// data file's `partition`), until `forget`.
///
/// Event-loop thread only (the reader keeps parse buffers).

#include "format/schema.hpp"
#include "iceberg/names.hpp"
#include "iceberg/partition.hpp"
#include "pipeline/ports.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace iss::pipeline {

class iceberg_key_namer final : public key_namer {
public:
    /// \param cols the format's effective columns (the table schema's, in order)
    /// \param spec the table's partition spec (outlives the namer)
    /// \param table the table location's bucket and prefix (iceberg::split_location)
    iceberg_key_namer(std::vector<format::column> cols, const iceberg::partition_spec& spec,
                      iceberg::s3_location table);

    /// The key of an unpartitioned object (no partition path).
    [[nodiscard]] object_key key(const partition_ref& p, std::uint64_t first_offset) const override;
    /// The record's partition path; a row that cannot be read is a bad message (the error
    /// names the column and the offset).
    [[nodiscard]] result<encoded_partition> encode(const partition_ref& p, const message& m) const override;
    [[nodiscard]] object_key key_for(const partition_ref& p, const message& first) const override;
    [[nodiscard]] bool record_dependent() const override { return !spec_.fields.empty(); }

    /// The partition value of an object this namer named (empty for an unpartitioned table);
    /// nullopt for a key it did not make.
    [[nodiscard]] std::optional<std::vector<iceberg::value>> values_of(const object_key& k) const;
    /// Drops a key's partition value (its data file is in the table).
    void forget(const object_key& k) { values_.erase(k.get()); }

private:
    result<std::vector<iceberg::value>> row_values(const partition_ref& p, const message& m) const;
    [[nodiscard]] std::string file_name(const partition_ref& p, std::uint64_t first_offset) const;

    const iceberg::partition_spec& spec_;
    iceberg::s3_location table_;
    mutable format::row_reader reader_;
    mutable std::map<std::string, std::vector<iceberg::value>> values_;
};

}  // namespace iss::pipeline
