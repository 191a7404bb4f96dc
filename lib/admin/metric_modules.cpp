// SPDX-License-Identifier: Apache-2.0
// The families of the client modules' statistics seams (metric_families.hpp).
#include "admin/metric_families.hpp"
#include "admin/process.hpp"
#include "aws/refresh.hpp"
#include "iggy/client.hpp"
#include "pipeline/adapters/iceberg_table.hpp"
#include "s3/client.hpp"

#include <algorithm>
#include <limits>

namespace iss::admin::metric_families {

prom::MetricFamily family(std::string_view name, std::string help, prom::MetricType type) {
    prom::MetricFamily f;
    f.name = std::string{prefix} + std::string{name};
    f.help = std::move(help);
    f.type = type;
    return f;
}

prom::ClientMetric sample(std::vector<prom::ClientMetric::Label> labels, double v, prom::MetricType type) {
    prom::ClientMetric m;
    m.label = std::move(labels);
    if (type == prom::MetricType::Counter) m.counter.value = v;
    else m.gauge.value = v;
    return m;
}

std::vector<prom::ClientMetric::Label> topic_labels(const pipeline::topic_ref& t) {
    return {{"stream", t.stream}, {"topic", t.topic}};
}
std::vector<prom::ClientMetric::Label> partition_labels(const pipeline::partition_ref& p) {
    return {{"stream", p.stream}, {"topic", p.topic}, {"partition", std::to_string(p.partition)}};
}

prom::ClientMetric histogram_sample(std::vector<prom::ClientMetric::Label> labels, const iss::stats::histogram& h) {
    prom::ClientMetric m;
    m.label = std::move(labels);
    m.histogram.sample_count = h.count;
    m.histogram.sample_sum = h.sum;
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < h.bounds.size(); ++i) {
        cumulative += h.counts[i];
        m.histogram.bucket.push_back({cumulative, h.bounds[i]});
    }
    m.histogram.bucket.push_back({h.count, std::numeric_limits<double>::infinity()});
    return m;
}

void s3_metrics(std::vector<prom::MetricFamily>& out, const s3::client_stats& st) {
    auto req = family("s3_requests_total",
                      "HTTP requests sent to the store, by operation and answer (HTTP status, or "
                      "`error` when no response came).",
                      prom::MetricType::Counter);
    auto ret = family("s3_retries_total", "Retries (after a backoff wait), by operation.", prom::MetricType::Counter);
    auto dur = family("s3_request_duration_seconds", "Duration of one HTTP request to the store, by operation.",
                      prom::MetricType::Histogram);
    for (const auto& [op, o] : st.by_operation) {
        for (const auto& [code, n] : o.requests)
            req.metric.push_back(
                sample({{"operation", op}, {"code", code}}, static_cast<double>(n), prom::MetricType::Counter));
        ret.metric.push_back(sample({{"operation", op}}, static_cast<double>(o.retries), prom::MetricType::Counter));
        dur.metric.push_back(histogram_sample({{"operation", op}}, o.duration));
    }
    out.push_back(std::move(req));
    out.push_back(std::move(ret));
    out.push_back(std::move(dur));
    auto rs = family("s3_resigns_total", "Requests signed again after RequestTimeTooSkewed (the clock is off).",
                     prom::MetricType::Counter);
    rs.metric.push_back(sample({}, static_cast<double>(st.resigns), prom::MetricType::Counter));
    out.push_back(std::move(rs));
    auto off = family("s3_clock_offset_seconds",
                      "Offset added to the wall clock to sign S3 requests: the store's Date minus the local clock, "
                      "learnt from the last RequestTimeTooSkewed (0 until then).",
                      prom::MetricType::Gauge);
    off.metric.push_back(sample({}, static_cast<double>(st.clock_offset.count()) / 1000.0, prom::MetricType::Gauge));
    out.push_back(std::move(off));
    auto ce = family("s3_connection_errors_total",
                     "Requests to the store that got no answer, by reason (resolve, connect, timeout, "
                     "connection_closed, tls_certificate, tls_name, tls_handshake, other).",
                     prom::MetricType::Counter);
    for (const auto reason : s3::connection_error_reasons) {
        const auto it = st.connection_errors.find(reason);
        const double n = it == st.connection_errors.end() ? 0.0 : static_cast<double>(it->second);
        ce.metric.push_back(sample({{"reason", std::string{reason}}}, n, prom::MetricType::Counter));
    }
    out.push_back(std::move(ce));
    auto su = family("store_unreachable",
                     "1 while the store cannot be reached: the last request sent got no answer (see "
                     "s3_connection_errors_total for why); retried on a new connection at a backoff.",
                     prom::MetricType::Gauge);
    su.metric.push_back(sample({}, st.unreachable ? 1 : 0, prom::MetricType::Gauge));
    out.push_back(std::move(su));
}

void iggy_metrics(std::vector<prom::MetricFamily>& out, const iggy::client_stats& st) {
    auto rc = family("iggy_reconnects_total", "Connections to Iggy made again after the first one.",
                     prom::MetricType::Counter);
    rc.metric.push_back(sample({}, static_cast<double>(st.reconnects), prom::MetricType::Counter));
    out.push_back(std::move(rc));
    auto req = family("iggy_requests_total",
                      "Requests sent to Iggy, by command and answer (status code, 0 = ok, or "
                      "`error` when no reply came).",
                      prom::MetricType::Counter);
    for (const auto& [key, n] : st.requests)
        req.metric.push_back(
            sample({{"command", key.first}, {"code", key.second}}, static_cast<double>(n), prom::MetricType::Counter));
    out.push_back(std::move(req));
}

void credentials_metrics(std::vector<prom::MetricFamily>& out, const aws::refreshing_source& src) {
    const auto& id = src.last();
    if (id.expiry) {
        auto f = family("credentials_expiry_timestamp_seconds",
                        "When the S3 credentials in force expire, seconds since the epoch (absent for long-lived "
                        "keys); renewed ahead of it.",
                        prom::MetricType::Gauge);
        const std::chrono::duration<double> at = id.expiry->time_since_epoch();
        f.metric.push_back(sample({{"source", id.source}}, at.count(), prom::MetricType::Gauge));
        out.push_back(std::move(f));
    }
    const auto& st = src.stats();
    auto fetches = family("credentials_fetches_total", "S3 credential fetches started (the first and each renewal).",
                          prom::MetricType::Counter);
    fetches.metric.push_back(sample({}, static_cast<double>(st.fetches), prom::MetricType::Counter));
    out.push_back(std::move(fetches));
    auto failures =
        family("credentials_fetch_failures_total", "S3 credential fetches that failed.", prom::MetricType::Counter);
    failures.metric.push_back(sample({}, static_cast<double>(st.failures), prom::MetricType::Counter));
    out.push_back(std::move(failures));
}

/// The Iceberg table step's commits (lib/pipeline/adapters/iceberg_table.hpp). The duration has
/// the buckets of the other duration histograms (stats::duration_bounds).
void iceberg_metrics(std::vector<prom::MetricFamily>& out, const pipeline::iceberg_table_stats& st,
                     const iss::clock& clk) {
    auto commits = family("iceberg_commits_total",
                          "Batches of data files committed to Iceberg tables, by result: committed (a new snapshot), "
                          "found (a reload showed the batch in the table already), failed (the attempt ended in an "
                          "error; the batch is tried again).",
                          prom::MetricType::Counter);
    for (const auto& [result, n] : {std::pair{"committed", st.commits_ok}, std::pair{"found", st.commits_found},
                                    std::pair{"failed", st.commits_failed}})
        commits.metric.push_back(sample({{"result", result}}, static_cast<double>(n), prom::MetricType::Counter));
    out.push_back(std::move(commits));
    auto dur = family("iceberg_commit_duration_seconds",
                      "Time one batch spent in the commit loop (metadata files written, the catalog's commit, "
                      "reloads after conflicts).",
                      prom::MetricType::Histogram);
    dur.metric.push_back(histogram_sample({}, st.duration));
    out.push_back(std::move(dur));
    auto conflicts = family("iceberg_conflicts_total",
                            "Commits the catalog refused with 409 (another writer committed first); the batch is "
                            "planned again on the new snapshot.",
                            prom::MetricType::Counter);
    conflicts.metric.push_back(sample({}, static_cast<double>(st.conflicts), prom::MetricType::Counter));
    out.push_back(std::move(conflicts));
    auto up = family("iceberg_catalog_up",
                     "1 when the Iceberg catalog answered the table step's last attempt (or none failed yet), 0 "
                     "while it cannot be reached (no connection, 5xx, no answer to a commit); /readyz names it.",
                     prom::MetricType::Gauge);
    up.metric.push_back(sample({}, st.catalog_unreachable ? 0.0 : 1.0, prom::MetricType::Gauge));
    out.push_back(std::move(up));
    auto refusing = family("iceberg_catalog_refusing",
                           "1 while the Iceberg catalog refuses commits (its answer to the last attempt was 401, 403, "
                           "404 or another 4xx), else 0; /readyz names the code.",
                           prom::MetricType::Gauge);
    refusing.metric.push_back(sample({}, st.catalog_refusing ? 1.0 : 0.0, prom::MetricType::Gauge));
    out.push_back(std::move(refusing));
    auto unreachable =
        family("iceberg_catalog_unreachable_total", "Table step attempts that could not reach the Iceberg catalog.",
               prom::MetricType::Counter);
    unreachable.metric.push_back(
        sample({}, static_cast<double>(st.catalog_unreachable_total), prom::MetricType::Counter));
    out.push_back(std::move(unreachable));
    if (st.last_commit) {
        auto age = family("iceberg_last_commit_age_seconds",
                          "Seconds since the last batch was committed (or found committed); absent before the first.",
                          prom::MetricType::Gauge);
        const std::chrono::duration<double> since =
            clk.steady_now() - *st.last_commit;  // steady: a clock step moves no age
        age.metric.push_back(sample({}, std::max(0.0, since.count()), prom::MetricType::Gauge));
        out.push_back(std::move(age));
    }
}

/// The standard process collector's families (process.hpp), without the iggy_s3_sink_ prefix.
void process_metrics(std::vector<prom::MetricFamily>& out) {
    const auto p = read_process_stats();
    if (!p) return;
    const auto one = [&](const char* name, const char* help, prom::MetricType type, double v) {
        prom::MetricFamily f;
        f.name = name;
        f.help = help;
        f.type = type;
        f.metric.push_back(sample({}, v, type));
        out.push_back(std::move(f));
    };
    one("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", prom::MetricType::Counter,
        p->cpu_seconds);
    one("process_resident_memory_bytes", "Resident memory size in bytes.", prom::MetricType::Gauge,
        static_cast<double>(p->resident_bytes));
    one("process_virtual_memory_bytes", "Virtual memory size in bytes.", prom::MetricType::Gauge,
        static_cast<double>(p->virtual_bytes));
    one("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", prom::MetricType::Gauge,
        p->start_time_seconds);
    if (p->open_fds)
        one("process_open_fds", "Number of open file descriptors.", prom::MetricType::Gauge,
            static_cast<double>(*p->open_fds));
    if (p->max_fds)
        one("process_max_fds", "Maximum number of open file descriptors.", prom::MetricType::Gauge,
            static_cast<double>(*p->max_fds));
}

}  // namespace iss::admin::metric_families
