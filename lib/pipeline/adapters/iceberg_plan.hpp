// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The real plan of a table step batch: lib/iceberg/commit.hpp's `plan_commit` and `decide`
/// behind the commit loop's `batch_plan` (lib/iceberg/catalog_commit.hpp), with the table's
/// metadata files read and written through the S3 client.
///
/// - `build(base)`: reads `base` (parse_table_metadata), the parent's manifest list from the
///   store (so the new list carries the parent's manifests forward), the size of each data
///   file the batch does not know (an adopted object: HEAD), and plans the commit: the
///   manifest and manifest list to write (deterministic names and bytes per parent) and the
///   CommitTableRequest.
/// - `covered_by(table)`: `decide` on the reloaded table: done (the attempted snapshot is on
///   main, or the summary's offsets cover every file), rebuild (only with the files the table
///   does not hold yet: kept for the next `build`), or overlap (an error naming the file).
///
/// Partition values: the batch's files carry the values their objects were written with
/// (`iceberg_data_file`); an unpartitioned table has none.

#include "iceberg/catalog_commit.hpp"
#include "iceberg/commit.hpp"
#include "pipeline/ports.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace iss::s3 {
class client;
}

namespace iss::pipeline {

/// `s3://bucket/key` (or `s3a://`, `s3n://`) split; errors name the location.
[[nodiscard]] result<std::pair<std::string, std::string>> split_s3_location(std::string_view location);

/// The table's files in the store: metadata written once (a 412 on a name the same plan wrote
/// before is success: same name, same bytes), the parent's manifest list read, sizes by HEAD.
class s3_table_files final : public iceberg::metadata_writer {
public:
    explicit s3_table_files(s3::client& c) : c_{c} {}
    task<result<void>> put(iceberg::metadata_file f) override;
    task<result<std::string>> get(std::string location);
    task<result<std::uint64_t>> size(std::string location);

private:
    s3::client& c_;
};

/// A durable object as a data file of the batch (`s3://bucket/key`, its record count and size,
/// the column statistics its encoder gathered (`iceberg_object_stats`; none for an adopted
/// object: the manifest's maps are then null)).
/// The batch's commit points are `iceberg_batch::next_offsets` (`iceberg_offsets`).
[[nodiscard]] iceberg::pending_file iceberg_data_file(const durable_object& o, std::string_view bucket,
                                                      std::vector<iceberg::value> partition = {});

/// The batch's commit points in lib/iceberg's form.
[[nodiscard]] iceberg::offset_map iceberg_offsets(const std::map<partition_ref, std::uint64_t>& next);

class iceberg_batch_plan final : public iceberg::batch_plan {
public:
    /// \param schema, spec the table's, as the daemon made them from format.schema and
    ///        iceberg.partition_by (outlive the plan)
    iceberg_batch_plan(const iceberg::table_schema& schema, const iceberg::partition_spec& spec, s3_table_files& store,
                       const iss::clock& clk, iceberg::table_ident table, std::vector<iceberg::pending_file> files,
                       iceberg::offset_map next_offsets, iceberg::topic_created_map topics_created = {});
    task<result<iceberg::built_commit>> build(const iceberg::loaded_table& base) override;
    result<bool> covered_by(const iceberg::loaded_table& table) override;

private:
    const iceberg::table_schema& schema_;
    const iceberg::partition_spec& spec_;
    s3_table_files& store_;
    const iss::clock& clk_;
    iceberg::table_ident table_;
    std::vector<iceberg::pending_file> files_;
    iceberg::offset_map next_offsets_;  ///< the batch's commit point per partition
    /// the creation time of each topic of the batch (`iggy-s3-sink.topics`)
    iceberg::topic_created_map topics_created_;
    std::int64_t attempted_ = 0;  ///< the last snapshot id built (0: none yet)
};

}  // namespace iss::pipeline
