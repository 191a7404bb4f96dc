// SPDX-License-Identifier: Apache-2.0
// The one RFC 3339 parser (common/rfc3339.hpp): every rule of RFC 3339 §5.6 and the calendar
// (§5.7), each with the inputs on both sides of it.
#include "common/rfc3339.hpp"

#include "catch2_compat.hpp"

#include <chrono>

using iss::append_rfc3339;
using iss::append_rfc3339_date;
using iss::civil_date;
using iss::civil_from_days;
using iss::days_from_civil;
using iss::parse_rfc3339;
using iss::parse_rfc3339_date;
using iss::parse_rfc3339_us;

namespace {

/// µs since the epoch of a UTC civil time, by std::chrono (an independent computation).
std::int64_t utc_us(int y, unsigned mo, unsigned d, int h = 0, int mi = 0, int s = 0) {
    using namespace std::chrono;
    const sys_days date{year{y} / month{mo} / day{d}};
    return duration_cast<microseconds>((date + hours{h} + minutes{mi} + seconds{s}).time_since_epoch()).count();
}

}  // namespace

TEST_CASE("rfc3339: date-times with Z, numeric offsets, fractions and the separators RFC 3339 allows", "[rfc3339]") {
    CHECK(parse_rfc3339_us("2026-03-29T01:30:00Z") == utc_us(2026, 3, 29, 1, 30));
    CHECK(parse_rfc3339_us("2026-03-29t01:30:00z") == utc_us(2026, 3, 29, 1, 30));
    CHECK(parse_rfc3339_us("2026-03-29 01:30:00Z") == utc_us(2026, 3, 29, 1, 30));
    CHECK(parse_rfc3339_us("2026-03-29T03:30:00.25+02:00") == utc_us(2026, 3, 29, 1, 30) + 250'000);
    CHECK(parse_rfc3339_us("2026-03-28 21:30:00-04:00") == utc_us(2026, 3, 29, 1, 30));
    CHECK(parse_rfc3339_us("2026-03-29T01:30:00-00:00") == utc_us(2026, 3, 29, 1, 30));  // UTC, offset unknown
    CHECK(parse_rfc3339_us("1970-01-01T00:00:00Z") == 0);
    CHECK(parse_rfc3339_us("1969-12-31T23:59:59.5Z") == -500'000);
    CHECK(parse_rfc3339_us("0000-01-01T00:00:00Z") == utc_us(0, 1, 1));
    CHECK(parse_rfc3339_us("9999-12-31T23:59:59.999999Z") == utc_us(9999, 12, 31, 23, 59, 59) + 999'999);
    const auto t = parse_rfc3339("2026-03-29T03:30:00+05:45");
    REQUIRE(t.has_value());
    CHECK(t->offset_s == 5 * 3600 + 45 * 60);
    CHECK(t->utc_us == utc_us(2026, 3, 28, 21, 45));
    CHECK(parse_rfc3339("2026-03-29T03:30:00-01:30")->offset_s == -5400);
}

TEST_CASE("rfc3339: a fraction has one or more digits; below a microsecond is dropped", "[rfc3339]") {
    const auto base = utc_us(2026, 1, 2, 3, 4, 5);
    CHECK(parse_rfc3339_us("2026-01-02T03:04:05.1Z") == base + 100'000);
    CHECK(parse_rfc3339_us("2026-01-02T03:04:05.123456Z") == base + 123'456);
    CHECK(parse_rfc3339_us("2026-01-02T03:04:05.1234569Z") == base + 123'456);  // toward the past
    CHECK(parse_rfc3339_us("2026-01-02T03:04:05.559129898Z") == base + 559'129);
    CHECK(parse_rfc3339_us("2026-01-02T03:04:05.1234567890123Z") == base + 123'456);  // 13 digits
    CHECK(parse_rfc3339_us("1969-12-31T23:59:59.9999999Z") == -1);
    CHECK(parse_rfc3339_us("2026-01-02T03:04:05.Z") == std::nullopt);
    CHECK(parse_rfc3339_us("2026-01-02T03:04:05,5Z") == std::nullopt);
    CHECK(parse_rfc3339_us("2026-01-02T03:04:05.5x5Z") == std::nullopt);
}

TEST_CASE("rfc3339: days that do not exist, fields out of range and other forms are refused", "[rfc3339]") {
    for (const char* bad : {"2026-02-29T00:00:00Z",
                            "2026-02-30T00:00:00Z",
                            "2026-02-31T00:00:00Z",
                            "2026-04-31T00:00:00Z",
                            "2100-02-29T00:00:00Z",
                            "2026-00-10T00:00:00Z",
                            "2026-13-01T00:00:00Z",
                            "2026-01-00T00:00:00Z",
                            "2026-01-32T00:00:00Z",
                            "2026-01-01T24:00:00Z",
                            "2026-01-01T23:60:00Z",
                            "2026-01-01T23:59:61Z",
                            "2026-01-01T00:00:00+24:00",
                            "2026-01-01T00:00:00+01:60",
                            "2026-01-01T00:00:00+0100",
                            "2026-01-01T00:00:00+01",
                            "2026-01-01T00:00:00",
                            "2026-01-01T00:00:00ZZ",
                            "2026-01-01T00:00:00Z ",
                            " 2026-01-01T00:00:00Z",
                            "2026-01-01_00:00:00Z",
                            "2026-1-01T00:00:00Z",
                            "26-01-01T00:00:00Z",
                            "2026-01-01T0:00:00Z",
                            "+2026-01-01T00:00:00Z",
                            "2026-W01-1T00:00:00Z",
                            "2026-01-01",
                            "yesterday",
                            ""}) {
        INFO(bad);
        CHECK(parse_rfc3339(bad) == std::nullopt);
    }
    CHECK(parse_rfc3339_us("2024-02-29T00:00:00Z") == utc_us(2024, 2, 29));  // a leap year
    CHECK(parse_rfc3339_us("2000-02-29T00:00:00Z") == utc_us(2000, 2, 29));  // divisible by 400
}

TEST_CASE("rfc3339: second 60 (a leap second) is the first second of the next minute", "[rfc3339]") {
    CHECK(parse_rfc3339_us("2016-12-31T23:59:60Z") == utc_us(2017, 1, 1));
    CHECK(parse_rfc3339_us("1990-12-31T15:59:60-08:00") == utc_us(1991, 1, 1));  // RFC 3339 §5.8
}

TEST_CASE("rfc3339: full-date to days since 1970-01-01, only days that exist", "[rfc3339]") {
    CHECK(parse_rfc3339_date("1970-01-01") == 0);
    CHECK(parse_rfc3339_date("2000-03-01") == 11'017);
    CHECK(parse_rfc3339_date("1969-12-31") == -1);
    CHECK(parse_rfc3339_date("2024-02-29") == 19'782);
    CHECK(parse_rfc3339_date("2026-02-29") == std::nullopt);
    CHECK(parse_rfc3339_date("2026-02-31") == std::nullopt);
    CHECK(parse_rfc3339_date("2026-06-31") == std::nullopt);
    CHECK(parse_rfc3339_date("2000-13-01") == std::nullopt);
    CHECK(parse_rfc3339_date("2000-3-01") == std::nullopt);
    CHECK(parse_rfc3339_date("2000-03-01T00:00:00Z") == std::nullopt);
    CHECK(parse_rfc3339_date("2000/03/01") == std::nullopt);
}

TEST_CASE("rfc3339: day numbers and dates convert both ways, and the writer reads back", "[rfc3339]") {
    CHECK(civil_from_days(0) == civil_date{1970, 1, 1});
    CHECK(civil_from_days(-1) == civil_date{1969, 12, 31});
    CHECK(civil_from_days(11'016) == civil_date{2000, 2, 29});
    CHECK(civil_from_days(-719'528) == civil_date{0, 1, 1});
    CHECK(civil_from_days(2'932'897) == civil_date{10000, 1, 1});
    // every day from 1600 to 2400 round-trips, and what the writer writes the parser reads
    for (std::int64_t d = days_from_civil(1600, 1, 1); d <= days_from_civil(2400, 12, 31); ++d) {
        const auto c = civil_from_days(d);
        REQUIRE(days_from_civil(c.year, c.month, c.day) == d);
        std::string s;
        append_rfc3339_date(s, d);
        REQUIRE(parse_rfc3339_date(s) == d);
    }
}

TEST_CASE("rfc3339: the writer's fields, fractions, negative times and years outside 0-9999", "[rfc3339]") {
    const auto text = [](std::int64_t secs, std::uint32_t frac, int digits) {
        std::string s;
        append_rfc3339(s, secs, frac, digits);
        return s;
    };
    CHECK(text(0, 0, 0) == "1970-01-01T00:00:00Z");
    CHECK(text(1'796'000'523, 4, 6) == "2026-11-30T01:02:03.000004Z");
    CHECK(text(1'796'000'523, 7, 3) == "2026-11-30T01:02:03.007Z");
    CHECK(text(-1, 999'999, 6) == "1969-12-31T23:59:59.999999Z");
    CHECK(text(253'402'300'800, 0, 6) == "10000-01-01T00:00:00.000000Z");
    CHECK(text(-62'198'755'200, 0, 0) == "-001-01-01T00:00:00Z");  // fmt's {:04} of -1
    CHECK(parse_rfc3339_us(text(1'796'000'523, 4, 6)) == std::int64_t{1'796'000'523'000'004});
}
