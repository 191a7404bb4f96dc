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
    const iceberg::table_ident t = table_for_(p);
    auto loaded = co_await catalog_.load_table(t);
    if (!loaded) {
        if (loaded.error() == iceberg::catalog_errc::not_found) co_return r;  // no table yet: it holds nothing
        const bool again = iceberg::retryable(loaded.error());
        co_return offset_result{
            again ? offset_status::retryable : offset_status::fatal, std::nullopt,
            fmt::format("the resume point needs table {}: {}", t.to_string(), loaded.error().message())};
    }
    auto state = iceberg::parse_table_metadata(loaded->metadata_json);
    if (!state) co_return offset_result{offset_status::fatal, std::nullopt, state.error().message()};
    auto offsets = state->committed_offsets();
    if (!offsets) co_return offset_result{offset_status::fatal, std::nullopt, offsets.error().message()};
    const auto it = offsets->find(iceberg::source_partition{p.stream, p.topic, p.partition});
    if (it == offsets->end() || it->second == 0) co_return r;
    const std::uint64_t table_last = it->second - 1;
    if (!r.offset || *r.offset < table_last) {
        logger().info("table {} holds {}/{}/{} up to offset {} (Iggy's stored offset: {}); resuming after it",
                      t.to_string(), p.stream, p.topic, p.partition, table_last,
                      r.offset ? std::to_string(*r.offset) : std::string{"none"});
        r.offset = table_last;
    }
    co_return r;
}

}  // namespace iss::pipeline
