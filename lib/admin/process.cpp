// SPDX-License-Identifier: Apache-2.0
#include "admin/process.hpp"

#include <time.h>
#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace iss::admin {

namespace {

std::optional<std::string> read_text(const char* path) {
    std::ifstream in{path, std::ios::binary};
    if (!in) return std::nullopt;
    std::ostringstream ss;
    ss << in.rdbuf();
    return std::move(ss).str();
}

std::optional<std::uint64_t> to_u64(std::string_view s) {
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
    return v;
}

/// The whitespace-separated words of `s`.
std::vector<std::string_view> words(std::string_view s) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')) ++i;
        const std::size_t start = i;
        while (i < s.size() && s[i] != ' ' && s[i] != '\t' && s[i] != '\n') ++i;
        if (i > start) out.push_back(s.substr(start, i - start));
    }
    return out;
}

}  // namespace

std::optional<process_stats> parse_proc_stat(std::string_view line, long ticks_per_second, long page_bytes,
                                             double boot_time_seconds) {
    const auto close = line.rfind(')');
    if (close == std::string_view::npos || ticks_per_second <= 0 || page_bytes <= 0) return std::nullopt;
    // After "pid (comm)": field 3 (state) is the first word.
    const auto f = words(line.substr(close + 1));
    const auto field = [&](std::size_t n) { return n - 3 < f.size() ? to_u64(f[n - 3]) : std::nullopt; };
    const auto utime = field(14), stime = field(15), start = field(22), vsize = field(23), rss = field(24);
    if (!utime || !stime || !start || !vsize || !rss) return std::nullopt;
    process_stats s;
    const auto ticks = static_cast<double>(ticks_per_second);
    s.cpu_seconds = static_cast<double>(*utime + *stime) / ticks;
    s.start_time_seconds = boot_time_seconds + static_cast<double>(*start) / ticks;
    s.virtual_bytes = *vsize;
    s.resident_bytes = *rss * static_cast<std::uint64_t>(page_bytes);
    return s;
}

std::optional<std::uint64_t> parse_max_open_files(std::string_view limits) {
    const auto at = limits.find("Max open files");
    if (at == std::string_view::npos) return std::nullopt;
    const auto end = limits.find('\n', at);
    const auto w = words(limits.substr(at + 14, end == std::string_view::npos ? end : end - at - 14));
    return w.empty() ? std::nullopt : to_u64(w[0]);  // "unlimited" is no number
}

std::optional<process_stats> read_process_stats() {
    const auto stat = read_text("/proc/self/stat");
    if (!stat) return std::nullopt;
    // starttime counts from boot on CLOCK_BOOTTIME (suspend included).
    timespec real{}, boot{};
    ::clock_gettime(CLOCK_REALTIME, &real);
    ::clock_gettime(CLOCK_BOOTTIME, &boot);
    const double booted =
        static_cast<double>(real.tv_sec - boot.tv_sec) + static_cast<double>(real.tv_nsec - boot.tv_nsec) * 1e-9;
    auto s = parse_proc_stat(*stat, sysconf(_SC_CLK_TCK), sysconf(_SC_PAGESIZE), booted);
    if (!s) return std::nullopt;
    std::error_code ec;
    std::uint64_t fds = 0;
    for (std::filesystem::directory_iterator it{"/proc/self/fd", ec}, end; !ec && it != end; it.increment(ec)) ++fds;
    // The iterator's own descriptor is one of the entries while it runs.
    if (!ec && fds > 0) s->open_fds = fds - 1;
    if (const auto limits = read_text("/proc/self/limits")) s->max_fds = parse_max_open_files(*limits);
    return s;
}

}  // namespace iss::admin
