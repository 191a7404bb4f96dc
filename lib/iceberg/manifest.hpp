// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Manifests and manifest lists, format version 2 (Iceberg spec, "Manifests", "Manifest
/// Lists", Appendix A "Avro"): Avro object container files whose schemas carry the spec's
/// field ids, written through lib/format's container framing (format/avro_container.hpp)
/// with libavro encoding the datums, and a manifest list read back (the parent snapshot's,
/// to carry its manifests forward).
///
/// A manifest written here lists data files ADDED (status 1) with `snapshot_id`,
/// `sequence_number` and `file_sequence_number` null: they are inherited from the manifest
/// list entry (spec "Sequence Number Inheritance"), so one manifest stays valid when a
/// commit is rebuilt on a new parent with a new snapshot id and sequence number; only the
/// manifest list is written again.

#include "common/error.hpp"
#include "iceberg/partition.hpp"
#include "iceberg/schema.hpp"
#include "iceberg/stats.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace iss::iceberg {

/// One data file to add (a durable object).
struct data_file {
    std::string file_path;          ///< full URI: `s3://bucket/key`
    std::vector<value> partition;   ///< one value per partition field (`partition_spec::values`)
    std::int64_t record_count = 0;  ///< rows in the file
    std::int64_t file_size_in_bytes = 0;
    column_stats stats;  ///< may be empty (then the maps are null)
};

/// The manifest of `files`: the Avro bytes to upload. File metadata: `schema`, `schema-id`,
/// `partition-spec` (the fields array), `partition-spec-id`, `format-version` "2",
/// `content` "data". Deterministic (same input, same bytes). Codec deflate.
[[nodiscard]] std::string write_manifest(const table_schema& schema, const partition_spec& spec,
                                         std::span<const data_file> files);

/// `field_summary` (manifest list, ids 508-511, 518).
struct field_summary {
    bool contains_null = false;
    std::optional<bool> contains_nan;
    std::optional<std::string> lower_bound;  ///< single-value serialization
    std::optional<std::string> upper_bound;
    friend bool operator==(const field_summary&, const field_summary&) = default;
};

/// `manifest_file` (manifest list, ids 500-519).
struct manifest_file {
    std::string manifest_path;
    std::int64_t manifest_length = 0;
    std::int32_t partition_spec_id = 0;
    std::int32_t content = 0;  ///< 0 data, 1 deletes
    std::int64_t sequence_number = 0;
    std::int64_t min_sequence_number = 0;
    std::int64_t added_snapshot_id = 0;
    std::int32_t added_files_count = 0;
    std::int32_t existing_files_count = 0;
    std::int32_t deleted_files_count = 0;
    std::int64_t added_rows_count = 0;
    std::int64_t existing_rows_count = 0;
    std::int64_t deleted_rows_count = 0;
    std::optional<std::vector<field_summary>> partitions;
    std::optional<std::string> key_metadata;
    friend bool operator==(const manifest_file&, const manifest_file&) = default;
};

/// The manifest list entry of a manifest written by `write_manifest` for a new snapshot:
/// counts and rows from `files`, partition summaries (bounds in single-value form),
/// `sequence_number` = `min_sequence_number` = the snapshot's, `added_snapshot_id` = it.
[[nodiscard]] manifest_file new_manifest_entry(const partition_spec& spec, std::span<const data_file> files,
                                               std::string manifest_path, std::int64_t manifest_length,
                                               std::int64_t snapshot_id, std::int64_t sequence_number);

/// The manifest list of a snapshot: `manifests` in order (the new ones first, then the
/// parent's carried forward as read). File metadata `snapshot-id`, `parent-snapshot-id`
/// (when there is a parent), `sequence-number`, `format-version` "2". Codec deflate.
[[nodiscard]] std::string write_manifest_list(std::int64_t snapshot_id, std::optional<std::int64_t> parent_snapshot_id,
                                              std::int64_t sequence_number, std::span<const manifest_file> manifests);

/// Reads a manifest list (any writer's: fields by name; v1 lists' missing v2 fields read as
/// the spec says: content 0, sequence numbers 0). errc::bad_avro naming what is wrong.
[[nodiscard]] result<std::vector<manifest_file>> read_manifest_list(std::string_view bytes);

/// One entry of a manifest as a reader of the table needs it (`manifest_entry`, ids 0-2, and
/// of its `data_file` ids 134, 100, 103).
struct manifest_entry_view {
    std::int32_t status = 0;   ///< 0 EXISTING, 1 ADDED, 2 DELETED
    std::int32_t content = 0;  ///< 0 data, 1 position deletes, 2 equality deletes
    std::string file_path;
    std::int64_t record_count = 0;
};
/// Reads a manifest's entries (any writer's: fields by name; v1's missing `content` reads as
/// 0). errc::bad_avro naming what is wrong.
[[nodiscard]] result<std::vector<manifest_entry_view>> read_manifest(std::string_view bytes);

/// The manifest schema (Avro JSON with field ids) for a partition spec; the list schema.
[[nodiscard]] std::string manifest_entry_schema(const partition_spec& spec);
[[nodiscard]] std::string manifest_file_schema();

}  // namespace iss::iceberg
