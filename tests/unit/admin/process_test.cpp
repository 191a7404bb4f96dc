// SPDX-License-Identifier: Apache-2.0
#include "admin/process.hpp"

#include "admin/metrics.hpp"

#include "catch2_compat.hpp"
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <string>

using namespace iss::admin;
using Catch::Matchers::ContainsSubstring;

TEST_CASE("process: /proc/<pid>/stat fields are counted after the command name", "[admin][process]") {
    // A command name with a space and a ')' of its own; utime 250, stime 150, starttime 1000,
    // vsize 123456789, rss 2048 pages (proc(5) fields 14, 15, 22, 23, 24).
    const std::string line =
        "4242 (iggy s3) sink) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 150 0 0 20 0 3 0 1000 123456789 2048 "
        "18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0\n";
    const auto s = parse_proc_stat(line, 100, 4096, 1'700'000'000);
    REQUIRE(s);
    CHECK(s->cpu_seconds == Approx(4.0));
    CHECK(s->start_time_seconds == Approx(1'700'000'010.0).epsilon(0).margin(1e-6));
    CHECK(s->virtual_bytes == 123456789u);
    CHECK(s->resident_bytes == 2048u * 4096u);
    CHECK_FALSE(parse_proc_stat("4242 (short) S 1 2 3", 100, 4096, 0));
    CHECK_FALSE(parse_proc_stat("no parenthesis", 100, 4096, 0));
}

TEST_CASE("process: the open files limit", "[admin][process]") {
    const std::string limits =
        "Limit                     Soft Limit           Hard Limit           Units     \n"
        "Max cpu time              unlimited            unlimited            seconds   \n"
        "Max open files            1024                 524288               files     \n";
    CHECK(parse_max_open_files(limits) == 1024u);
    CHECK_FALSE(parse_max_open_files("Max open files            unlimited            unlimited            files\n"));
}

TEST_CASE("process: this process' own numbers, and the descriptors it opens counted", "[admin][process]") {
    const auto before = read_process_stats();
    REQUIRE(before);
    CHECK(before->resident_bytes > 0);
    // Started before now, and not long before (this test binary's own start).
    const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    CHECK(before->start_time_seconds <= now + 1);
    CHECK(before->start_time_seconds > now - 3600);
    REQUIRE(before->open_fds);
    const int a = ::open("/dev/null", O_RDONLY);
    const int b = ::open("/dev/null", O_RDONLY);
    REQUIRE(a >= 0);
    REQUIRE(b >= 0);
    const auto during = read_process_stats();
    ::close(a);
    ::close(b);
    REQUIRE(during);
    CHECK(*during->open_fds == *before->open_fds + 2);
    // Rendered with the standard collector's names, without the daemon's prefix.
    const std::string text = render_metrics({});
    INFO(text);
    for (const char* name : {"process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds",
                             "process_start_time_seconds", "process_virtual_memory_bytes"})
        CHECK_THAT(text, ContainsSubstring(std::string{"\n"} + name + " "));
    CHECK_THAT(text, ContainsSubstring("# TYPE process_cpu_seconds_total counter"));
}
