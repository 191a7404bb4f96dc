// SPDX-License-Identifier: Apache-2.0
// The resume point with an Iceberg table (iceberg_resume.hpp).
#include "pipeline/adapters/iceberg_resume.hpp"

#include "common/log.hpp"
#include "iceberg/commit.hpp"

#include <algorithm>

namespace iss::pipeline {

namespace {

const log::logger& logger() {
    static const log::logger l{"iceberg"};
    return l;
}

}  // namespace

task<offset_result> iceberg_resume_offsets::load_offset(const partition_ref& p) {
    offset_result r = co_await inner_.load_offset(p);
    if (r.status != offset_status::ok) co_return r;
    // The topic's creation time now, before the table is read: what this writer will read.
    const topic_ref of{p.stream, p.topic};  // named: GCC 12 and braced temporaries in a co_await
    const partitions_result topic = co_await topics_.partitions(of);
    if (topic.status != source_status::ok)
        co_return offset_result{topic.status == source_status::fatal ? offset_status::fatal : offset_status::retryable,
                                std::nullopt,
                                fmt::format("the resume point needs the topic's creation time: {}", topic.detail)};
    const iceberg::table_ident t = table_for_(p);
    auto loaded = co_await catalog_.load_table(t);
    if (!loaded) {
        if (loaded.error() == iceberg::catalog_errc::not_found) {  // no table yet: it holds nothing
            generations_.bind(p, topic.created_at);
            co_return r;
        }
        const bool again = iceberg::retryable(loaded.error());
        co_return offset_result{
            again ? offset_status::retryable : offset_status::fatal, std::nullopt,
            fmt::format("the resume point needs table {}: {}", t.to_string(), loaded.error().message())};
    }
    auto state = iceberg::parse_table_metadata(loaded->metadata_json);
    if (!state) co_return offset_result{offset_status::fatal, std::nullopt, state.error().message()};
    auto offsets = state->committed_offsets();
    if (!offsets) co_return offset_result{offset_status::fatal, std::nullopt, offsets.error().message()};
    auto topics = state->committed_topics();
    if (!topics) co_return offset_result{offset_status::fatal, std::nullopt, topics.error().message()};
    const auto it = offsets->find(iceberg::source_partition{p.stream, p.topic, p.partition});
    const std::uint64_t held = it == offsets->end() ? 0 : it->second;
    if (const auto rec = topics->find({p.stream, p.topic}); rec != topics->end() && rec->second != topic.created_at) {
        // The table's offsets of this topic are an older topic's (deleted and created again).
        r.reset = fmt::format(
            "table {} holds offsets of an earlier topic {}/{} (created_at {}; this partition up to offset {}), but "
            "the topic now was created at {}: it was deleted and created again, and resuming after the table's "
            "offsets would skip the new topic's first messages. iggy.on_offset_reset: fail stopped the partition; to "
            "read the new topic, set iceberg.table to a new table (or drop the table) and restart",
            t.to_string(), p.stream, p.topic, rec->second, held == 0 ? std::string{"none"} : std::to_string(held - 1),
            topic.created_at);
        co_return r;
    }
    generations_.bind(p, topic.created_at);
    if (held == 0) co_return r;
    const std::uint64_t table_last = held - 1;
    if (!r.offset || *r.offset < table_last) {
        logger().info("table {} holds {}/{}/{} up to offset {} (Iggy's stored offset: {}); resuming after it",
                      t.to_string(), p.stream, p.topic, p.partition, table_last,
                      r.offset ? std::to_string(*r.offset) : std::string{"none"});
        r.offset = table_last;
    }
    co_return r;
}

}  // namespace iss::pipeline
