// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// `run` with an `iceberg` section (issue 36; lib/iceberg/README.md, "How the catalog side
/// uses it"): the parts of one generation that make its objects the data files of Iceberg
/// tables, committed through the REST catalog before their offsets are stored in Iggy
/// (invariant 7 of lib/pipeline/delivery.hpp).
///
/// At the generation's start (`iceberg_run::open`), before Iggy is asked for anything:
/// 1. the table schema from `format.schema` (field ids 1..n, lib/iceberg/schema.hpp) and the
///    partition spec from `iceberg.partition_by`;
/// 2. the catalog client (`iceberg.catalog`, over an HTTP client with the S3 client's proxy
///    and TLS settings; SigV4 with the S3 credential chain), `GET /v1/config`;
/// 3. per source topic, its table (`iceberg.namespace`, `iceberg.table`) loaded, or created
///    when missing and `iceberg.create` is set; a table whose schema or partition spec differs
///    from ours is refused, and so is a table whose location is not in `s3.bucket` (the data
///    files are written there). A catalog that does not answer is waited for (backoff) until
///    it does or a stop or reload ends the generation.
///
/// Then the generation's pipeline uses:
/// - `namer()`: the key namer of the partition's table (`table_key_namer`: keys under that
///   table's location, `data/<partition path>/...`);
/// - `*this` as the table step: lib/pipeline's iceberg_table_step (batches per table,
///   `iceberg.commit_interval`), whose plans are lib/iceberg's (iceberg_batch_plan) with each
///   object's partition value as the namer recorded it; the namer forgets a key once its data
///   file is in the table;
/// - `resume(iggy, topics)`: the resume point is the larger of Iggy's stored offset and the
///   table's (its current snapshot's `iggy-s3-sink.offsets`), unless the table's
///   `iggy-s3-sink.topics` names an earlier topic (an offset reset); the creation time each
///   partition's topic had then is what its commits record (`topic_generations`);
/// - `flush_now()` when the generation stops or reloads: the batches are committed at once,
///   so a clean stop leaves every durable object in its table and its offset stored.
///
/// Event-loop thread only; lives in the generation's frame (daemon/cmd_run.cpp).

#include "config/config.hpp"
#include "http/client.hpp"
#include "iceberg/catalog.hpp"
#include "iceberg/commit.hpp"
#include "iceberg/partition.hpp"
#include "iceberg/schema.hpp"
#include "pipeline/adapters/iceberg_key_namer.hpp"
#include "pipeline/adapters/iceberg_plan.hpp"
#include "pipeline/adapters/iceberg_resume.hpp"
#include "pipeline/adapters/iceberg_table.hpp"
#include "pipeline/ports.hpp"

#include <boost/asio/awaitable.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace iss::s3 {
class client;
struct client_options;
}  // namespace iss::s3

namespace iss::app {

/// The key namer of an Iceberg run: each source topic's objects are named by the
/// iceberg_key_namer of its table (that table's location and partition spec).
class table_key_namer final : public pipeline::key_namer {
public:
    /// Adds the namer of topic `t`'s table.
    void add(const pipeline::topic_ref& t, std::unique_ptr<pipeline::iceberg_key_namer> n);

    [[nodiscard]] object_key key(const pipeline::partition_ref& p, std::uint64_t first_offset) const override;
    [[nodiscard]] result<pipeline::encoded_partition> encode(const pipeline::partition_ref& p,
                                                             const pipeline::message& m) const override;
    [[nodiscard]] object_key key_for(const pipeline::partition_ref& p, const pipeline::message& first) const override;
    [[nodiscard]] bool record_dependent() const override { return record_dependent_; }

    /// The partition value of a key the namer of `p`'s table made (iceberg_key_namer::values_of).
    [[nodiscard]] std::optional<std::vector<iceberg::value>> values_of(const pipeline::partition_ref& p,
                                                                       const object_key& k) const;
    /// Drops a key's partition value (its data file is in the table).
    void forget(const pipeline::partition_ref& p, const object_key& k);

private:
    /// The namer of `p`'s topic. Every polled topic is a configured source, whose table was
    /// opened at start: a topic without one is a bug.
    [[nodiscard]] pipeline::iceberg_key_namer& of(const pipeline::partition_ref& p) const;

    std::map<pipeline::topic_ref, std::unique_ptr<pipeline::iceberg_key_namer>> namers_;
    bool record_dependent_ = false;
};

/// The tables as the report tools (`lag`, `verify`) read them: the catalog client of `run`
/// (same options) over an HTTP client of its own.
class table_reader {
public:
    /// \param s3 the S3 client options `run` would use (their HTTP settings and credentials)
    table_reader(boost::asio::any_io_executor ex, const config::sink_config& cfg, const s3::client_options& s3);
    /// The table of topic `t` (`iceberg.namespace`, `iceberg.table`).
    [[nodiscard]] iceberg::table_ident table_of(const pipeline::topic_ref& t) const;
    /// `GET /v1/config` once, then the table's current metadata; nullopt when the table does
    /// not exist. Errors: the catalog's, or iceberg::errc::bad_metadata.
    boost::asio::awaitable<result<std::optional<iceberg::table_state>>> load(pipeline::topic_ref t);

private:
    config::iceberg_section cfg_;
    http::client http_;
    iceberg::catalog_client catalog_;
    bool connected_ = false;
};

class iceberg_run final : public pipeline::table_step {
public:
    /// \param s3 the generation's S3 client (outlives this): data files, metadata files, and
    ///        the HTTP and credential settings the catalog client shares
    iceberg_run(boost::asio::any_io_executor ex, const config::sink_config& cfg, s3::client& s3,
                iceberg::table_schema schema, iceberg::partition_spec spec);
    ~iceberg_run() override;

    /// The schema and spec from the configuration (errors name the key; exit 78), and the
    /// parts built on them.
    static result<std::unique_ptr<iceberg_run>> make(boost::asio::any_io_executor ex, const config::sink_config& cfg,
                                                     s3::client& s3);

    /// Connects to the catalog and opens (or creates) each source topic's table, checking it
    /// (see the file comment). A catalog that does not answer is retried with backoff until
    /// `ending()` says the generation is over (then `iss::errc::timeout`: the caller, seeing
    /// the generation end, exits as a stop does). Errors:
    /// `iss::errc::invalid_argument` for a table that does not fit the configuration (exit 78,
    /// the message names both sides and what to change); the catalog's error otherwise.
    boost::asio::awaitable<result<void>> open(pipeline::sleeper& sleep, std::function<bool()> ending);

    [[nodiscard]] const pipeline::key_namer& namer() const noexcept { return namer_; }
    /// The table schema (from `format.schema`): its field ids key the column statistics.
    [[nodiscard]] const iceberg::table_schema& schema() const noexcept { return schema_; }
    /// Iggy's offset store decorated: the resume point is the larger of Iggy's and the table's,
    /// unless the table's offsets are of an earlier topic (an offset reset:
    /// iceberg_resume_offsets); `topics` answers the topics' creation times.
    [[nodiscard]] std::unique_ptr<pipeline::offset_store> resume(pipeline::offset_store& iggy,
                                                                 pipeline::message_source& topics);
    /// The table step (iceberg_table_step), forgetting each committed key's partition value.
    pipeline::task<pipeline::table_result> commit(const pipeline::partition_ref& p,
                                                  std::span<const pipeline::durable_object> objects,
                                                  std::uint64_t through) override;
    /// A partition being handed over commits its table's batch at once (ports.hpp).
    void handing_over(const pipeline::partition_ref& p, bool on) override { step_->handing_over(p, on); }
    /// From now on every batch is committed at once (the generation stops or reloads).
    void flush_now() noexcept { step_->flush_now(); }
    [[nodiscard]] const pipeline::iceberg_table_stats& stats() const noexcept { return step_->stats(); }

private:
    [[nodiscard]] iceberg::table_ident table_of(const pipeline::partition_ref& p) const;
    boost::asio::awaitable<result<void>> open_tables();
    /// A catalog answer to opening table `t` that says the configuration names it wrongly (404:
    /// missing without iceberg.create, or a path the catalog does not have, e.g. a wrong
    /// iceberg.catalog.prefix; 400: no such route) as `iss::errc::invalid_argument` (exit 78)
    /// naming the keys to change; any other error as it is.
    [[nodiscard]] error named_wrongly(const error& e, const iceberg::table_ident& t) const;
    std::unique_ptr<iceberg::batch_plan> plan(const pipeline::iceberg_batch& b);

    const iss::clock& clk_;
    config::iceberg_section cfg_;
    std::string bucket_;  ///< s3.bucket: where the data files are written
    std::vector<pipeline::topic_ref> topics_;
    std::vector<format::column> columns_;
    std::map<std::string, std::string> properties_;  ///< of a table we create (the Parquet codec)
    iceberg::table_schema schema_;
    iceberg::partition_spec spec_;
    s3::client& s3_;
    http::client http_;
    iceberg::catalog_client catalog_;
    pipeline::s3_table_files files_;
    table_key_namer namer_;
    /// Each partition's topic creation time, learnt by the resume point, recorded by the commits.
    pipeline::topic_generations generations_;
    std::unique_ptr<pipeline::iceberg_table_step> step_;
};

}  // namespace iss::app
