// SPDX-License-Identifier: Apache-2.0
#include "common/cpus.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <fstream>
#include <string>
#include <system_error>

namespace iss {

namespace {

std::optional<std::string> read_small_file(const std::filesystem::path& p) {
    std::ifstream in{p};
    if (!in) return std::nullopt;
    std::string s;
    std::getline(in, s);
    return s;
}

/// One `cpu.max` ("QUOTA PERIOD" in microseconds, or "max PERIOD"): the CPUs it allows,
/// rounded up; nullopt for "max" or an unreadable line.
std::optional<std::size_t> cpus_of_cpu_max(std::string_view line) {
    const auto space = line.find(' ');
    if (space == std::string_view::npos) return std::nullopt;
    std::uint64_t quota = 0;
    std::uint64_t period = 0;
    const auto q = std::from_chars(line.data(), line.data() + space, quota);
    const auto p = std::from_chars(line.data() + space + 1, line.data() + line.size(), period);
    if (q.ec != std::errc{} || p.ec != std::errc{} || period == 0) return std::nullopt;  // "max" too
    return std::max<std::uint64_t>(1, (quota + period - 1) / period);
}

}  // namespace

std::optional<std::size_t> cgroup_cpu_limit(const std::filesystem::path& cgroup_root,
                                            std::string_view proc_self_cgroup) {
    std::string_view rel;
    while (!proc_self_cgroup.empty()) {
        const auto nl = proc_self_cgroup.find('\n');
        const auto line = proc_self_cgroup.substr(0, nl);
        if (line.starts_with("0::")) {
            rel = line.substr(3);
            break;
        }
        proc_self_cgroup.remove_prefix(nl == std::string_view::npos ? proc_self_cgroup.size() : nl + 1);
    }
    if (rel.empty() || rel.front() != '/') return std::nullopt;
    std::optional<std::size_t> limit;
    // From the process's own cgroup up to the root: every level's quota applies. A path that
    // leaves the mount ("/../x": a cgroup outside this namespace) counts from the root only.
    auto rel_path = std::filesystem::path{rel}.lexically_normal().relative_path();
    if (!rel_path.empty() && *rel_path.begin() == "..") rel_path.clear();
    for (;;) {
        if (auto line = read_small_file(cgroup_root / rel_path / "cpu.max")) {
            if (auto n = cpus_of_cpu_max(*line)) limit = limit ? std::min(*limit, *n) : *n;
        }
        if (rel_path.empty()) break;
        rel_path = rel_path.parent_path();
    }
    return limit;
}

}  // namespace iss
