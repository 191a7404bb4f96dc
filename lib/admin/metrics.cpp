// SPDX-License-Identifier: Apache-2.0
#include "admin/metrics.hpp"

#include "admin/metric_families.hpp"
#include "admin/process.hpp"
#include "admin/server.hpp"
#include "aws/refresh.hpp"
#include "iggy/client.hpp"
#include "pipeline/adapters/iceberg_table.hpp"
#include "pipeline/consumer.hpp"
#include "pipeline/health.hpp"
#include "pipeline/lag.hpp"
#include "pipeline/router.hpp"
#include "s3/client.hpp"

#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <sstream>

namespace iss::admin {

namespace {

namespace prom = prometheus;
using namespace metric_families;

/// Per partition: the assigned (polled) partitions and those with a writer.
void partition_metrics(std::vector<prom::MetricFamily>& out, const metric_sources& s) {
    std::set<pipeline::partition_ref> parts;
    for (const auto& p : s.router->partitions()) parts.insert(p);
    if (s.consumer)
        for (const auto& p : s.consumer->assignment()) parts.insert(p);
    auto committed = family("committed_offset", "Offset stored in Iggy for this consumer (the last message delivered).",
                            prom::MetricType::Gauge);
    auto head =
        family("head_offset", "The partition's newest offset, as the last poll reported it.", prom::MetricType::Gauge);
    auto lag = family("lag_messages", "Messages between the committed offset and the head (as `iggy-s3-sink lag`).",
                      prom::MetricType::Gauge);
    auto last_commit = family("last_commit_timestamp_seconds",
                              "When this process last stored the partition's offset (or read it, before its first "
                              "store), seconds since the epoch.",
                              prom::MetricType::Gauge);
    auto stopped = family("partition_stopped",
                          "1 for a partition this process stopped (reason bad_message: delivery.on_bad_message is "
                          "fail; foreign_object: an object without iggy-* metadata at its key). docs/operations.md "
                          "says how to recover.",
                          prom::MetricType::Gauge);
    for (const auto& p : parts) {
        std::optional<std::uint64_t> c;
        if (const auto* w = s.router->find(p)) {
            c = w->committed();
            const std::chrono::duration<double> at = w->last_commit_time().time_since_epoch();
            last_commit.metric.push_back(sample(partition_labels(p), at.count(), prom::MetricType::Gauge));
            if (w->state() == pipeline::writer_state::failed) {
                auto l = partition_labels(p);
                l.push_back({"reason", std::string{w->stop_reason()}});
                stopped.metric.push_back(sample(std::move(l), 1, prom::MetricType::Gauge));
            }
        }
        std::optional<std::uint64_t> h;
        if (s.consumer) {
            const auto& heads = s.consumer->heads();
            if (auto it = heads.find(p); it != heads.end()) h = it->second;
        }
        if (c)
            committed.metric.push_back(sample(partition_labels(p), static_cast<double>(*c), prom::MetricType::Gauge));
        if (h) head.metric.push_back(sample(partition_labels(p), static_cast<double>(*h), prom::MetricType::Gauge));
        if (h || c) {
            // A poll reports the head, not the message count: a known head means messages up
            // to it exist (the count only matters when nothing is committed).
            const std::uint64_t count = h ? *h + 1 : 0;
            const auto l = pipeline::compute_lag(count, h.value_or(0), c);
            lag.metric.push_back(sample(partition_labels(p), static_cast<double>(l), prom::MetricType::Gauge));
        }
    }
    out.push_back(std::move(committed));
    out.push_back(std::move(head));
    out.push_back(std::move(lag));
    out.push_back(std::move(last_commit));
    out.push_back(std::move(stopped));
}

/// A gauge family with one sample per topic.
prom::MetricFamily topic_gauge(std::string_view name, std::string help,
                               const std::map<pipeline::topic_ref, std::uint64_t>& values,
                               prom::MetricType type = prom::MetricType::Gauge) {
    auto f = family(name, std::move(help), type);
    for (const auto& [tp, v] : values) f.metric.push_back(sample(topic_labels(tp), static_cast<double>(v), type));
    return f;
}

// The source faults (docs/operations.md, Faults): every topic of `topics`, and every one that
// cannot be read, answers 0 or its count.
void source_fault_metrics(std::vector<prom::MetricFamily>& out, const pipeline::consumer_loop& c,
                          const std::set<pipeline::topic_ref>& topics) {
    std::map<pipeline::topic_ref, std::uint64_t> unavailable, resets, restarts;
    for (const auto& tp : topics) unavailable[tp] = resets[tp] = restarts[tp] = 0;
    for (const auto& [tp, n] : c.offset_restarts()) restarts[tp] = n;
    for (const auto& u : c.unavailable_sources()) {
        unavailable[u.topic] = 1;
        resets.try_emplace(u.topic, 0);
    }
    for (const auto& x : c.offset_resets()) {
        const pipeline::topic_ref tp{x.partition.stream, x.partition.topic};
        resets[tp] += 1;
        unavailable.try_emplace(tp, 0);
    }
    out.push_back(topic_gauge("source_unavailable",
                              "1 while the topic, or one of its partitions, cannot be read (missing stream or topic, "
                              "permission denied); retried at a backoff.",
                              unavailable));
    out.push_back(topic_gauge("offset_reset_partitions",
                              "Partitions stopped because their next offset lies past the partition's newest offset "
                              "(the topic was created again; iggy.on_offset_reset: fail).",
                              resets));
    out.push_back(topic_gauge("offset_restarts_total",
                              "Partitions restarted at their first message after an offset reset, under the new "
                              "topic's keys (the topic was created again; iggy.on_offset_reset: earliest).",
                              restarts, prom::MetricType::Counter));
}

// The delivery faults (docs/operations.md, Faults; pipeline/health.hpp).
void health_metrics(std::vector<prom::MetricFamily>& out, const pipeline::delivery_health& h) {
    auto se = family("spool_errors_total",
                     "Failed spool writes and failed checks of the spool directory, by reason (no_space, read_only, "
                     "missing, io_error); objects are closed at about s3.part_size meanwhile.",
                     prom::MetricType::Counter);
    for (const auto r : pipeline::spool_error_reasons)
        se.metric.push_back(sample({{"reason", std::string{pipeline::to_string(r)}}},
                                   static_cast<double>(h.spool_errors(r)), prom::MetricType::Counter));
    out.push_back(std::move(se));
    auto sr = family("store_refusing",
                     "1 while the store refuses writes (the last upload was refused: AccessDenied, "
                     "KMS.DisabledException ...); uploads are retried at a backoff up to s3.retry.cap.",
                     prom::MetricType::Gauge);
    sr.metric.push_back(sample({}, h.store_refusal() ? 1 : 0, prom::MetricType::Gauge));
    out.push_back(std::move(sr));
    auto rt = family("store_refusals_total", "Uploads and HEADs the store refused, by its error code.",
                     prom::MetricType::Counter);
    for (const auto& [code, n] : h.store_refusals())
        rt.metric.push_back(sample({{"code", code}}, static_cast<double>(n), prom::MetricType::Counter));
    out.push_back(std::move(rt));
}

void pipeline_metrics(std::vector<prom::MetricFamily>& out, const metric_sources& s) {
    if (!s.router) return;
    const auto totals = s.router->totals_by_topic();
    struct counter_def {
        std::string_view name;
        const char* help;
        decltype(&pipeline::writer_counters::records_written) field;  // a std::uint64_t member
    };
    const counter_def counters[] = {
        {"messages_total", "Messages written into objects that became durable.",
         &pipeline::writer_counters::records_written},
        {"payload_bytes_total", "Message payload bytes written into objects that became durable.",
         &pipeline::writer_counters::payload_bytes_written},
        {"objects_total", "Objects written and acknowledged by the store.",
         &pipeline::writer_counters::objects_written},
        {"uploaded_bytes_total", "Bytes of the objects written (as stored: encoded and compressed).",
         &pipeline::writer_counters::bytes_uploaded},
        // Deprecated names (CHANGELOG.md): the same numbers under the names of 0.1; removed in 0.3.
        {"bytes_in_total", "Deprecated: use iggy_s3_sink_payload_bytes_total (the same number).",
         &pipeline::writer_counters::payload_bytes_written},
        {"bytes_uploaded_total", "Deprecated: use iggy_s3_sink_uploaded_bytes_total (the same number).",
         &pipeline::writer_counters::bytes_uploaded},
        {"adopted_objects_total", "Objects that existed already (412) and whose range was adopted.",
         &pipeline::writer_counters::objects_adopted},
        {"dead_letters_total", "Bad messages sent to the dead-letter topic.",
         &pipeline::writer_counters::bad_dead_lettered},
    };
    for (const auto& c : counters) {
        auto f = family(c.name, c.help, prom::MetricType::Counter);
        for (const auto& [t, w] : totals)
            f.metric.push_back(sample(topic_labels(t), static_cast<double>(w.*c.field), prom::MetricType::Counter));
        out.push_back(std::move(f));
    }
    {
        auto f = family("bad_messages_total", "Messages the format refused, by delivery.on_bad_message policy.",
                        prom::MetricType::Counter);
        for (const auto& [t, w] : totals) {
            auto with = [&](const char* policy, std::uint64_t v) {
                auto l = topic_labels(t);
                l.push_back({"policy", policy});
                f.metric.push_back(sample(std::move(l), static_cast<double>(v), prom::MetricType::Counter));
            };
            with("fail", w.bad_failed);
            with("skip", w.bad_skipped);
            with("dead_letter", w.bad_dead_lettered);
        }
        out.push_back(std::move(f));
    }

    partition_metrics(out, s);

    const auto& t = s.router->timings();
    auto up =
        family("upload_duration_seconds", "Object closed until durable (acknowledged or adopted), retries included.",
               prom::MetricType::Histogram);
    up.metric.push_back(histogram_sample({}, t.upload));
    out.push_back(std::move(up));
    auto cm =
        family("commit_duration_seconds", "One successful StoreConsumerOffset call.", prom::MetricType::Histogram);
    cm.metric.push_back(histogram_sample({}, t.commit));
    out.push_back(std::move(cm));

    const auto buffers = s.router->buffers_by_topic();
    auto bb = family("buffered_bytes", "Bytes held in open objects (memory and spool file).", prom::MetricType::Gauge);
    auto oo = family("open_objects", "Objects open (holding messages not yet uploaded).", prom::MetricType::Gauge);
    std::set<pipeline::topic_ref> topics;
    for (const auto& [tp, w] : totals) topics.insert(tp);
    for (const auto& [tp, g] : buffers) topics.insert(tp);
    std::map<pipeline::topic_ref, std::uint64_t> assigned;
    if (s.consumer)
        for (const auto& p : s.consumer->assignment()) assigned[pipeline::topic_ref{p.stream, p.topic}] += 1;
    for (const auto& [tp, n] : assigned) topics.insert(tp);
    for (const auto& tp : topics) {
        const auto it = buffers.find(tp);
        const auto g = it == buffers.end() ? pipeline::router::buffer_gauges{} : it->second;
        bb.metric.push_back(sample(topic_labels(tp), static_cast<double>(g.buffered_bytes), prom::MetricType::Gauge));
        oo.metric.push_back(sample(topic_labels(tp), static_cast<double>(g.open_objects), prom::MetricType::Gauge));
    }
    out.push_back(std::move(bb));
    out.push_back(std::move(oo));
    // memory.max_buffered / memory.max_spool (lib/pipeline/memory.hpp): the budget and its use.
    const auto& mem = s.router->memory();
    const auto gauge = [&](std::string_view name, std::string help, std::uint64_t v) {
        auto f = family(name, std::move(help), prom::MetricType::Gauge);
        f.metric.push_back(sample({}, static_cast<double>(v), prom::MetricType::Gauge));
        out.push_back(std::move(f));
    };
    const auto unlimited = std::numeric_limits<std::uint64_t>::max();
    gauge("memory_buffered_bytes",
          "Bytes held in memory for open objects and poll batches (counted against memory.max_buffered).",
          mem.buffered());
    gauge("memory_buffered_peak_bytes", "The most memory_buffered_bytes has been since the start.",
          mem.peak_buffered());
    if (mem.limits().max_buffered != unlimited)
        gauge("memory_max_buffered_bytes", "memory.max_buffered: the memory budget.", mem.limits().max_buffered);
    gauge("spool_bytes", "Bytes in spool files of open objects (counted against memory.max_spool).", mem.spooled());
    if (mem.limits().max_spool != unlimited)
        gauge("spool_max_bytes", "memory.max_spool: the spool budget.", mem.limits().max_spool);
    health_metrics(out, s.router->health());
    if (s.consumer) {
        auto ap = family("assigned_partitions", "Partitions this process polls (its share of the group).",
                         prom::MetricType::Gauge);
        for (const auto& tp : topics) {
            const auto it = assigned.find(tp);
            ap.metric.push_back(sample(topic_labels(tp), static_cast<double>(it == assigned.end() ? 0 : it->second),
                                       prom::MetricType::Gauge));
        }
        out.push_back(std::move(ap));
        source_fault_metrics(out, *s.consumer, topics);
    }
}

/// The families of the module statistics in `s` (router, consumer, S3, Iggy, credentials).
std::vector<prom::MetricFamily> module_metrics(const metric_sources& s) {
    std::vector<prom::MetricFamily> families;
    pipeline_metrics(families, s);
    if (s.s3) s3_metrics(families, *s.s3);
    if (s.iggy) iggy_metrics(families, *s.iggy);
    if (s.credentials) credentials_metrics(families, *s.credentials);
    if (s.iceberg) iceberg_metrics(families, *s.iceberg, s.clock ? *s.clock : real_clock::instance());
    return families;
}

bool carried_type(prom::MetricType t) { return t == prom::MetricType::Counter || t == prom::MetricType::Histogram; }

/// Adds `from` (a sample of the same family and labels) into `into`.
void add_sample(prom::ClientMetric& into, const prom::ClientMetric& from) {
    into.counter.value += from.counter.value;
    auto& h = into.histogram;
    h.sample_count += from.histogram.sample_count;
    h.sample_sum += from.histogram.sample_sum;
    for (const auto& b : from.histogram.bucket) {
        auto it = std::find_if(h.bucket.begin(), h.bucket.end(),
                               [&](const prom::ClientMetric::Bucket& x) { return x.upper_bound == b.upper_bound; });
        if (it != h.bucket.end()) it->cumulative_count += b.cumulative_count;
        else h.bucket.push_back(b);
    }
    std::sort(h.bucket.begin(), h.bucket.end(),
              [](const auto& x, const auto& y) { return x.upper_bound < y.upper_bound; });
}

std::vector<prom::ClientMetric::Label> sorted_labels(std::vector<prom::ClientMetric::Label> l) {
    std::sort(l.begin(), l.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    return l;
}

}  // namespace

/// The carried families, each with its samples by (sorted) label set.
struct carried_totals::state {
    struct family {
        prom::MetricFamily shape;  ///< name, help, type (samples in `samples`)
        std::map<std::vector<std::pair<std::string, std::string>>, prom::ClientMetric> samples;
    };
    std::map<std::string, family> families;

    static std::vector<std::pair<std::string, std::string>> key(const prom::ClientMetric& m) {
        std::vector<std::pair<std::string, std::string>> k;
        for (const auto& l : sorted_labels(m.label)) k.emplace_back(l.name, l.value);
        return k;
    }

    /// Adds the carried numbers to `live` (families rendered from the live sources).
    void merge_into(std::vector<prom::MetricFamily>& live) const {
        for (const auto& [name, f] : families) {
            auto it = std::find_if(live.begin(), live.end(), [&](const auto& x) { return x.name == name; });
            if (it == live.end()) {
                live.push_back(f.shape);
                it = std::prev(live.end());
            }
            for (const auto& [k, carried] : f.samples) {
                auto m = std::find_if(it->metric.begin(), it->metric.end(),
                                      [&](const prom::ClientMetric& x) { return key(x) == k; });
                if (m == it->metric.end()) it->metric.push_back(carried);
                else add_sample(*m, carried);
            }
        }
    }
};

carried_totals::carried_totals() : s_{std::make_unique<state>()} {}
carried_totals::~carried_totals() = default;

void carried_totals::carry(const metric_sources& ended) {
    for (auto& f : module_metrics(ended)) {
        if (!carried_type(f.type)) continue;
        auto& into = s_->families[f.name];
        if (into.shape.name.empty()) {
            into.shape.name = f.name;
            into.shape.help = f.help;
            into.shape.type = f.type;
        }
        for (auto& m : f.metric) {
            auto k = state::key(m);
            auto [it, fresh] = into.samples.try_emplace(std::move(k), m);
            if (!fresh) add_sample(it->second, m);
        }
    }
}

std::uint64_t carried_totals::total(std::string_view name) const {
    const auto it = s_->families.find(std::string{prefix} + std::string{name});
    if (it == s_->families.end()) return 0;
    double sum = 0;
    for (const auto& [k, m] : it->second.samples) sum += m.counter.value;
    return static_cast<std::uint64_t>(sum);
}

lifetime_totals totals_since_start(const pipeline::router* live, const carried_totals& carried) {
    lifetime_totals t{carried.total("messages_total"), carried.total("objects_total"),
                      carried.total("adopted_objects_total")};
    if (live) {
        const auto w = live->totals();
        t.messages += w.records_written;
        t.objects += w.objects_written;
        t.adopted += w.objects_adopted;
    }
    return t;
}
namespace {

/// The admin server's own connections (server.hpp, server_stats).
void admin_server_metrics(std::vector<prom::MetricFamily>& out, const server_stats& a) {
    auto open = family("admin_connections", "Admin connections open now (at most admin.max_connections).",
                       prom::MetricType::Gauge);
    open.metric.push_back(sample({}, static_cast<double>(a.open), prom::MetricType::Gauge));
    out.push_back(std::move(open));
    auto acc = family("admin_connections_total", "Admin connections accepted.", prom::MetricType::Counter);
    acc.metric.push_back(sample({}, static_cast<double>(a.accepted), prom::MetricType::Counter));
    out.push_back(std::move(acc));
    auto closed = family("admin_connections_closed_total",
                         "Admin connections the server closed, by reason: max_connections (room for a new one), "
                         "idle_timeout, header_timeout (slow headers), bad_request (400), header_too_large (431).",
                         prom::MetricType::Counter);
    for (const auto& [reason, n] :
         {std::pair{"max_connections", a.closed_limit}, std::pair{"idle_timeout", a.closed_idle},
          std::pair{"header_timeout", a.closed_header}, std::pair{"bad_request", a.closed_bad},
          std::pair{"header_too_large", a.closed_too_large}})
        closed.metric.push_back(sample({{"reason", reason}}, static_cast<double>(n), prom::MetricType::Counter));
    out.push_back(std::move(closed));
}

}  // namespace

std::string render_metrics(const metric_sources& s) {
    std::vector<prom::MetricFamily> families = module_metrics(s);
    if (s.carried) s.carried->get().merge_into(families);
    if (s.reloads) {
        auto r = family("config_reloads_total",
                        "Configuration reloads (SIGHUP): success once applied (in place, or the new configuration "
                        "consumes); failure when the file was invalid or its new store refused (the previous "
                        "configuration runs on) or its pipeline did not start; unchanged when the file means what "
                        "the running configuration means (nothing is done).",
                        prom::MetricType::Counter);
        r.metric.push_back(
            sample({{"result", "success"}}, static_cast<double>(s.reloads->success), prom::MetricType::Counter));
        r.metric.push_back(
            sample({{"result", "failure"}}, static_cast<double>(s.reloads->failure), prom::MetricType::Counter));
        r.metric.push_back(
            sample({{"result", "unchanged"}}, static_cast<double>(s.reloads->unchanged), prom::MetricType::Counter));
        families.push_back(std::move(r));
    }
    if (s.admin) admin_server_metrics(families, *s.admin);
    process_metrics(families);
    auto bi = family("build_info", "Always 1; the labels name the build.", prom::MetricType::Gauge);
    bi.metric.push_back(sample({{"version", s.version}, {"commit", s.commit}}, 1, prom::MetricType::Gauge));
    families.push_back(std::move(bi));
    // A family without samples is legal but noise: leave it out.
    std::erase_if(families, [](const prom::MetricFamily& f) { return f.metric.empty(); });
    std::ostringstream os;
    prom::TextSerializer{}.Serialize(os, families);
    return std::move(os).str();
}

}  // namespace iss::admin
