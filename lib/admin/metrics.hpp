// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The Prometheus metrics of the daemon (`GET /metrics`), rendered at scrape time from each
/// module's own statistics seam: `pipeline::router` (writer counters per topic, buffers,
/// upload and commit timings), `pipeline::consumer_loop` (assignment, heads from polls),
/// `s3::client_stats`, `iggy::client_stats`. Nothing is kept here between scrapes, so a
/// metric can never disagree with the module that owns the number.
///
/// Names, units and labels (base units, prefix `iggy_s3_sink_`; `stream`, `topic` on the
/// pipeline metrics, `partition` only on the per-partition gauges):
///
/// | metric | type | labels |
/// | --- | --- | --- |
/// | `messages_total`, `payload_bytes_total`, `objects_total`, `uploaded_bytes_total` (as stored), `adopted_objects_total`, `dead_letters_total` | counter | stream, topic |
/// | `bytes_in_total`, `bytes_uploaded_total`: deprecated duplicates of the two byte counters (CHANGELOG.md) | counter | stream, topic |
/// | `bad_messages_total` | counter | stream, topic, policy |
/// | `committed_offset`, `head_offset`, `lag_messages`, `last_commit_timestamp_seconds` | gauge | stream, topic, partition |
/// | `partition_stopped` (1, only for a stopped partition) | gauge | stream, topic, partition, reason |
/// | `upload_duration_seconds`, `commit_duration_seconds` | histogram | - |
/// | `buffered_bytes`, `open_objects`, `assigned_partitions` | gauge | stream, topic |
/// | `source_unavailable`, `offset_reset_partitions` | gauge | stream, topic |
/// | `offset_restarts_total` | counter | stream, topic |
/// | `spool_errors_total` | counter | reason |
/// | `store_refusing` | gauge | - |
/// | `store_refusals_total` | counter | code |
/// | `s3_requests_total` | counter | operation, code |
/// | `s3_retries_total` | counter | operation |
/// | `s3_resigns_total` | counter | - |
/// | `s3_clock_offset_seconds` | gauge | - |
/// | `s3_connection_errors_total` | counter | reason (`resolve`, `connect`, `timeout`, `connection_closed`, `tls_certificate`, `tls_name`, `tls_handshake`, `other`) |
/// | `store_unreachable` | gauge | - |
/// | `s3_request_duration_seconds` | histogram | operation |
/// | `iggy_reconnects_total` | counter | - |
/// | `iggy_requests_total` | counter | command, code |
/// | `config_reloads_total` | counter | result (`success`, `failure`, `unchanged`) |
/// | `admin_connections` | gauge | - |
/// | `admin_connections_total` | counter | - |
/// | `admin_connections_closed_total` | counter | reason (`max_connections`, `idle_timeout`, `header_timeout`, `bad_request`, `header_too_large`) |
/// | `credentials_expiry_timestamp_seconds` (temporary credentials only) | gauge | source |
/// | `credentials_fetches_total`, `credentials_fetch_failures_total` | counter | - |
/// | `build_info` | gauge (1) | version, commit |
///
/// Besides, without the prefix, the standard process collector's `process_cpu_seconds_total`,
/// `process_resident_memory_bytes`, `process_virtual_memory_bytes`, `process_open_fds`,
/// `process_max_fds`, `process_start_time_seconds` (process.hpp).
///
/// `lag_messages` is pipeline::compute_lag over the same head and committed offsets that
/// `iggy-s3-sink lag` reads from the server.
///
/// The registry and text format are prometheus-cpp's core (`prometheus::MetricFamily`,
/// `prometheus::TextSerializer`, exposition format 0.0.4); its HTTP server (civetweb, with
/// threads of its own) is not used: the admin server (server.hpp) runs on the event loop.

#include "common/clock.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace iss::pipeline {
class router;
class consumer_loop;
struct iceberg_table_stats;
}  // namespace iss::pipeline
namespace iss::s3 {
struct client_stats;
}
namespace iss::iggy {
struct client_stats;
}
namespace iss::aws {
class refreshing_source;
}

namespace iss::admin {

struct server_stats;

/// Configuration reloads (SIGHUP) since the start: applied (in place, or the new
/// configuration consumes), refused (invalid, its new store refused, or its pipeline stopped
/// before consuming), and unchanged (the file means what the running configuration means).
struct config_reloads {
    std::uint64_t success = 0;
    std::uint64_t failure = 0;
    std::uint64_t unchanged = 0;
};

class carried_totals;

/// Where the numbers come from. Every pointer may be null (not there yet, e.g. while the
/// store is probed at start): its metrics are then left out. The pointees must outlive the
/// call that reads them; all of them live on the event-loop thread.
struct metric_sources {
    const pipeline::router* router = nullptr;
    const pipeline::consumer_loop* consumer = nullptr;
    const s3::client_stats* s3 = nullptr;
    const iggy::client_stats* iggy = nullptr;
    std::string version;                                     ///< build_info{version}
    std::string commit;                                      ///< build_info{commit} (may be empty)
    const config_reloads* reloads = nullptr;                 ///< `config_reloads_total` (`run` only)
    const aws::refreshing_source* credentials = nullptr;     ///< the S3 credentials in force
    const pipeline::iceberg_table_stats* iceberg = nullptr;  ///< the Iceberg table step (`iceberg` set)
    const server_stats* admin = nullptr;                     ///< the admin server's connections (`run` only)
    /// What sources that are gone had counted (a reload rebuilt them); added to the live
    /// sources' counters and histograms. Null: nothing carried.
    const carried_totals* carried = nullptr;
    /// The clock of the ages (`iceberg_last_commit_age_seconds`, on its steady time); null: the real clock.
    const iss::clock* clock = nullptr;
};

/// The counters and histograms of statistics sources that are gone, so that a series never
/// goes down over the life of the process (Prometheus counters are monotonic; a drop reads
/// as a restart to `rate()` and `increase()`).
///
/// Naive version: the metrics read each module's own statistics (router, S3 client, Iggy
/// client), so when a reload rebuilds one of them its series start again at 0. Instead, just
/// before such an object goes, `carry` takes what it counts now; render_metrics adds that to
/// the live numbers of the same series (same family, same labels), and renders a carried
/// series alone while no live source has it. Gauges are not carried (they describe the
/// present). Event-loop thread only, like the sources.
class carried_totals {
public:
    carried_totals();
    ~carried_totals();
    carried_totals(const carried_totals&) = delete;
    carried_totals& operator=(const carried_totals&) = delete;

    /// Adds the counters and histograms `ended` renders now (its pointers: the objects about
    /// to go; version, commit and reloads are ignored). Call with no suspension between it
    /// and the objects' pointers being cleared, so no scrape counts them twice.
    void carry(const metric_sources& ended);

    /// The sum of every carried sample of the counter family `name` (without the
    /// `iggy_s3_sink_` prefix, e.g. "messages_total"); 0 when none was carried.
    [[nodiscard]] std::uint64_t total(std::string_view name) const;

    struct state;
    [[nodiscard]] const state& get() const noexcept { return *s_; }

private:
    std::unique_ptr<state> s_;
};

/// What the daemon has delivered since it started, over reloads: the running pipeline's
/// counters (`live`, may be null between generations) plus what `carried` holds of the
/// pipelines a reload replaced. For systemd's STATUS= line, whose numbers must not start
/// again at 0 after a reload any more than the metrics do.
struct lifetime_totals {
    std::uint64_t messages = 0;  ///< messages_total: messages in objects that became durable
    std::uint64_t objects = 0;   ///< objects_total: objects written and acknowledged
    std::uint64_t adopted = 0;   ///< adopted_objects_total: objects found existing (412) and adopted
    friend bool operator==(const lifetime_totals&, const lifetime_totals&) = default;
};
[[nodiscard]] lifetime_totals totals_since_start(const pipeline::router* live, const carried_totals& carried);

/// The content type of render_metrics' output.
inline constexpr const char* metrics_content_type = "text/plain; version=0.0.4; charset=utf-8";

/// Renders every metric in the Prometheus text exposition format 0.0.4.
[[nodiscard]] std::string render_metrics(const metric_sources& s);

}  // namespace iss::admin
