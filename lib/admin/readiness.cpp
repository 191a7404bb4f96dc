// SPDX-License-Identifier: Apache-2.0
#include "admin/readiness.hpp"

#include "pipeline/adapters/iceberg_table.hpp"
#include "pipeline/consumer.hpp"
#include "pipeline/health.hpp"
#include "s3/client.hpp"

#include <fmt/format.h>

namespace iss::admin {

std::vector<std::string> source_problems(const pipeline::consumer_loop& c) {
    std::vector<std::string> out;
    for (const auto& u : c.unavailable_sources())
        out.push_back(fmt::format("source unavailable: {}/{}{}: {}", u.topic.stream, u.topic.topic,
                                  u.partition ? fmt::format(" partition {}", *u.partition) : "", u.reason));
    for (const auto& r : c.offset_resets()) {
        if (!r.found_at_load.empty()) {  // the table's summary is an older topic's; says what stopped it
            out.push_back(fmt::format("offset reset: {}/{} partition {}: {}", r.partition.stream, r.partition.topic,
                                      r.partition.partition, r.found_at_load));
            continue;
        }
        out.push_back(
            r.creation_changed
                ? fmt::format("offset reset: {}/{} partition {}: the topic's creation time changed (it was created "
                              "again) while the partition was to go on from offset {}; {}",
                              r.partition.stream, r.partition.topic, r.partition.partition, r.next_offset, r.stopped_by)
                : fmt::format("offset reset: {}/{} partition {}: the next offset {} lies past the newest offset "
                              "{} (the topic was created again); {}",
                              r.partition.stream, r.partition.topic, r.partition.partition, r.next_offset, r.head,
                              r.stopped_by));
    }
    return out;
}

std::vector<std::string> delivery_problems(const pipeline::delivery_health& h) {
    std::vector<std::string> out;
    if (const auto& r = h.store_refusal())
        out.push_back(
            fmt::format("store: refusing writes: {}: {}; nothing is lost: retried at a backoff up to "
                        "s3.retry.cap until a write succeeds",
                        r->code, r->detail));
    if (const auto& f = h.spool())
        out.push_back(
            fmt::format("spool: {}: {}; objects are closed at about s3.part_size until memory.spool_dir "
                        "takes parts again",
                        pipeline::to_string(f->reason), f->detail));
    return out;
}

std::vector<std::string> catalog_problems(const pipeline::iceberg_table_stats* st) {
    std::vector<std::string> out;
    if (st != nullptr && st->catalog_unreachable)
        out.push_back(
            fmt::format("catalog: unreachable: {}; nothing is lost: the tables' commits (and the offsets "
                        "after them) wait and are tried at a backoff up to s3.retry.cap until it answers",
                        *st->catalog_unreachable));
    if (st != nullptr && st->catalog_refusing)
        out.push_back(
            fmt::format("catalog: refusing commits: {}; nothing is lost: the tables' commits (and the offsets after "
                        "them) wait and are tried at a backoff up to s3.retry.cap until one is accepted",
                        *st->catalog_refusing));
    return out;
}

std::vector<std::string> store_problems(const s3::client_stats& st) {
    std::vector<std::string> out;
    if (const auto& u = st.unreachable) {
        const bool tls = u->reason.starts_with("tls_");
        out.push_back(fmt::format(
            "store: unreachable: {}: {}; {}nothing is lost: retried on a new connection at a backoff until the store "
            "answers",
            u->reason, u->detail,
            tls ? "no data is sent until the certificate verifies (check s3.tls.ca_file and the endpoint's name); "
                : ""));
    }
    return out;
}

std::vector<std::string> readiness_notes(const readiness_inputs& in) {
    std::vector<std::string> out;
    if (in.reloading && !in.stopping)
        out.emplace_back(
            "reloading: uploading and committing what is buffered, then consuming with the new configuration");
    return out;
}

std::vector<std::string> unmet_conditions(const readiness_inputs& in) {
    std::vector<std::string> out;
    if (!in.store_usable) out.emplace_back("store: not probed usable yet (see the s3 log lines)");
    for (const auto& p : in.delivery_problems) out.push_back(p);
    if (!in.iggy_connected) out.emplace_back("iggy: not connected and logged in");
    if (in.group_mode && !in.group_joined) out.emplace_back("iggy: consumer group not joined");
    for (const auto& p : in.source_problems) out.push_back("iggy: " + p);
    if (in.stopping) out.emplace_back("stopping: a stop signal arrived");
    return out;
}

}  // namespace iss::admin
