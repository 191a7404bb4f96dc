// SPDX-License-Identifier: Apache-2.0
#include "pipeline/lag.hpp"

#include "common/log.hpp"
#include "common/text_table.hpp"

#include <algorithm>
#include <array>

namespace iss::pipeline {

std::uint64_t compute_lag(std::uint64_t messages_count, std::uint64_t head,
                          std::optional<std::uint64_t> committed) noexcept {
    if (messages_count == 0) return 0;
    if (!committed) return messages_count;
    return head > *committed ? head - *committed : 0;
}

std::string render_lag_table(const std::vector<lag_row>& rows) {
    const bool tables = std::any_of(rows.begin(), rows.end(), [](const lag_row& r) { return r.table; });
    const auto opt = [](const std::optional<std::uint64_t>& v) { return v ? std::to_string(*v) : std::string{"-"}; };
    std::vector<std::vector<std::string>> cells;
    cells.push_back({"STREAM", "TOPIC", "PARTITION", "HEAD", "COMMITTED", "LAG"});
    if (tables) cells.back().insert(cells.back().begin() + 5, "TABLE");
    std::uint64_t total = 0;
    for (const auto& r : rows) {
        total += r.lag;
        cells.push_back({r.partition.stream, r.partition.topic, std::to_string(r.partition.partition),
                         r.messages_count == 0 ? "-" : std::to_string(r.head), opt(r.committed),
                         std::to_string(r.lag)});
        if (tables) cells.back().insert(cells.back().begin() + 5, r.table ? opt(r.table_committed) : "-");
    }
    using enum text_align;  // numbers right-aligned
    static constexpr std::array align{left, left, right, right, right, right, right};
    std::string out = render_text_table(cells, std::span<const text_align>{align.data(), tables ? 7u : 6u});
    out += fmt::format("total lag: {}\n", total);
    return out;
}

std::string render_lag_json(const std::vector<lag_row>& rows) {
    std::string out = "{\"partitions\":[";
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto& r = rows[i];
        total += r.lag;
        if (i) out += ',';
        out += "{\"stream\":\"";
        iss::log::append_json_escaped(out, r.partition.stream);
        out += "\",\"topic\":\"";
        iss::log::append_json_escaped(out, r.partition.topic);
        out += fmt::format("\",\"partition\":{},\"messages\":{},\"head\":{},\"committed\":{},\"lag\":{}",
                           r.partition.partition, r.messages_count,
                           r.messages_count == 0 ? std::string{"null"} : std::to_string(r.head),
                           r.committed ? std::to_string(*r.committed) : std::string{"null"}, r.lag);
        if (r.table)
            out += fmt::format(",\"table_committed\":{}",
                               r.table_committed ? std::to_string(*r.table_committed) : std::string{"null"});
        out += '}';
    }
    out += fmt::format("],\"total_lag\":{}}}\n", total);
    return out;
}

}  // namespace iss::pipeline
