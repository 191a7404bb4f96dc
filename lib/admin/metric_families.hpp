// SPDX-License-Identifier: Apache-2.0
// Internal to lib/admin: the helpers every metric family of metrics.cpp and metric_modules.cpp
// is built with (prometheus-cpp's MetricFamily and ClientMetric, the iggy_s3_sink_ prefix),
// and the families of the client modules' statistics seams (S3, Iggy, credentials, Iceberg,
// the process), rendered by render_metrics (metrics.hpp).
#pragma once

#include "admin/metrics.hpp"
#include "common/stats.hpp"
#include "pipeline/types.hpp"

#include <prometheus/client_metric.h>
#include <prometheus/metric_family.h>

#include <string>
#include <string_view>
#include <vector>

namespace iss::aws {
class refreshing_source;
}
namespace iss::iggy {
struct client_stats;
}
namespace iss::s3 {
struct client_stats;
}
namespace iss::pipeline {
struct iceberg_table_stats;
}

namespace iss::admin::metric_families {

namespace prom = prometheus;
inline constexpr std::string_view prefix = "iggy_s3_sink_";

/// A family named iggy_s3_sink_NAME.
[[nodiscard]] prom::MetricFamily family(std::string_view name, std::string help, prom::MetricType type);
/// One counter or gauge sample.
[[nodiscard]] prom::ClientMetric sample(std::vector<prom::ClientMetric::Label> labels, double v, prom::MetricType type);
/// `stream`, `topic` labels.
[[nodiscard]] std::vector<prom::ClientMetric::Label> topic_labels(const pipeline::topic_ref& t);
/// `stream`, `topic`, `partition` labels.
[[nodiscard]] std::vector<prom::ClientMetric::Label> partition_labels(const pipeline::partition_ref& p);
/// A histogram sample (cumulative buckets, +Inf last) from `h`.
[[nodiscard]] prom::ClientMetric histogram_sample(std::vector<prom::ClientMetric::Label> labels,
                                                  const iss::stats::histogram& h);

void s3_metrics(std::vector<prom::MetricFamily>& out, const s3::client_stats& st);
void iggy_metrics(std::vector<prom::MetricFamily>& out, const iggy::client_stats& st);
void credentials_metrics(std::vector<prom::MetricFamily>& out, const aws::refreshing_source& src);
void iceberg_metrics(std::vector<prom::MetricFamily>& out, const pipeline::iceberg_table_stats& st,
                     const iss::clock& clk);
/// The standard process collector's families (process.hpp), without the iggy_s3_sink_ prefix.
void process_metrics(std::vector<prom::MetricFamily>& out);

}  // namespace iss::admin::metric_families
