// SPDX-License-Identifier: Apache-2.0
#include "config/config.hpp"
#include "test_env.hpp"

#include "catch2_compat.hpp"

using namespace iss::config;
using namespace std::chrono_literals;

TEST_CASE("sizes take binary and decimal units and plain bytes", "[config][values]") {
    CHECK(parse_size("8MiB").value() == 8 * 1024 * 1024);
    CHECK(parse_size("8MB").value() == 8'000'000);
    CHECK(parse_size("8 mib").value() == 8 * 1024 * 1024);
    CHECK(parse_size("512KiB").value() == 512 * 1024);
    CHECK(parse_size("1.5GiB").value() == 1536ULL * 1024 * 1024);
    CHECK(parse_size("4096").value() == 4096);
    CHECK(parse_size("64_000").value() == 64'000);
    CHECK(parse_size("5GiB").value() == 5ULL * 1024 * 1024 * 1024);
    CHECK(parse_size("1TB").value() == 1'000'000'000'000ULL);
}

TEST_CASE("sizes refuse ambiguous units, fractions of bytes and garbage", "[config][values]") {
    auto m = parse_size("8M");
    REQUIRE(m.has_error());
    CHECK(m.error().detail().find("ambiguous") != std::string::npos);
    CHECK(parse_size("0.5B").has_error());
    CHECK(parse_size("MiB").has_error());
    CHECK(parse_size("-1MiB").has_error());
    CHECK(parse_size("8 parsecs").has_error());
    CHECK(parse_size("99999999999999999999").has_error());
    CHECK(parse_size("").has_error());
}

TEST_CASE("durations take ms, s, m, h, d and sums", "[config][values]") {
    CHECK(parse_duration("250ms").value() == 250ms);
    CHECK(parse_duration("10s").value() == 10s);
    CHECK(parse_duration("10m").value() == 10min);
    CHECK(parse_duration("1h").value() == 1h);
    CHECK(parse_duration("1d").value() == 24h);
    CHECK(parse_duration("1h30m").value() == 90min);
    CHECK(parse_duration("1.5s").value() == 1500ms);
    CHECK(parse_duration("0").value() == 0ms);
    CHECK(parse_duration("2min").value() == 2min);
}

TEST_CASE("durations refuse bare numbers, unknown units and negatives", "[config][values]") {
    auto bare = parse_duration("30");
    REQUIRE(bare.has_error());
    CHECK(bare.error().detail().find("needs a unit") != std::string::npos);
    CHECK(parse_duration("10M").has_error());  // months? minutes? refused
    CHECK(parse_duration("1y").has_error());
    CHECK(parse_duration("-5s").has_error());
    CHECK(parse_duration("10 s x").has_error());
    CHECK(parse_duration("1500us").has_error());  // below 1 ms resolution
    CHECK(parse_duration("").has_error());
}

TEST_CASE("sizes and durations print in their shortest exact form", "[config][values]") {
    CHECK(format_size(8 * mib) == "8MiB");
    CHECK(format_size(8'000'000) == "8000000");
    CHECK(format_size(1536) == "1536");
    CHECK(format_size(0) == "0");
    CHECK(format_duration(250ms) == "250ms");
    CHECK(format_duration(90min) == "1h30m");
    CHECK(format_duration(24h) == "1d");
    CHECK(format_duration(0ms) == "0s");
    CHECK(format_duration(1500ms) == "1500ms");
    for (auto d : {250ms, 1500ms, 10000ms, 3600000ms, 5400000ms, 86400000ms})
        CHECK(parse_duration(format_duration(d)).value() == d);
}

TEST_CASE("interpolation replaces ${VAR} and ${VAR:-default}", "[config][values]") {
    const auto env = test::fixed_env({{"A", "alpha"}, {"EMPTY", ""}});
    CHECK(interpolate("x${A}y", env).value() == "xalphay");
    CHECK(interpolate("${B:-beta}", env).value() == "beta");
    CHECK(interpolate("${EMPTY:-fallback}", env).value() == "fallback");
    CHECK(interpolate("${EMPTY}", env).value().empty());
    CHECK(interpolate("${B:-}", env).value().empty());
    CHECK(interpolate("cost $5 and $${A}", env).value() == "cost $5 and ${A}");
    CHECK(interpolate("${A}${A}", env).value() == "alphaalpha");
}

TEST_CASE("an unset variable without default is an error naming it", "[config][values]") {
    const auto env = test::fixed_env({});
    auto r = interpolate("${IGGY_PASSWORD}", env);
    REQUIRE(r.has_error());
    CHECK(r.error() == errc::unset_variable);
    CHECK(r.error().detail().find("IGGY_PASSWORD") != std::string::npos);
    CHECK(interpolate("${not-a-name}", env).has_error());
    CHECK(interpolate("${A", env).has_error());
}
