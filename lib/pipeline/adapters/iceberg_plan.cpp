// SPDX-License-Identifier: Apache-2.0
// The real plan of a table step batch (iceberg_plan.hpp): lib/iceberg's pure commit builder
// and decision with the table's metadata files through the S3 client.
#include "pipeline/adapters/iceberg_plan.hpp"

#include "iceberg/error.hpp"
#include "iceberg/manifest.hpp"
#include "pipeline/adapters/format_encoder.hpp"
#include "s3/client.hpp"
#include "s3/error.hpp"

#include <chrono>

namespace iss::pipeline {

result<std::pair<std::string, std::string>> split_s3_location(std::string_view location) {
    for (std::string_view scheme : {"s3://", "s3a://", "s3n://"}) {
        if (location.substr(0, scheme.size()) != scheme) continue;
        const auto rest = location.substr(scheme.size());
        const auto slash = rest.find('/');
        if (slash == std::string_view::npos || slash == 0 || slash + 1 == rest.size()) break;
        return std::pair{std::string{rest.substr(0, slash)}, std::string{rest.substr(slash + 1)}};
    }
    return error{iss::errc::invalid_argument,
                 fmt::format("'{}' is not an s3://bucket/key location (the table's location must be on S3)", location)};
}

task<result<void>> s3_table_files::put(iceberg::metadata_file f) {
    auto loc = split_s3_location(f.location);
    if (!loc) co_return loc.error();
    s3::put_options o;
    o.content_type = "application/octet-stream";
    o.if_none_match = true;
    std::vector<std::string_view> body{f.bytes};
    auto r = co_await c_.put_object(loc->first, loc->second, std::move(body), std::move(o));
    if (!r && !(r.error() == s3::errc::precondition_failed)) co_return r.error();
    co_return result<void>{};
}

task<result<std::string>> s3_table_files::get(std::string location) {
    auto loc = split_s3_location(location);
    if (!loc) co_return loc.error();
    auto r = co_await c_.get_object(loc->first, loc->second);
    if (!r) co_return r.error();
    co_return std::move(r->body);
}

task<result<std::uint64_t>> s3_table_files::size(std::string location) {
    auto loc = split_s3_location(location);
    if (!loc) co_return loc.error();
    auto r = co_await c_.head_object(loc->first, loc->second);
    if (!r) co_return r.error();
    co_return r->size;
}

iceberg::pending_file iceberg_data_file(const durable_object& o, std::string_view bucket,
                                        std::vector<iceberg::value> partition) {
    iceberg::pending_file f;
    f.file.file_path = fmt::format("s3://{}/{}", bucket, o.key.get());
    f.file.partition = std::move(partition);
    f.file.record_count = static_cast<std::int64_t>(o.range.count);
    f.file.file_size_in_bytes = static_cast<std::int64_t>(o.size.value_or(0));
    if (const auto* s = dynamic_cast<const iceberg_object_stats*>(o.stats.get())) f.file.stats = s->columns;
    f.source = iceberg::source_partition{o.partition.stream, o.partition.topic, o.partition.partition};
    f.first_offset = o.range.first_offset;
    f.last_offset = o.range.last_offset;
    return f;
}

iceberg_batch_plan::iceberg_batch_plan(const iceberg::table_schema& schema, const iceberg::partition_spec& spec,
                                       s3_table_files& store, const iss::clock& clk, iceberg::table_ident table,
                                       std::vector<iceberg::pending_file> files, iceberg::offset_map next_offsets,
                                       iceberg::topic_created_map topics_created)
    : schema_{schema},
      spec_{spec},
      store_{store},
      clk_{clk},
      table_{std::move(table)},
      files_{std::move(files)},
      next_offsets_{std::move(next_offsets)},
      topics_created_{std::move(topics_created)} {}

iceberg::offset_map iceberg_offsets(const std::map<partition_ref, std::uint64_t>& next) {
    iceberg::offset_map out;
    for (const auto& [p, n] : next) out[iceberg::source_partition{p.stream, p.topic, p.partition}] = n;
    return out;
}

task<result<iceberg::built_commit>> iceberg_batch_plan::build(const iceberg::loaded_table& base) {
    auto state = iceberg::parse_table_metadata(base.metadata_json);
    if (!state) co_return state.error();
    std::vector<iceberg::manifest_file> parents;
    if (const auto* main = state->main(); main != nullptr && !main->manifest_list.empty()) {
        auto bytes = co_await store_.get(main->manifest_list);
        if (!bytes) co_return bytes.error();
        auto list = iceberg::read_manifest_list(*bytes);
        if (!list) co_return list.error();
        parents = std::move(*list);
    }
    for (auto& f : files_) {
        if (f.file.file_size_in_bytes > 0) continue;  // an adopted object: its size from the store
        auto n = co_await store_.size(f.file.file_path);
        if (!n) co_return n.error();
        f.file.file_size_in_bytes = static_cast<std::int64_t>(*n);
    }
    iceberg::commit_input in;
    in.schema = &schema_;
    in.spec = &spec_;
    in.table = &*state;
    in.parent_manifests = std::move(parents);
    in.files = files_;
    in.next_offsets = next_offsets_;
    in.topics_created = topics_created_;
    in.now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(clk_.system_now().time_since_epoch()).count();
    in.namespace_levels = table_.ns;
    in.table_name = table_.name;
    auto plan = iceberg::plan_commit(in);
    if (!plan) co_return plan.error();
    attempted_ = plan->snapshot_id;
    iceberg::built_commit b;
    b.files.push_back({plan->manifest_path, std::move(plan->manifest)});
    b.files.push_back({plan->manifest_list_path, std::move(plan->manifest_list)});
    b.body = std::move(plan->request_body);
    co_return b;
}

result<bool> iceberg_batch_plan::covered_by(const iceberg::loaded_table& table) {
    auto state = iceberg::parse_table_metadata(table.metadata_json);
    if (!state) return state.error();
    auto d = iceberg::decide(*state, files_, attempted_);
    switch (d.what) {
        case iceberg::decision::kind::done: return true;
        case iceberg::decision::kind::rebuild: files_ = std::move(d.remaining); return false;
        case iceberg::decision::kind::overlap:
            return error{iceberg::errc::overlap, fmt::format("table {}: {}", table_.to_string(), d.detail)};
    }
    return false;
}

}  // namespace iss::pipeline
