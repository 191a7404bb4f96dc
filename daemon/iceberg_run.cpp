// SPDX-License-Identifier: Apache-2.0
// `run`'s Iceberg parts (daemon/iceberg_run.hpp).
#include "daemon/iceberg_run.hpp"

#include "common/backoff.hpp"
#include "common/log.hpp"
#include "daemon/wiring.hpp"
#include "iceberg/commit.hpp"
#include "iceberg/names.hpp"
#include "pipeline/adapters/iceberg_resume.hpp"
#include "s3/client.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <random>

namespace iss::app {

namespace net = boost::asio;

namespace {

const iss::log::logger& logger() {
    static const iss::log::logger l{"iceberg"};
    return l;
}

/// The plan of a batch that cannot be built: an object whose partition value the namer does
/// not know (a bug: every key is the namer's). Fails the step (retried, logged) rather than
/// commit a data file under the wrong partition.
class refused_plan final : public iceberg::batch_plan {
public:
    explicit refused_plan(std::string why) : why_{std::move(why)} {}
    pipeline::task<result<iceberg::built_commit>> build(const iceberg::loaded_table&) override {
        co_return error{iss::errc::invalid_argument, why_};
    }
    result<bool> covered_by(const iceberg::loaded_table&) override { return false; }

private:
    std::string why_;
};

/// The properties a table this daemon creates gets: the Parquet codec its data files are
/// written with (the reference implementation's default, zstd, would otherwise say another).
std::map<std::string, std::string> table_properties(const config::sink_config& cfg) {
    return {{std::string{iceberg::parquet_codec_property},
             std::string{iceberg::parquet_codec_name(writer_options(cfg).parquet.codec)}}};
}

}  // namespace

// ---- table_key_namer ------------------------------------------------------------------

void table_key_namer::add(const pipeline::topic_ref& t, std::unique_ptr<pipeline::iceberg_key_namer> n) {
    record_dependent_ = record_dependent_ || n->record_dependent();
    namers_.insert_or_assign(t, std::move(n));
}

pipeline::iceberg_key_namer& table_key_namer::of(const pipeline::partition_ref& p) const {
    const auto it = namers_.find(pipeline::topic_ref{p.stream, p.topic});
    if (it == namers_.end()) {  // a bug (§8.4.8): every polled topic is a source whose table was opened
        logger().error("{}/{}: a topic without a table (its key namer is missing); aborting", p.stream, p.topic);
        std::abort();
    }
    return *it->second;
}

object_key table_key_namer::key(const pipeline::partition_ref& p, std::uint64_t first_offset) const {
    return of(p).key(p, first_offset);
}

result<pipeline::encoded_partition> table_key_namer::encode(const pipeline::partition_ref& p,
                                                            const pipeline::message& m) const {
    return of(p).encode(p, m);
}

object_key table_key_namer::key_for(const pipeline::partition_ref& p, const pipeline::message& first) const {
    return of(p).key_for(p, first);
}

std::optional<std::vector<iceberg::value>> table_key_namer::values_of(const pipeline::partition_ref& p,
                                                                      const object_key& k) const {
    return of(p).values_of(k);
}

void table_key_namer::forget(const pipeline::partition_ref& p, const object_key& k) { of(p).forget(k); }

// ---- table_reader ---------------------------------------------------------------------

table_reader::table_reader(net::any_io_executor ex, const config::sink_config& cfg, const s3::client_options& s3)
    : cfg_{cfg.iceberg},
      http_{ex, s3.http},
      catalog_{ex, http_, catalog_options(cfg, s3.credentials_source), real_clock::instance()} {}

iceberg::table_ident table_reader::table_of(const pipeline::topic_ref& t) const {
    return {iceberg::namespace_levels(cfg_.namespace_name), iceberg::table_name(cfg_.table, t.stream, t.topic)};
}

net::awaitable<result<std::optional<iceberg::table_state>>> table_reader::load(pipeline::topic_ref t) {
    if (!connected_) {
        if (auto c = co_await catalog_.connect(); !c) co_return c.error();
        connected_ = true;
    }
    auto loaded = co_await catalog_.load_table(table_of(t));
    if (!loaded && loaded.error() == iceberg::catalog_errc::not_found) co_return std::nullopt;
    if (!loaded) co_return loaded.error();
    auto state = iceberg::parse_table_metadata(loaded->metadata_json);
    if (!state) co_return state.error();
    co_return std::move(*state);
}

// ---- iceberg_run ----------------------------------------------------------------------

result<std::unique_ptr<iceberg_run>> iceberg_run::make(net::any_io_executor ex, const config::sink_config& cfg,
                                                       s3::client& s3) {
    const auto cols = format::effective_schema(writer_options(cfg));
    auto schema = iceberg::make_schema(cols);
    if (!schema) return error{iss::errc::invalid_argument, fmt::format("format.schema: {}", schema.error().message())};
    auto spec = iceberg::parse_partition_by(cfg.iceberg.partition_by, *schema);
    if (!spec)
        return error{iss::errc::invalid_argument, fmt::format("iceberg.partition_by: {}", spec.error().message())};
    return std::make_unique<iceberg_run>(std::move(ex), cfg, s3, std::move(*schema), std::move(*spec));
}

iceberg_run::iceberg_run(net::any_io_executor ex, const config::sink_config& cfg, s3::client& s3,
                         iceberg::table_schema schema, iceberg::partition_spec spec)
    : clk_{real_clock::instance()},
      cfg_{cfg.iceberg},
      bucket_{cfg.s3.bucket.get()},
      columns_{format::effective_schema(writer_options(cfg))},
      properties_{table_properties(cfg)},
      schema_{std::move(schema)},
      spec_{std::move(spec)},
      s3_{s3},
      http_{ex, s3.options().http},
      catalog_{ex, http_, catalog_options(cfg, s3.options().credentials_source), clk_},
      files_{s3} {
    for (const auto& src : consumer_options(cfg).sources) topics_.push_back(src.topic);
    pipeline::iceberg_table_options o;
    o.table_for = [this](const pipeline::partition_ref& p) { return table_of(p); };
    o.create.schema_json = iceberg::schema_json(schema_);
    o.create.partition_spec_json = spec_.json();
    o.create.properties = properties_;
    o.create_missing = cfg_.create;
    o.commit_interval = cfg_.commit_interval;
    o.retry_backoff = {cfg.s3.retry.base, cfg.s3.retry.cap};
    const auto where = http::parse_url(cfg_.catalog.uri);
    o.catalog_host = where ? where->host_header() : std::string{"iceberg.catalog.uri"};
    step_ = std::make_unique<pipeline::iceberg_table_step>(
        ex, catalog_, files_, [this](const pipeline::iceberg_batch& b) { return plan(b); }, std::move(o), clk_);
}

iceberg_run::~iceberg_run() = default;

iceberg::table_ident iceberg_run::table_of(const pipeline::partition_ref& p) const {
    return {iceberg::namespace_levels(cfg_.namespace_name), iceberg::table_name(cfg_.table, p.stream, p.topic)};
}

net::awaitable<result<void>> iceberg_run::open(pipeline::sleeper& sleep, std::function<bool()> ending) {
    std::mt19937_64 rng{std::random_device{}()};
    // No attempt limit: the catalog is waited for until a stop or a reload, as the store is.
    retry_budget budget{
        {{std::chrono::milliseconds{200}, std::chrono::milliseconds{5000}}, 0, std::chrono::milliseconds{0}},
        clk_,
        rng};
    result<void> r = error{iss::errc::timeout, "the catalog was not asked yet"};
    while (!ending() && budget.try_attempt()) {
        r = co_await open_tables();
        if (r) step_->catalog_answered();
        else step_->catalog_failed(r.error());  // /readyz names it while the tables wait for it
        if (r || !iceberg::retryable(r.error()) || ending()) break;
        const auto wait = budget.next_wait();
        if (!wait) break;
        logger().warn("catalog {}: {}; trying again in {} ms", cfg_.catalog.uri, r.error().message(), wait->count());
        co_await sleep.sleep_for(*wait);
    }
    co_return r;
}

error iceberg_run::named_wrongly(const error& e, const iceberg::table_ident& t) const {
    if (!(e == iceberg::catalog_errc::not_found || e == iceberg::catalog_errc::bad_request)) return e;
    const std::string prefix = cfg_.catalog.prefix.empty()
                                   ? fmt::format("empty: the catalog's own, '{}'", catalog_.prefix())
                                   : fmt::format("'{}'", cfg_.catalog.prefix);
    if (e == iceberg::catalog_errc::not_found && !cfg_.create)
        return error{iss::errc::invalid_argument,
                     fmt::format("iceberg: table {} is not in the catalog ({}), and iceberg.create is false: create "
                                 "the table, or set iceberg.create: true; if it exists, correct iceberg.namespace "
                                 "and iceberg.table, or iceberg.catalog.prefix (now {})",
                                 t.to_string(), e.message(), prefix)};
    return error{iss::errc::invalid_argument,
                 fmt::format("iceberg: the catalog has no such path for table {} ({}): correct "
                             "iceberg.catalog.prefix (now {}), iceberg.catalog.warehouse, iceberg.namespace or "
                             "iceberg.table",
                             t.to_string(), e.message(), prefix)};
}

net::awaitable<result<void>> iceberg_run::open_tables() {
    if (auto c = co_await catalog_.connect(); !c) {
        // GET /v1/config answered 400/404: the URI's path or the warehouse is wrong.
        if (c.error() == iceberg::catalog_errc::not_found || c.error() == iceberg::catalog_errc::bad_request)
            co_return error{iss::errc::invalid_argument,
                            fmt::format("iceberg: the catalog refused its configuration request ({}): correct "
                                        "iceberg.catalog.uri (its path) or iceberg.catalog.warehouse",
                                        c.error().message())};
        co_return c.error();
    }
    for (const auto& t : topics_) {
        const auto ident = table_of({t.stream, t.topic, 0});
        auto create = iceberg::create_table_request{};
        create.name = ident.name;
        create.schema_json = iceberg::schema_json(schema_);
        create.partition_spec_json = spec_.json();
        create.properties = properties_;
        auto loaded = co_await catalog_.ensure_table(ident, std::move(create), cfg_.create);
        if (!loaded) co_return named_wrongly(loaded.error(), ident);  // a wrong name is exit 78, not a restart loop
        auto state = iceberg::parse_table_metadata(loaded->metadata_json);
        if (!state)
            co_return error{iss::errc::invalid_argument,
                            fmt::format("iceberg: table {}: {}", ident.to_string(), state.error().message())};
        if (const auto problems = iceberg::check_table_matches(*state, schema_, spec_); !problems.empty())
            co_return error{iss::errc::invalid_argument,
                            fmt::format("iceberg: table {} does not match format.schema and iceberg.partition_by: {} "
                                        "(write to another table with iceberg.table, or change the configuration to "
                                        "the table's schema and spec)",
                                        ident.to_string(), fmt::join(problems, "; "))};
        auto where = iceberg::split_location(loaded->location);
        if (!where)
            co_return error{iss::errc::invalid_argument,
                            fmt::format("iceberg: table {}: {}", ident.to_string(), where.error().message())};
        if (where->bucket != bucket_)
            co_return error{
                iss::errc::invalid_argument,
                fmt::format("iceberg: table {} is located at {}, in bucket {}, but s3.bucket is {}: the "
                            "data files are written to s3.bucket and must be under the table's location; "
                            "set s3.bucket: {} (or point the catalog's warehouse at bucket {})",
                            ident.to_string(), loaded->location, where->bucket, bucket_, where->bucket, bucket_)};
        for (const auto& [key, ours] : properties_)
            if (const auto it = state->properties.find(key); it != state->properties.end() && it->second != ours)
                logger().warn(
                    "table {}: its property {} is {}, but this daemon writes {} (format.parquet.compression); "
                    "other writers of the table follow the property: set it to {} (or the configuration "
                    "to {})",
                    ident.to_string(), key, it->second, ours, ours, it->second);
        logger().info({iss::log::kv("stream", t.stream), iss::log::kv("topic", t.topic)},
                      "table {} at {}: {} (snapshot {})", ident.to_string(), loaded->location,
                      state->main() != nullptr ? "has data" : "empty", loaded->current_snapshot_id.value_or(-1));
        namer_.add(t, std::make_unique<pipeline::iceberg_key_namer>(columns_, spec_, std::move(*where)));
    }
    co_return result<void>{};
}

std::unique_ptr<iceberg::batch_plan> iceberg_run::plan(const pipeline::iceberg_batch& b) {
    std::vector<iceberg::pending_file> files;
    files.reserve(b.objects.size());
    iceberg::topic_created_map topics;  // iggy-s3-sink.topics: the creation time of the topic each offset is of
    for (const auto& o : b.objects) {
        auto values = namer_.values_of(o.partition, o.key);
        if (!values)
            return std::make_unique<refused_plan>(
                fmt::format("table {}: object {} was not named by this process's key namer: its partition value is "
                            "unknown (a bug; the batch is not committed)",
                            b.table.to_string(), o.key.get()));
        files.push_back(pipeline::iceberg_data_file(o, bucket_, std::move(*values)));
        if (const auto created = generations_.of(o.partition))
            topics[{o.partition.stream, o.partition.topic}] = *created;
    }
    return std::make_unique<pipeline::iceberg_batch_plan>(schema_, spec_, files_, clk_, b.table, std::move(files),
                                                          pipeline::iceberg_offsets(b.next_offsets), std::move(topics));
}

std::unique_ptr<pipeline::offset_store> iceberg_run::resume(pipeline::offset_store& iggy,
                                                            pipeline::message_source& topics) {
    return std::make_unique<pipeline::iceberg_resume_offsets>(
        iggy, topics, generations_, catalog_, [this](const pipeline::partition_ref& p) { return table_of(p); });
}

pipeline::task<pipeline::table_result> iceberg_run::commit(const pipeline::partition_ref& p,
                                                           std::span<const pipeline::durable_object> objects,
                                                           std::uint64_t through) {
    auto r = co_await step_->commit(p, objects, through);
    if (r.status == pipeline::table_status::ok)
        for (const auto& o : objects) namer_.forget(p, o.key);
    co_return r;
}

}  // namespace iss::app
