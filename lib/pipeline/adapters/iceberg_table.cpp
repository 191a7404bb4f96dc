// SPDX-License-Identifier: Apache-2.0
// The Iceberg table step (iceberg_table.hpp): per table, a pending batch that is committed
// when due, by one caller at a time, through lib/iceberg's commit loop.
#include "pipeline/adapters/iceberg_table.hpp"

#include "common/log.hpp"
#include "iceberg/error.hpp"

#include <algorithm>
#include <set>

namespace iss::pipeline {

namespace {

const log::logger& logger() {
    static const log::logger l{"iceberg"};
    return l;
}

table_status status_of(const error& e) {
    if (e == iceberg::errc::overlap) return table_status::fatal;  // committing would duplicate rows
    if (e.code().category() != iceberg::catalog_category()) return table_status::retryable;  // the store, the plan
    if (iceberg::retryable(e) || e == iceberg::catalog_errc::bad_response) return table_status::retryable;
    return table_status::fatal;
}

}  // namespace

struct iceberg_table_step::table_state {
    explicit table_state(boost::asio::any_io_executor ex) : mu{std::move(ex)} {}
    async_mutex mu;                                 ///< one commit of this table at a time
    std::optional<iceberg::loaded_table> table;     ///< as last loaded or committed
    std::map<std::string, durable_object> pending;  ///< by key: the batch being gathered
    std::map<partition_ref, std::uint64_t> pending_through;
    std::map<partition_ref, std::uint64_t> committed_through;  ///< what this process committed
    std::set<std::string> committing;                          ///< keys of the batch being committed
    std::optional<iss::clock::steady_time> since;              ///< the batch's first object
    unsigned failures = 0;                                     ///< failed commits in a row (backoff step, at most 30)
    unsigned failed_in_row = 0;                                ///< failed commits in a row (the log's attempt)
    std::optional<iss::clock::steady_time> retry_at;           ///< after a failure: not before
};

iceberg_table_step::iceberg_table_step(boost::asio::any_io_executor ex, iceberg::catalog_client& catalog,
                                       iceberg::metadata_writer& files, iceberg_plan_factory plans,
                                       iceberg_table_options opts, const iss::clock& clk)
    : ex_{std::move(ex)},
      catalog_{catalog},
      files_{files},
      plans_{std::move(plans)},
      opts_{std::move(opts)},
      clk_{clk} {}

iceberg_table_step::~iceberg_table_step() = default;

iceberg_table_step::table_state& iceberg_table_step::state_of(const iceberg::table_ident& t) {
    auto& slot = tables_[t.to_string()];
    if (!slot) slot = std::make_unique<table_state>(ex_);
    return *slot;
}

task<table_result> iceberg_table_step::commit(const partition_ref& p, std::span<const durable_object> objects,
                                              std::uint64_t through) {
    const iceberg::table_ident t = opts_.table_for(p);
    table_state& st = state_of(t);
    auto done = [&] {
        const auto it = st.committed_through.find(p);
        return it != st.committed_through.end() && it->second >= through;
    };
    if (done()) co_return table_result{};
    // An object of the batch being committed (handed again by its partition meanwhile), or
    // one a commit already took, is not taken twice: a later batch would register its data
    // file a second time.
    for (const auto& o : objects)
        if (!st.committing.contains(o.key.get()) && !in_table(st, o)) st.pending.try_emplace(o.key.get(), o);
    auto& pt = st.pending_through[p];
    pt = std::max(pt, through);
    if (!st.since) st.since = clk_.steady_now();
    const bool now = flushing_ || handing_over_.contains(p);
    if (!now && clk_.steady_now() - *st.since < opts_.commit_interval)
        co_return table_result{table_status::deferred, "waiting for the table's next commit (iceberg.commit_interval)"};
    if (!now && st.retry_at && clk_.steady_now() < *st.retry_at)
        co_return table_result{table_status::deferred, "waiting to retry the table's failed commit"};
    auto guard = co_await st.mu.lock();
    if (done()) co_return table_result{};  // committed by another partition's call meanwhile
    co_return co_await commit_due(st, t);
}

task<table_result> iceberg_table_step::commit_due(table_state& st, const iceberg::table_ident& t) {
    const std::string name = t.to_string();
    if (!st.table) {
        auto create = opts_.create;
        create.name = t.name;
        auto l = co_await catalog_.ensure_table(t, std::move(create), opts_.create_missing);
        if (!l) co_return failed(st, t, 0, l.error());
        st.table = std::move(*l);
    }
    // The batch leaves the pending set while it is committed: objects handed meanwhile start
    // the next batch; on failure this one goes back.
    iceberg_batch batch;
    batch.table = t;
    auto taken = std::exchange(st.pending, {});
    auto taken_through = std::exchange(st.pending_through, {});
    st.since.reset();
    for (auto& [k, o] : taken) {
        batch.objects.push_back(o);
        st.committing.insert(k);
    }
    std::stable_sort(batch.objects.begin(), batch.objects.end(), [](const durable_object& a, const durable_object& b) {
        return std::tie(a.partition, a.range.first_offset) < std::tie(b.partition, b.range.first_offset);
    });
    for (const auto& [p, through] : taken_through) batch.next_offsets[p] = through + 1;
    auto plan = plans_(batch);
    const auto started = clk_.steady_now();
    auto r = co_await iceberg::commit_batch(catalog_, files_, t, *st.table, *plan);
    const double took = std::chrono::duration<double>(clk_.steady_now() - started).count();
    st.committing.clear();
    stats_.duration.observe(took);
    if (!r) {
        st.table.reset();  // loaded again before the next attempt
        for (auto& [k, o] : taken) st.pending.try_emplace(k, std::move(o));
        for (const auto& [p, through] : taken_through) {
            auto& pt = st.pending_through[p];
            pt = std::max(pt, through);
        }
        if (!st.since) st.since = clk_.steady_now() - opts_.commit_interval;  // due once the wait is over
        co_return failed(st, t, batch.objects.size(), r.error());
    }
    st.failures = 0;
    st.failed_in_row = 0;
    st.retry_at.reset();
    catalog_answered();
    if (stats_.catalog_refusing) {
        logger().info("the catalog accepts commits again ({})", opts_.catalog_host);
        stats_.catalog_refusing.reset();
    }
    stats_.conflicts += r->conflicts;
    stats_.unknown_outcomes += r->unknown_outcomes;
    if (r->found_committed) ++stats_.commits_found;
    else ++stats_.commits_ok;
    stats_.last_commit = clk_.steady_now();
    for (const auto& [p, through] : taken_through) {
        auto& ct = st.committed_through[p];
        ct = std::max(ct, through);
    }
    logger().info("table {}: {} objects of {} partitions {} snapshot {} ({} attempts, {} conflicts, {:.3f} s)", name,
                  batch.objects.size(), taken_through.size(), r->found_committed ? "found in" : "committed as",
                  r->table.current_snapshot_id.value_or(-1), r->attempts, r->conflicts, took);
    st.table = std::move(r->table);
    // What was handed meanwhile and is in the table now leaves the next batch.
    std::erase_if(st.pending, [&](const auto& e) { return in_table(st, e.second); });
    std::erase_if(st.pending_through, [&](const auto& e) {
        const auto c = st.committed_through.find(e.first);
        return c != st.committed_through.end() && c->second >= e.second;
    });
    if (st.pending.empty() && st.pending_through.empty()) st.since.reset();
    co_return table_result{};
}

table_result iceberg_table_step::failed(table_state& st, const iceberg::table_ident& t, std::size_t objects,
                                        const iss::error& e) {
    ++stats_.commits_failed;
    catalog_failed(e);
    if (const auto code = refusal_code(e)) {
        auto now = fmt::format("{}: {}", *code, e.message());
        if (!stats_.catalog_refusing || !stats_.catalog_refusing->starts_with(fmt::format("{}:", *code)))
            logger().error(
                "the catalog refuses commits ({}): the batches wait and are tried again at a backoff up to "
                "s3.retry.cap; nothing is lost",
                now);
        stats_.catalog_refusing = std::move(now);
    }
    const auto wait = full_jitter_delay(opts_.retry_backoff, st.failures, rng_);
    ++st.failed_in_row;
    st.failures = std::min(st.failures + 1, 30u);
    st.retry_at = clk_.steady_now() + wait;
    // A missing table (never created, or dropped while running): what happens next depends on
    // iceberg.create, so the message says which.
    std::string what = e.message();
    const bool recreated = e == iceberg::catalog_errc::not_found && opts_.create_missing;
    if (e == iceberg::catalog_errc::not_found)
        what += opts_.create_missing
                    ? "; it is created again (iceberg.create: true) at the next attempt and holds what is committed "
                      "from then on"
                    : "; iceberg.create is false: create the table, or set iceberg.create: true";
    logger().warn("table {}: commit of {} objects failed: {}; trying again in {} ms", t.to_string(), objects, what,
                  wait.count());
    return table_result{recreated ? table_status::retryable : status_of(e), what, st.failed_in_row};
}

std::optional<std::string_view> iceberg_table_step::refusal_code(const iss::error& e) const {
    if (e.code().category() != iceberg::catalog_category()) return std::nullopt;
    switch (static_cast<iceberg::catalog_errc>(e.code().value())) {
        case iceberg::catalog_errc::unauthorized: return "unauthorized";
        case iceberg::catalog_errc::forbidden: return "forbidden";
        // a table dropped under iceberg.create: true is created again, not refused
        case iceberg::catalog_errc::not_found:
            return opts_.create_missing ? std::nullopt : std::optional<std::string_view>{"not_found"};
        case iceberg::catalog_errc::bad_request: return "bad_request";
        default: return std::nullopt;
    }
}

void iceberg_table_step::catalog_failed(const iss::error& e) {
    if (!(e == iceberg::catalog_errc::unavailable || e == iceberg::catalog_errc::unknown_outcome)) {
        catalog_answered();  // it answered (with a refusal)
        return;
    }
    ++stats_.catalog_unreachable_total;
    if (!stats_.catalog_unreachable)
        logger().error("catalog unreachable ({}): commits wait and are tried again at a backoff; nothing is lost",
                       e.message());
    stats_.catalog_unreachable = fmt::format("{}: {}", opts_.catalog_host, e.message());
}

void iceberg_table_step::catalog_answered() {
    if (!stats_.catalog_unreachable) return;
    logger().info("the catalog answers again ({})", opts_.catalog_host);
    stats_.catalog_unreachable.reset();
}

void iceberg_table_step::handing_over(const partition_ref& p, bool on) {
    if (on) handing_over_.insert(p);
    else handing_over_.erase(p);
}

bool iceberg_table_step::in_table(const table_state& st, const durable_object& o) {
    const auto c = st.committed_through.find(o.partition);
    return c != st.committed_through.end() && o.range.last_offset <= c->second;
}

}  // namespace iss::pipeline
