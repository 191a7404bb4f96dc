// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// One batch into the table, exactly once: the commit loop of the table step.
///
/// The naive version commits and, on any error, commits the same request again. That is
/// wrong twice over: after a 409 the request names a parent that is no longer current, so it
/// fails forever; and after a 500 or a timeout the first commit may have been applied, so a
/// second one (on the new parent) would register the same data files twice.
///
/// Here each failure that leaves the table's state open (`commit_conflict`, `unknown_outcome`,
/// and `unavailable` for a request that never left) reloads the table and asks the batch's
/// plan whether the reloaded table already covers the batch (its current snapshot's summary
/// holds the batch's offsets: the Iceberg issue's `iggy-s3-sink.offsets`). Covered: done,
/// nothing is written again. Not covered: the plan builds the commit again on the reloaded
/// table (new parent, the parent's manifests and offsets carried forward), its files are
/// written, and the commit is sent again. Anything else (401, 403, 404, 400) ends the loop
/// with that error. The loop never sleeps: the caller's backoff (the delivery core's retry of
/// the table step) spaces out attempts after it gives up.
///
/// The pure half (what the plan builds, how a summary is read) lives in this module's
/// metadata builders; the loop only orders the I/O.

#include "iceberg/catalog.hpp"

#include <string>
#include <vector>

namespace iss::iceberg {

/// A file the commit references, written before the commit is sent (a manifest, a manifest
/// list): its full location (`s3://bucket/key`) and bytes.
struct metadata_file {
    std::string location;
    std::string bytes;
};

/// What one attempt sends: files to write first, then the CommitTableRequest body.
struct built_commit {
    std::vector<metadata_file> files;
    std::string body;
};

/// The batch's side of the loop: what to write and send, and whether a table holds the batch
/// (lib/iceberg/commit.hpp's `plan_commit` and `decide` behind it; `covered_by` may keep what
/// `decide` left for the next `build`).
class batch_plan {
public:
    virtual ~batch_plan() = default;
    /// The files and the commit request that append the batch on top of `base` (its current
    /// snapshot is the parent; requirements `assert-table-uuid` and `assert-ref-snapshot-id`).
    /// Errors end the loop (a batch that cannot be built will not build later either). A
    /// coroutine: building may read the parent's manifest list from the store.
    virtual task<result<built_commit>> build(const loaded_table& base) = 0;
    /// Whether `table` already holds the whole batch (its summary's offsets reach the batch's
    /// last offsets). Errors (unreadable metadata) end the loop.
    virtual result<bool> covered_by(const loaded_table& table) = 0;
};

/// Writes a metadata file to the store (the S3 client behind it; write-once names).
class metadata_writer {
public:
    virtual ~metadata_writer() = default;
    /// Errors are the store's (retryable or not: the loop ends either way and the caller
    /// retries the whole step later).
    virtual task<result<void>> put(metadata_file f) = 0;
};

/// How the loop ended well.
struct commit_outcome {
    loaded_table table;             ///< the table with the batch in it
    unsigned attempts = 0;          ///< commits sent (1 when the first one went through)
    unsigned conflicts = 0;         ///< 409s met on the way
    unsigned unknown_outcomes = 0;  ///< 5xx / timeouts met on the way
    bool found_committed = false;   ///< a reload showed the batch already in (no new snapshot by this call)
};

/// Commits the batch of `plan` to `t`, starting from `base` (the table as last loaded).
/// \param max_attempts commits to send at most (each after a reload); then `commit_conflict`.
/// \return the outcome, or the error that ended the loop (`catalog_errc`, the plan's, the writer's).
task<result<commit_outcome>> commit_batch(catalog_client& catalog, metadata_writer& files, table_ident t,
                                          loaded_table base, batch_plan& plan, unsigned max_attempts = 5);

}  // namespace iss::iceberg
