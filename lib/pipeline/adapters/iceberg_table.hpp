// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The Iceberg table step (`table_step` of ports.hpp, invariant 7 of delivery.hpp): durable
/// objects become data files of one snapshot per table and batch, committed through the REST
/// catalog (lib/iceberg/catalog.hpp) by the commit loop (lib/iceberg/catalog_commit.hpp).
///
/// Batching: a call hands its objects to its table's pending batch and answers `deferred`
/// until the batch is due: `commit_interval` after its first object, or at once after
/// `flush_now()` (the clean stop) and for a partition being handed over (`handing_over`: the
/// revoked partition's offset is stored before the new owner takes it, so the hand-over does
/// not wait for the server's rebalance timeout). The first call that finds the batch due commits the whole
/// batch (every partition's objects; one commit per table at a time) and answers `ok`; a
/// partition whose objects went in with another partition's commit gets `ok` at its next
/// call. A failed commit puts the objects back into the batch: the first call after a
/// full-jitter backoff wait (lib/common/backoff.hpp, `retry_backoff`, the ceiling doubling per
/// failure up to its cap; calls before it answer `deferred`) tries again, and each failed
/// attempt logs one warning with that wait (`retryable`: a conflict the loop gave up on, the catalog or the store unreachable;
/// `fatal`: credentials, permissions, a missing table without `iceberg.create`).
///
/// Idempotence by key (ports.hpp): an object whose key is in the batch already is not added
/// twice; after a restart or a hand-over, objects the table holds already are recognised by
/// the plan from the table's summary offsets (`batch_plan::covered_by`), never committed
/// twice.
///
/// Lifecycle: one per daemon, on the daemon's executor; the catalog client, the metadata
/// writer and the clock outlive it.

#include "common/backoff.hpp"
#include "common/clock.hpp"
#include "common/net/async_mutex.hpp"
#include "common/stats.hpp"
#include "iceberg/catalog_commit.hpp"
#include "pipeline/ports.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace iss::pipeline {

/// One batch of one table, as the plan factory gets it.
struct iceberg_batch {
    iceberg::table_ident table;
    std::vector<durable_object> objects;  ///< by partition, then first offset
    /// Per source partition in the batch: the next offset the table holds once it is in
    /// (the highest `through` handed for it, plus one).
    std::map<partition_ref, std::uint64_t> next_offsets;
};

/// Builds the plan of one batch (lib/iceberg's manifest, manifest list and commit request).
using iceberg_plan_factory = std::function<std::unique_ptr<iceberg::batch_plan>(const iceberg_batch&)>;

struct iceberg_table_options {
    /// The table of a source partition (`iceberg.namespace`, `iceberg.table` with `{stream}`,
    /// `{topic}` rendered).
    std::function<iceberg::table_ident(const partition_ref&)> table_for;
    iceberg::create_table_request create;               ///< schema and spec of a table to create (name filled in)
    bool create_missing = true;                         ///< `iceberg.create`
    std::chrono::milliseconds commit_interval{60'000};  ///< `iceberg.commit_interval`
    /// The wait after a failed commit, per table (`s3.retry.base` and `s3.retry.cap`, as the
    /// writers' retries); the ceiling doubles with each failure in a row.
    iss::backoff_policy retry_backoff{};
    /// The catalog's host (and port), as /readyz names it while it is unreachable.
    std::string catalog_host;
};

/// Counters for the metrics (`iceberg_commits_total{result}`, `iceberg_commit_duration_seconds`,
/// `iceberg_conflicts_total`, the last commit's time).
struct iceberg_table_stats {
    std::uint64_t commits_ok = 0;        ///< batches committed (a new snapshot)
    std::uint64_t commits_found = 0;     ///< batches a reload showed in the table already
    std::uint64_t commits_failed = 0;    ///< commit attempts of the step that ended in an error
    std::uint64_t conflicts = 0;         ///< 409s met
    std::uint64_t unknown_outcomes = 0;  ///< 5xx / timeouts met
    iss::stats::histogram duration;      ///< seconds in the commit loop, every batch
    /// When the last batch was committed (or found committed), on the monotonic clock: its age
    /// (`iceberg_last_commit_age_seconds`) is steady time since, so a step of the wall clock
    /// (NTP, by hand) neither raises it nor zeroes it.
    std::optional<iss::clock::steady_time> last_commit;
    /// The catalog could not be reached (`iceberg::catalog_errc::unavailable`: no connection,
    /// 5xx, 429; `unknown_outcome`: no answer to a commit) by the last attempt: its error, from
    /// that attempt until one reaches it (/readyz `catalog: unreachable: ...`,
    /// `iggy_s3_sink_iceberg_catalog_up`): `catalog_host: the error`. The batches wait
    /// meanwhile; nothing is lost.
    std::optional<std::string> catalog_unreachable;
    std::uint64_t catalog_unreachable_total = 0;  ///< attempts that could not reach the catalog
    /// The catalog refused the last commit attempt (an answer no retry changes by itself:
    /// 401/419 `unauthorized`, 403 `forbidden`, 404 `not_found`, other 4xx `bad_request`):
    /// `CODE: the error` (the error names the HTTP status), from that attempt until a commit
    /// succeeds (/readyz `catalog: refusing commits: ...`, `iggy_s3_sink_iceberg_catalog_refusing`).
    /// The batches wait and are tried at the backoff meanwhile; nothing is lost.
    std::optional<std::string> catalog_refusing;
};

class iceberg_table_step final : public table_step {
public:
    iceberg_table_step(boost::asio::any_io_executor ex, iceberg::catalog_client& catalog,
                       iceberg::metadata_writer& files, iceberg_plan_factory plans, iceberg_table_options opts,
                       const iss::clock& clk);
    ~iceberg_table_step() override;

    task<table_result> commit(const partition_ref& p, std::span<const durable_object> objects,
                              std::uint64_t through) override;
    /// A partition being handed over: its calls commit its table's batch at once (ports.hpp).
    void handing_over(const partition_ref& p, bool on) override;
    /// From now on every call commits its table's batch at once (the clean stop).
    void flush_now() noexcept { flushing_ = true; }
    [[nodiscard]] const iceberg_table_stats& stats() const noexcept { return stats_; }
    /// A request to the catalog failed (a commit's, or the daemon's while it opens the tables):
    /// one that could not reach it (`unavailable`, `unknown_outcome`) marks it unreachable
    /// (`iceberg_table_stats::catalog_unreachable`, logged once); any other answer is one.
    void catalog_failed(const iss::error& e);
    /// The catalog answered: ends an unreachable spell (logged once).
    void catalog_answered();
    /// The catalog's code for a refusal (`forbidden`, ...; iceberg_table_stats::catalog_refusing),
    /// nullopt for any other error.
    [[nodiscard]] std::optional<std::string_view> refusal_code(const iss::error& e) const;

private:
    struct table_state;
    table_state& state_of(const iceberg::table_ident& t);
    /// Whether a commit of this step took `o` (its partition is committed through its last offset).
    /// Counts a failed attempt, logs it with the wait before the next one (the backoff).
    table_result failed(table_state& st, const iceberg::table_ident& t, std::size_t objects, const iss::error& e);
    static bool in_table(const table_state& st, const durable_object& o);
    task<table_result> commit_due(table_state& st, const iceberg::table_ident& t);

    boost::asio::any_io_executor ex_;
    iceberg::catalog_client& catalog_;
    iceberg::metadata_writer& files_;
    iceberg_plan_factory plans_;
    iceberg_table_options opts_;
    const iss::clock& clk_;
    bool flushing_ = false;
    std::set<partition_ref> handing_over_;         ///< partitions whose calls commit at once
    std::mt19937_64 rng_{std::random_device{}()};  ///< the backoff's jitter
    std::map<std::string, std::unique_ptr<table_state>> tables_;
    iceberg_table_stats stats_;
};

}  // namespace iss::pipeline
