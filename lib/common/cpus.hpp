// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// How many CPUs the CPU controller of cgroup v2 lets this process use (the default worker
/// count, `iss::available_cores` in common/net/worker_pool.hpp, is capped by it).

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string_view>

namespace iss {

/// The smallest `cpu.max` quota divided by its period, rounded up, over the process's cgroup
/// and its ancestors up to `cgroup_root` (a pod limited to 1.5 CPUs gets 2; a quota below one
/// CPU gets 1). `proc_self_cgroup` is the text of /proc/self/cgroup, whose cgroup v2 line is
/// `0::/PATH`; a PATH that leaves the mount (`/../x`, a cgroup outside this cgroup
/// namespace) counts from `cgroup_root` only. nullopt when no level sets a quota (`max`),
/// on cgroup v1 (no `0::` line) or when nothing can be read.
/// (Linux Documentation/admin-guide/cgroup-v2.rst, "cpu.max": "$MAX $PERIOD" in microseconds.)
[[nodiscard]] std::optional<std::size_t> cgroup_cpu_limit(const std::filesystem::path& cgroup_root,
                                                          std::string_view proc_self_cgroup);

}  // namespace iss
