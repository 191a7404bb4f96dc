// SPDX-License-Identifier: Apache-2.0
#include "daemon/verify_tables.hpp"

#include "daemon/cli.hpp"
#include "daemon/commands.hpp"
#include "daemon/verify_keys.hpp"
#include "daemon/wiring.hpp"
#include "iceberg/manifest.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace iss::app {

namespace {
namespace net = boost::asio;

/// The data files (`s3://` paths) of the table's current snapshot: its manifest list, then each
/// data manifest's entries that are not DELETED.
net::awaitable<result<std::vector<iceberg::manifest_entry_view>>> snapshot_files(pipeline::s3_table_files& store,
                                                                                 const iceberg::table_state& table) {
    std::vector<iceberg::manifest_entry_view> out;
    const auto* main = table.main();
    if (main == nullptr) co_return out;
    auto list_bytes = co_await store.get(main->manifest_list);
    if (!list_bytes) co_return list_bytes.error();
    auto list = iceberg::read_manifest_list(*list_bytes);
    if (!list) co_return list.error();
    for (const auto& m : *list) {
        if (m.content != 0) continue;  // delete manifests: this sink never writes them
        auto bytes = co_await store.get(m.manifest_path);
        if (!bytes) co_return bytes.error();
        auto entries = iceberg::read_manifest(*bytes);
        if (!entries) co_return error{entries.error().code(), fmt::format("{}: {}", m.manifest_path, entries.error())};
        for (const auto& e : *entries)
            if (e.status != 2 && e.content == 0) out.push_back(e);
    }
    co_return out;
}

/// The configured topics by table (`namespace.table`), in the configuration's order.
std::map<std::string, std::vector<pipeline::topic_ref>> topics_by_table(const table_reader& tables,
                                                                        const config::sink_config& cfg) {
    std::map<std::string, std::vector<pipeline::topic_ref>> out;
    for (const auto& src : consumer_options(cfg).sources) {
        auto& ts = out[tables.table_of(src.topic).to_string()];
        if (std::find(ts.begin(), ts.end(), src.topic) == ts.end()) ts.push_back(src.topic);
    }
    return out;
}

/// Attributes the table's data files to its configured topics (see the header).
void attribute_files(tables_read& out, const std::vector<iceberg::manifest_entry_view>& files,
                     const std::vector<pipeline::topic_ref>& topics, const table_selection& sel) {
    for (const auto& f : files) {
        auto where = pipeline::split_s3_location(f.file_path);
        const pipeline::topic_ref* owner = nullptr;
        std::optional<std::uint32_t> id;
        for (const auto& t : topics) {
            if (!where) break;
            id = data_file_partition(where->second, t);
            if (id) {
                owner = &t;
                break;
            }
        }
        if (owner == nullptr) {
            out.foreign.push_back(f.file_path);
            continue;
        }
        if (!sel.selects(*owner) || (sel.partition && *sel.partition != *id)) continue;
        out.files.push_back({{owner->stream, owner->topic, *id}, where->first, where->second, f.record_count});
    }
}

}  // namespace

net::awaitable<std::variant<int, tables_read>> read_tables(table_reader& tables, pipeline::s3_table_files& store,
                                                           const config::sink_config& cfg, const table_selection& sel) {
    tables_read out;
    for (const auto& [name, topics] : topics_by_table(tables, cfg)) {
        std::vector<pipeline::topic_ref> selected;
        for (const auto& t : topics)
            if (sel.selects(t)) selected.push_back(t);
        if (selected.empty()) continue;
        out.any_source = true;
        auto state = co_await tables.load(selected.front());
        if (!state) {
            print_error("verify", "table {} in the catalog at {}: {}", name, cfg.iceberg.catalog.uri,
                        state.error().message());
            co_return exit_unavailable;
        }
        if (!*state) {
            for (const auto& t : selected)
                out.problems.push_back(fmt::format("table {} (of {}/{}) does not exist", name, t.stream, t.topic));
            continue;
        }
        ++out.tables;
        auto offsets = (*state)->committed_offsets();
        auto files = co_await snapshot_files(store, **state);
        if (!offsets || !files) {
            print_error("verify", "table {}: {}", name, !offsets ? offsets.error().message() : files.error().message());
            co_return exit_unavailable;
        }
        std::set<pipeline::partition_ref> named;  // by the summary or a data file
        for (const auto& [sp, next] : *offsets) {
            const pipeline::partition_ref p{sp.stream, sp.topic, sp.partition};
            named.insert(p);
            // Only the selected topics' partitions (not another configured topic's, nor another
            // sink's sharing the table).
            const pipeline::topic_ref t{sp.stream, sp.topic};
            if (std::find(selected.begin(), selected.end(), t) == selected.end()) continue;
            if (sel.partition && *sel.partition != sp.partition) continue;
            out.committed[p] = next > 0 ? std::optional<std::uint64_t>{next - 1} : std::nullopt;
        }
        out.listed += files->size();
        const auto before = out.files.size();
        attribute_files(out, *files, topics, sel);
        for (auto i = before; i < out.files.size(); ++i) named.insert(out.files[i].p);
        // --partition naming a partition the table knows nothing of is said, not verified as empty.
        if (sel.partition)
            for (const auto& t : selected)
                if (!named.count({t.stream, t.topic, *sel.partition}))
                    out.problems.push_back(
                        fmt::format("partition {} of {}/{}: the table's current snapshot names it in "
                                    "neither its iggy-s3-sink.offsets nor a data file",
                                    *sel.partition, t.stream, t.topic));
    }
    co_return out;
}

}  // namespace iss::app
