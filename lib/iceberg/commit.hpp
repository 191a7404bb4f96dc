// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The table commit as pure logic (Iceberg spec "Snapshots", "Commit Conflict Resolution and
/// Retry", Appendix C "Table Metadata and Snapshots"; REST catalog OpenAPI
/// `CommitTableRequest`, `TableRequirement`, `TableUpdate`, `LoadTableResult`).
///
/// Exactly once, by the rule the objects already follow (docs/architecture.md §3): the data
/// files are deterministic and written once, and the table records, in its snapshot
/// summary under `iggy-s3-sink.offsets`, per stream, topic and partition, the NEXT offset it
/// holds (one past the last committed message). A commit is conditional on the snapshot it
/// builds on (`assert-ref-snapshot-id` main), so two writers never both append on one parent.
///
/// The flow the catalog client drives:
///   1. `parse_table_metadata(load_table_json)` -> `table_state` (its `committed_offsets()`
///      is the resume point at start: the larger of it and Iggy's stored offset).
///   2. With the parent's manifest list read (`read_manifest_list`), `plan_commit` gives the
///      manifest and manifest list bytes to upload, their paths, and the request body.
///   3. POST the body. 200: done; store the offsets in Iggy. 409 (the parent moved), 5xx or a
///      timeout (the outcome is unknown): reload the table and call `decide`:
///      `done` (our snapshot is on main, or the summary already covers every file), `rebuild`
///      (plan again on the new parent with `remaining`), or `overlap` (a file straddles the
///      table's offset: committing it would duplicate rows; a bug or a foreign writer: stop
///      and say so).
///
/// Which files a batch may hold. Objects of one source partition interleave in offsets when
/// the key splits them (one open object per partition value), so a file's range says nothing
/// of the messages between its first and last offset. The summary therefore records a
/// commit point, as the Iggy offset does (lib/pipeline: one below the lowest first offset of
/// any object not yet durable): `commit_input::next_offsets[p]` = every message of p below
/// it is in this batch or already in the table. A batch holds only files ending below their
/// partition's commit point (`plan_commit` refuses others). Then, on any table, a file is in
/// it exactly when it ends below the summary's offset, and a file starting at or above it is
/// not: that is what `decide` relies on.
///
/// The snapshot id is derived from the table uuid, the parent and the file paths (XXH3),
/// so a retry on the same parent is the same snapshot with the same metadata files, byte for
/// byte; a rebuild on a new parent is a new one.

#include "common/error.hpp"
#include "iceberg/manifest.hpp"
#include "iceberg/partition.hpp"
#include "iceberg/schema.hpp"

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace iss::iceberg {

/// The snapshot summary key holding the offsets.
inline constexpr std::string_view offsets_key = "iggy-s3-sink.offsets";

/// One Iggy source partition.
struct source_partition {
    std::string stream;
    std::string topic;
    std::uint32_t partition = 0;
    friend auto operator<=>(const source_partition&, const source_partition&) = default;
};
/// Per source partition: the next offset the table holds.
using offset_map = std::map<source_partition, std::uint64_t>;

/// The summary value: `{"<stream>":{"<topic>":{"<partition>":<next offset>}}}` (JSON text).
[[nodiscard]] std::string offsets_json(const offset_map& m);
/// Reads `offsets_json`'s form; errc::bad_metadata naming what is wrong.
[[nodiscard]] result<offset_map> parse_offsets(std::string_view json);
/// Each partition's larger offset of the two (a partition in either is in the result).
[[nodiscard]] offset_map merge_offsets(const offset_map& a, const offset_map& b);

/// The snapshot summary key holding, per stream and topic, the creation time of the topic
/// whose offsets `iggy-s3-sink.offsets` records (Iggy's GetTopic `created_at`, µs since the
/// epoch): a topic deleted and created again starts its offsets at 0 again, and the table's
/// offsets are then not the new topic's. Absent in tables written before it (their offsets
/// are taken as the current topic's).
inline constexpr std::string_view topics_key = "iggy-s3-sink.topics";
/// One Iggy source topic: stream, topic.
using source_topic = std::pair<std::string, std::string>;
/// Per source topic: its creation time (µs) as the writer of its offsets read it.
using topic_created_map = std::map<source_topic, std::uint64_t>;
/// The summary value: `{"<stream>":{"<topic>":<created_at µs>}}` (JSON text).
[[nodiscard]] std::string topics_json(const topic_created_map& m);
/// Reads `topics_json`'s form; errc::bad_metadata naming what is wrong.
[[nodiscard]] result<topic_created_map> parse_topics(std::string_view json);

/// One snapshot of the table metadata.
struct snapshot_info {
    std::int64_t snapshot_id = 0;
    std::optional<std::int64_t> parent_snapshot_id;
    std::int64_t sequence_number = 0;
    std::int64_t timestamp_ms = 0;
    std::string manifest_list;
    std::map<std::string, std::string> summary;
};

/// What the commit needs of the table's metadata.
struct table_state {
    std::string table_uuid;
    std::string location;  ///< the table's base location (`s3://bucket/path`), no trailing /
    int format_version = 2;
    std::int64_t last_sequence_number = 0;
    std::int64_t last_updated_ms = 0;  ///< `last-updated-ms`: the metadata's last change (ms since the epoch)
    std::optional<std::int64_t> main_snapshot_id;  ///< `refs.main`, else `current-snapshot-id`
    std::vector<snapshot_info> snapshots;
    int current_schema_id = 0;
    int default_spec_id = 0;
    std::vector<std::pair<int, std::string>> schema_fields;  ///< the current schema's top-level (id, name)
    std::string default_spec_fields;                         ///< the default spec's fields as JSON (compact)
    std::map<std::string, std::string> properties;           ///< the table's properties (string values)

    /// The snapshot main points at; nullptr for an empty table.
    [[nodiscard]] const snapshot_info* main() const noexcept;
    [[nodiscard]] const snapshot_info* find(std::int64_t id) const noexcept;
    /// Whether `id` is main's snapshot or one of its ancestors.
    [[nodiscard]] bool on_main(std::int64_t id) const noexcept;
    /// The offsets main's summary holds, or, when another writer's snapshot is on top, the
    /// newest summary on main's ancestry that has `iggy-s3-sink.offsets` (empty for an empty
    /// table, or when no snapshot still in the metadata has it). errc::bad_metadata when the
    /// summary value is not readable.
    [[nodiscard]] result<offset_map> committed_offsets() const;
    /// The topics' creation times recorded with those offsets (`iggy-s3-sink.topics` of the
    /// same snapshot); empty when it has none (a table written before the key existed).
    [[nodiscard]] result<topic_created_map> committed_topics() const;

private:
    /// The newest snapshot on main's ancestry whose summary has `iggy-s3-sink.offsets`.
    [[nodiscard]] const snapshot_info* offsets_snapshot() const noexcept;
};

/// Reads a LoadTableResult (`{"metadata-location":..,"metadata":{..}}`) or bare table
/// metadata. errc::bad_metadata naming the missing or malformed field; format version 1 is
/// refused (append-only v2 commits need sequence numbers).
[[nodiscard]] result<table_state> parse_table_metadata(std::string_view json);

/// Problems between an existing table and the schema and spec we write (a field id or name
/// differs, the partition spec differs), one sentence each; empty when they match.
[[nodiscard]] std::vector<std::string> check_table_matches(const table_state& t, const table_schema& schema,
                                                           const partition_spec& spec);

/// A durable object to commit: its data file and the Iggy range it holds.
struct pending_file {
    data_file file;
    source_partition source;
    std::uint64_t first_offset = 0;
    std::uint64_t last_offset = 0;  ///< inclusive
};

/// What `plan_commit` needs.
struct commit_input {
    const table_schema* schema = nullptr;
    const partition_spec* spec = nullptr;
    const table_state* table = nullptr;
    std::vector<manifest_file> parent_manifests;  ///< the parent's manifest list (empty without a parent)
    std::span<const pending_file> files;          ///< not empty
    /// Per source partition of `files`: the commit point (see the file comment). Merged with
    /// the parent's summary (each partition's larger), it is the new summary's offsets.
    offset_map next_offsets;
    /// Per source topic of `files`: its creation time (`iggy-s3-sink.topics`); it replaces
    /// the parent's for these topics, the parent's others are carried. Empty: none recorded.
    topic_created_map topics_created;
    /// The injected clock (ms since the epoch). The snapshot's `timestamp-ms` is the largest of
    /// it, the parent's timestamp + 1 and the table's `last-updated-ms` + 1: a catalog refuses a
    /// snapshot older than the table's last change, whatever this host's clock says.
    std::int64_t now_ms = 0;
    std::vector<std::string> namespace_levels;  ///< for the request's identifier
    std::string table_name;
};

/// One commit attempt: upload `manifest` to `manifest_path` and `manifest_list` to
/// `manifest_list_path` (in the table's `metadata/`), then POST `request_body`.
struct commit_plan {
    std::int64_t snapshot_id = 0;
    std::optional<std::int64_t> parent_snapshot_id;
    std::int64_t sequence_number = 0;
    std::string manifest_path;
    std::string manifest;
    std::string manifest_list_path;
    std::string manifest_list;
    std::string snapshot_json;  ///< the Snapshot object of the add-snapshot update
    std::string request_body;   ///< CommitTableRequest
    offset_map offsets;         ///< what the new summary records (the parent's merged with the batch)
};

/// Builds the commit of `in.files` on the table's main snapshot. Summary: `operation`
/// append, `added-data-files`, `added-records`, `added-files-size`, `changed-partition-count`,
/// the `total-*` counters (the parent's plus the added), `iggy-s3-sink.offsets`, and
/// `iggy-s3-sink.topics` (when the parent or the batch records any).
/// errc::bad_metadata when the parent's summary cannot be read; errc::bad_batch naming the
/// file when one does not end below its partition's `next_offsets` (or has none).
[[nodiscard]] result<commit_plan> plan_commit(const commit_input& in);

/// After a commit whose answer was a conflict (409), a server error or no answer.
struct decision {
    enum class kind : std::uint8_t { done, rebuild, overlap } what = kind::done;
    std::vector<pending_file> remaining;  ///< rebuild: the files the table does not hold yet
    std::string detail;                   ///< overlap: which file and offsets
};
/// Decides from the reloaded table (see the file comment): `done` when `attempted` is on
/// main or every file ends below the table's offset for its partition; files starting at or
/// above it are `remaining`; a file across it is an `overlap`.
[[nodiscard]] decision decide(const table_state& reloaded, std::span<const pending_file> batch,
                              std::int64_t attempted_snapshot_id);

}  // namespace iss::iceberg
