// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The process metrics every Prometheus client library's process collector exposes, under the
/// same names: `process_cpu_seconds_total`, `process_resident_memory_bytes`,
/// `process_virtual_memory_bytes`, `process_open_fds`, `process_max_fds`,
/// `process_start_time_seconds` (https://prometheus.io/docs/instrumenting/writing_clientlibs/#process-metrics).
/// prometheus-cpp has no such collector, so they are read here from procfs (proc(5)):
/// `/proc/self/stat` (utime, stime, starttime, vsize, rss), `/proc/self/fd` and
/// `/proc/self/limits`; the boot time from CLOCK_REALTIME - CLOCK_BOOTTIME (not /proc/stat,
/// which the systemd unit's ProcSubset=pid hides).

#include <cstdint>
#include <optional>
#include <string_view>

namespace iss::admin {

/// One reading of the process' own numbers, in base units.
struct process_stats {
    double cpu_seconds = 0;                 ///< user + system CPU time, seconds
    double start_time_seconds = 0;          ///< start, seconds since the Unix epoch
    std::uint64_t resident_bytes = 0;       ///< resident set size
    std::uint64_t virtual_bytes = 0;        ///< virtual memory size
    std::optional<std::uint64_t> open_fds;  ///< entries of /proc/self/fd
    std::optional<std::uint64_t> max_fds;   ///< the soft "Max open files" limit (nullopt: unlimited)
};

/// Parses the fields of a `/proc/<pid>/stat` line (proc(5)): utime (14), stime (15),
/// starttime (22), vsize (23) and rss (24). The command name (field 2) may hold spaces and
/// parentheses, so fields are counted after its last ')'.
/// \param ticks_per_second sysconf(_SC_CLK_TCK)
/// \param page_bytes sysconf(_SC_PAGESIZE)
/// \param boot_time_seconds when the system booted (seconds since the epoch)
/// \return nullopt when the line does not have those fields.
[[nodiscard]] std::optional<process_stats> parse_proc_stat(std::string_view line, long ticks_per_second,
                                                           long page_bytes, double boot_time_seconds);

/// The soft limit of "Max open files" from the text of /proc/<pid>/limits; nullopt when it is
/// "unlimited" or missing.
[[nodiscard]] std::optional<std::uint64_t> parse_max_open_files(std::string_view limits);

/// Reads this process' numbers from procfs; nullopt when /proc/self/stat cannot be read
/// (no procfs): the metrics are then left out.
[[nodiscard]] std::optional<process_stats> read_process_stats();

}  // namespace iss::admin
