// SPDX-License-Identifier: Apache-2.0
#include "pipeline/rotation.hpp"

#include "pipeline/error.hpp"

#include "catch2_compat.hpp"
#include <date/date.h>

#include <string>
#include <vector>

namespace Catch {
template <>
struct StringMaker<iss::clock::system_time> {
    static std::string convert(iss::clock::system_time t) {
        return date::format("%FT%TZ", std::chrono::time_point_cast<std::chrono::seconds>(t));
    }
};
}  // namespace Catch

namespace pl = iss::pipeline;
using namespace std::chrono_literals;

namespace {
iss::clock::system_time utc(int y, unsigned mo, unsigned d, int h, int mi, int s = 0) {
    return date::sys_days{date::year{y} / mo / d} + std::chrono::hours{h} + std::chrono::minutes{mi} +
           std::chrono::seconds{s};
}
pl::rotation_options off() {
    pl::rotation_options o;
    o.max_records = 0;
    o.max_bytes = 0;
    o.max_span = {};
    o.schedule = {};
    o.idle = {};
    return o;
}
}  // namespace

TEST_CASE("hourly schedule boundaries are the next full hour in UTC", "[pipeline][rotation]") {
    auto a = pl::schedule_aligner::make(1h, "UTC");
    REQUIRE(a.has_value());
    CHECK(a->next_boundary(utc(2026, 11, 30, 1, 2, 3)) == utc(2026, 11, 30, 2, 0));
    CHECK(a->next_boundary(utc(2026, 11, 30, 2, 0)) == utc(2026, 11, 30, 3, 0));  // strictly after
    auto q = pl::schedule_aligner::make(15min, "UTC");
    CHECK(q->next_boundary(utc(2026, 11, 30, 1, 14, 59)) == utc(2026, 11, 30, 1, 15));
}

TEST_CASE("daily schedule aligns to local midnight in the configured time zone", "[pipeline][rotation]") {
    auto a = pl::schedule_aligner::make(24h, "Europe/Berlin");
    REQUIRE(a.has_value());
    // 30 Nov 2026, CET = UTC+1: local midnight of 1 Dec is 23:00 UTC on 30 Nov.
    CHECK(a->next_boundary(utc(2026, 11, 30, 12, 0)) == utc(2026, 11, 30, 23, 0));
    // Summer (CEST = UTC+2).
    CHECK(a->next_boundary(utc(2026, 7, 1, 12, 0)) == utc(2026, 7, 1, 22, 0));
    // A zone with a 30-minute offset: hourly boundaries fall on :30 UTC.
    auto k = pl::schedule_aligner::make(1h, "Asia/Kolkata");
    CHECK(k->next_boundary(utc(2026, 11, 30, 1, 10)) == utc(2026, 11, 30, 1, 30));
}

TEST_CASE("schedule boundaries across a DST change stay strictly increasing", "[pipeline][rotation]") {
    auto a = pl::schedule_aligner::make(1h, "Europe/Berlin");
    // 29 Mar 2026 02:00 local does not exist (clocks jump to 03:00 = 01:00 UTC).
    auto t = utc(2026, 3, 29, 0, 30);  // 01:30 local
    auto b1 = *a->next_boundary(t);
    CHECK(b1 == utc(2026, 3, 29, 1, 0));
    auto b2 = *a->next_boundary(b1);
    CHECK(b2 > b1);
    CHECK(b2 == utc(2026, 3, 29, 2, 0));  // 04:00 local
}

TEST_CASE("an unknown time zone is an error naming rotation.timezone", "[pipeline][rotation]") {
    auto a = pl::schedule_aligner::make(1h, "Mars/Olympus");
    REQUIRE(a.has_error());
    CHECK(a.error() == pl::errc::invalid_option);
    CHECK(a.error().detail().find("rotation.timezone") != std::string::npos);
}

TEST_CASE("schedule 0 is off", "[pipeline][rotation]") {
    auto a = pl::schedule_aligner::make(0s, "UTC");
    CHECK_FALSE(a->next_boundary(utc(2026, 1, 1, 0, 0)).has_value());
}

TEST_CASE("max_records and max_bytes fire after the append that reaches them", "[pipeline][rotation]") {
    auto o = off();
    o.max_records = 3;
    o.max_bytes = 100;
    auto p = *pl::rotation_policy::make(o);
    pl::open_object_state s;
    s.records = 2;
    s.bytes = 99;
    CHECK_FALSE(p.full(s, 0));
    s.records = 3;
    CHECK(p.full(s, 0) == pl::rotate_reason::max_records);
    s.records = 1;
    s.bytes = 100;
    CHECK(p.full(s, 0) == pl::rotate_reason::max_bytes);
    s.bytes = 50;
    CHECK(p.full(s, 50) == pl::rotate_reason::part_size);
}

TEST_CASE("max_span fires before the message that would stretch the object to it", "[pipeline][rotation]") {
    auto o = off();
    o.max_span = 10s;
    auto p = *pl::rotation_policy::make(o);
    pl::open_object_state s;
    s.records = 1;
    s.first_timestamp_us = 5'000'000;
    CHECK_FALSE(p.span_exceeded(s, 14'999'999));
    CHECK(p.span_exceeded(s, 15'000'000));
    CHECK_FALSE(p.span_exceeded(s, 1));  // record time going back never rotates
    s.records = 0;
    CHECK_FALSE(p.span_exceeded(s, 99'000'000));
}

TEST_CASE("idle and schedule make an object due; time_to_due says when", "[pipeline][rotation]") {
    auto o = off();
    o.idle = 30s;
    o.schedule = 1h;
    auto p = *pl::rotation_policy::make(o);
    iss::manual_clock c{utc(2026, 11, 30, 1, 59, 0)};
    pl::open_object_state s;
    s.records = 1;
    s.last_append = c.steady_now();
    s.schedule_deadline = p.schedule_deadline(c.system_now());
    CHECK_FALSE(p.due(s, c.steady_now(), c.system_now()));
    CHECK(*p.time_to_due(s, c.steady_now(), c.system_now()) == 30s);
    c.advance(30s);
    CHECK(p.due(s, c.steady_now(), c.system_now()) == pl::rotate_reason::idle);
    s.last_append = c.steady_now();
    CHECK(*p.time_to_due(s, c.steady_now(), c.system_now()) == 30s);
    c.advance(29s);
    CHECK(*p.time_to_due(s, c.steady_now(), c.system_now()) == 1s);
    c.advance(1s);  // 02:00:00: the hour boundary
    CHECK(p.due(s, c.steady_now(), c.system_now()) == pl::rotate_reason::schedule);
    s.records = 0;
    CHECK_FALSE(p.due(s, c.steady_now(), c.system_now()));
    CHECK_FALSE(p.time_to_due(s, c.steady_now(), c.system_now()));
}

// ---- DST transitions: boundaries are instants, each strictly after the last ----------------

namespace {

using boundaries = std::vector<iss::clock::system_time>;

/// Every boundary strictly after `from` up to and including `until`, and checks on the way
/// that any instant between two boundaries leads to the next one.
boundaries walk(const pl::schedule_aligner& a, iss::clock::system_time from, iss::clock::system_time until) {
    boundaries out;
    auto t = from;
    for (;;) {
        const auto b = a.next_boundary(t);
        REQUIRE(b.has_value());
        REQUIRE(*b > t);
        if (*b > until) break;
        CHECK(a.next_boundary(*b - 1s) == *b);
        CHECK(a.next_boundary(*b - 1ms) == *b);
        if (!out.empty()) CHECK(a.next_boundary(out.back() + (*b - out.back()) / 2) == *b);
        out.push_back(*b);
        t = *b;
    }
    return out;
}

/// n instants from `first`, `step` apart.
boundaries every(iss::clock::system_time first, std::chrono::seconds step, int n) {
    boundaries out;
    for (int i = 0; i < n; ++i) out.push_back(first + step * i);
    return out;
}

pl::schedule_aligner aligner(std::chrono::seconds period, std::string_view tz) {
    auto a = pl::schedule_aligner::make(period, tz);
    REQUIRE(a.has_value());
    return *a;
}

}  // namespace

TEST_CASE("fall-back: hourly and 15m boundaries include both passes of the repeated hour",
          "[pipeline][rotation][dst]") {
    // Europe/Berlin, 2026-10-25: 03:00 CEST (01:00Z) becomes 02:00 CET; 02:00-03:00 local twice.
    CHECK(walk(aligner(1h, "Europe/Berlin"), utc(2026, 10, 24, 21, 30), utc(2026, 10, 25, 4, 0)) ==
          every(utc(2026, 10, 24, 22, 0), 1h, 7));  // ... 00:00Z, 01:00Z (the second 02:00), 02:00Z ...
    CHECK(walk(aligner(15min, "Europe/Berlin"), utc(2026, 10, 24, 23, 50), utc(2026, 10, 25, 2, 15)) ==
          every(utc(2026, 10, 25, 0, 0), 15min, 10));  // 01:00Z, 01:15Z, 01:45Z among them
    // America/New_York, 2026-11-01: 02:00 EDT (06:00Z) becomes 01:00 EST.
    CHECK(walk(aligner(1h, "America/New_York"), utc(2026, 11, 1, 3, 30), utc(2026, 11, 1, 8, 0)) ==
          every(utc(2026, 11, 1, 4, 0), 1h, 5));
    CHECK(walk(aligner(15min, "America/New_York"), utc(2026, 11, 1, 4, 50), utc(2026, 11, 1, 7, 0)) ==
          every(utc(2026, 11, 1, 5, 0), 15min, 9));
    // Australia/Sydney, 2026-04-05: 03:00 AEDT (16:00Z on the 4th) becomes 02:00 AEST.
    CHECK(walk(aligner(1h, "Australia/Sydney"), utc(2026, 4, 4, 13, 30), utc(2026, 4, 4, 18, 0)) ==
          every(utc(2026, 4, 4, 14, 0), 1h, 5));
    // Australia/Adelaide (half-hour offsets), 2026-04-05: 03:00 ACDT (16:30Z) becomes 02:00 ACST:
    // hourly boundaries fall on :30 UTC, both 02:00 (15:30Z and 16:30Z) among them.
    CHECK(walk(aligner(1h, "Australia/Adelaide"), utc(2026, 4, 4, 13, 0), utc(2026, 4, 4, 18, 30)) ==
          every(utc(2026, 4, 4, 13, 30), 1h, 6));
    CHECK(walk(aligner(15min, "Australia/Adelaide"), utc(2026, 4, 4, 15, 20), utc(2026, 4, 4, 17, 0)) ==
          every(utc(2026, 4, 4, 15, 30), 15min, 7));
}

TEST_CASE("spring-forward: boundaries continue after the skipped hour", "[pipeline][rotation][dst]") {
    // Europe/Berlin, 2026-03-29: 02:00 CET (01:00Z) becomes 03:00 CEST.
    CHECK(walk(aligner(1h, "Europe/Berlin"), utc(2026, 3, 28, 23, 30), utc(2026, 3, 29, 3, 0)) ==
          every(utc(2026, 3, 29, 0, 0), 1h, 4));
    CHECK(walk(aligner(15min, "Europe/Berlin"), utc(2026, 3, 29, 0, 20), utc(2026, 3, 29, 1, 30)) ==
          every(utc(2026, 3, 29, 0, 30), 15min, 5));
    // America/New_York, 2026-03-08: 02:00 EST (07:00Z) becomes 03:00 EDT.
    CHECK(walk(aligner(1h, "America/New_York"), utc(2026, 3, 8, 4, 30), utc(2026, 3, 8, 9, 0)) ==
          every(utc(2026, 3, 8, 5, 0), 1h, 5));
    // Australia/Sydney, 2026-10-04: 02:00 AEST (16:00Z on the 3rd) becomes 03:00 AEDT.
    CHECK(walk(aligner(1h, "Australia/Sydney"), utc(2026, 10, 3, 13, 30), utc(2026, 10, 3, 18, 0)) ==
          every(utc(2026, 10, 3, 14, 0), 1h, 5));
    // Australia/Adelaide, 2026-10-04: 02:00 ACST (16:30Z on the 3rd) becomes 03:00 ACDT.
    CHECK(walk(aligner(1h, "Australia/Adelaide"), utc(2026, 10, 3, 13, 0), utc(2026, 10, 3, 18, 30)) ==
          every(utc(2026, 10, 3, 13, 30), 1h, 6));
}

TEST_CASE("a 30-minute DST shift: hourly objects span 90 and 30 minutes, 15m stays regular",
          "[pipeline][rotation][dst]") {
    // Australia/Lord_Howe, 2026-04-05: 02:00 +11 (15:00Z) becomes 01:30 +1030. The labels
    // 01:30-02:00 repeat; no full hour among them.
    CHECK(walk(aligner(1h, "Australia/Lord_Howe"), utc(2026, 4, 4, 13, 30), utc(2026, 4, 4, 17, 0)) ==
          boundaries{utc(2026, 4, 4, 14, 0), utc(2026, 4, 4, 15, 30), utc(2026, 4, 4, 16, 30)});
    CHECK(walk(aligner(15min, "Australia/Lord_Howe"), utc(2026, 4, 4, 13, 50), utc(2026, 4, 4, 16, 0)) ==
          every(utc(2026, 4, 4, 14, 0), 15min, 9));
    // 2026-10-04: 02:00 +1030 (15:30Z on the 3rd) becomes 02:30 +11: the label 02:00 never shows,
    // so the jump itself is the boundary.
    CHECK(walk(aligner(1h, "Australia/Lord_Howe"), utc(2026, 10, 3, 14, 0), utc(2026, 10, 3, 17, 0)) ==
          boundaries{utc(2026, 10, 3, 14, 30), utc(2026, 10, 3, 15, 30), utc(2026, 10, 3, 16, 0),
                     utc(2026, 10, 3, 17, 0)});
    CHECK(walk(aligner(15min, "Australia/Lord_Howe"), utc(2026, 10, 3, 14, 50), utc(2026, 10, 3, 16, 0)) ==
          every(utc(2026, 10, 3, 15, 0), 15min, 5));
}

TEST_CASE("1d is local midnight: 25-hour and 23-hour days make 25- and 23-hour objects", "[pipeline][rotation][dst]") {
    // Fall-back days.
    CHECK(walk(aligner(24h, "Europe/Berlin"), utc(2026, 10, 24, 12, 0), utc(2026, 10, 26, 23, 0)) ==
          boundaries{utc(2026, 10, 24, 22, 0), utc(2026, 10, 25, 23, 0), utc(2026, 10, 26, 23, 0)});
    CHECK(walk(aligner(24h, "America/New_York"), utc(2026, 10, 31, 12, 0), utc(2026, 11, 2, 5, 0)) ==
          boundaries{utc(2026, 11, 1, 4, 0), utc(2026, 11, 2, 5, 0)});
    CHECK(walk(aligner(24h, "Australia/Sydney"), utc(2026, 4, 4, 0, 0), utc(2026, 4, 5, 14, 0)) ==
          boundaries{utc(2026, 4, 4, 13, 0), utc(2026, 4, 5, 14, 0)});
    CHECK(walk(aligner(24h, "Australia/Adelaide"), utc(2026, 4, 4, 0, 0), utc(2026, 4, 5, 14, 30)) ==
          boundaries{utc(2026, 4, 4, 13, 30), utc(2026, 4, 5, 14, 30)});
    // Spring-forward days.
    CHECK(walk(aligner(24h, "Europe/Berlin"), utc(2026, 3, 28, 12, 0), utc(2026, 3, 29, 22, 0)) ==
          boundaries{utc(2026, 3, 28, 23, 0), utc(2026, 3, 29, 22, 0)});
    CHECK(walk(aligner(24h, "America/New_York"), utc(2026, 3, 7, 12, 0), utc(2026, 3, 9, 4, 0)) ==
          boundaries{utc(2026, 3, 8, 5, 0), utc(2026, 3, 9, 4, 0)});
    CHECK(walk(aligner(24h, "Australia/Sydney"), utc(2026, 10, 3, 0, 0), utc(2026, 10, 4, 13, 0)) ==
          boundaries{utc(2026, 10, 3, 14, 0), utc(2026, 10, 4, 13, 0)});
    CHECK(walk(aligner(24h, "Australia/Adelaide"), utc(2026, 10, 3, 0, 0), utc(2026, 10, 4, 13, 30)) ==
          boundaries{utc(2026, 10, 3, 14, 30), utc(2026, 10, 4, 13, 30)});
    // No DST, half-hour offset: Asia/Kolkata (+05:30) midnight is 18:30Z; 1h on :30Z, 15m regular.
    CHECK(walk(aligner(24h, "Asia/Kolkata"), utc(2026, 10, 25, 0, 0), utc(2026, 10, 27, 18, 30)) ==
          every(utc(2026, 10, 25, 18, 30), 24h, 3));
    CHECK(walk(aligner(1h, "Asia/Kolkata"), utc(2026, 10, 25, 0, 0), utc(2026, 10, 25, 3, 30)) ==
          every(utc(2026, 10, 25, 0, 30), 1h, 4));
    CHECK(walk(aligner(15min, "Asia/Kolkata"), utc(2026, 10, 25, 0, 0), utc(2026, 10, 25, 1, 0)) ==
          every(utc(2026, 10, 25, 0, 15), 15min, 4));
}

TEST_CASE("1d where midnight repeats or is skipped: once per local day", "[pipeline][rotation][dst]") {
    // Atlantic/Azores, 2026-10-25 (the EU rule, at 01:00Z): 01:00 +00 becomes 00:00 -01, so
    // midnight shows twice (00:00Z and 01:00Z): 1d rotates at the first pass only; 1h at both.
    // (Not America/Havana, which did this until tzdata 2026f kept Cuba on summer time.)
    CHECK(walk(aligner(24h, "Atlantic/Azores"), utc(2026, 10, 24, 12, 0), utc(2026, 10, 26, 1, 0)) ==
          boundaries{utc(2026, 10, 25, 0, 0), utc(2026, 10, 26, 1, 0)});
    CHECK(walk(aligner(1h, "Atlantic/Azores"), utc(2026, 10, 24, 23, 30), utc(2026, 10, 25, 2, 0)) ==
          every(utc(2026, 10, 25, 0, 0), 1h, 3));
    // America/Santiago, 2026-09-06: 00:00 -04 (04:00Z) becomes 01:00 -03: that midnight never
    // shows, the jump is the day's boundary.
    CHECK(walk(aligner(24h, "America/Santiago"), utc(2026, 9, 4, 12, 0), utc(2026, 9, 7, 3, 0)) ==
          boundaries{utc(2026, 9, 5, 4, 0), utc(2026, 9, 6, 4, 0), utc(2026, 9, 7, 3, 0)});
}

TEST_CASE("a schedule driven by the injected clock rotates at 01:00Z on the Berlin fall-back day",
          "[pipeline][rotation][dst]") {
    // rotation: {schedule: 1h, timezone: Europe/Berlin}: an object opened at 00:30Z (02:30 CEST)
    // is due at 01:00Z (02:00 CET), not at 02:00Z.
    auto o = off();
    o.schedule = 1h;
    o.timezone = "Europe/Berlin";
    auto p = *pl::rotation_policy::make(o);
    iss::manual_clock c{utc(2026, 10, 25, 0, 30)};
    pl::open_object_state s;
    s.records = 1;
    s.last_append = c.steady_now();
    s.schedule_deadline = p.schedule_deadline(c.system_now());
    CHECK(*p.time_to_due(s, c.steady_now(), c.system_now()) == 30min);
    c.advance(30min);
    CHECK(p.due(s, c.steady_now(), c.system_now()) == pl::rotate_reason::schedule);
    // The next object, opened at 01:00Z, is due at 02:00Z (03:00 CET).
    CHECK(p.schedule_deadline(c.system_now()) == utc(2026, 10, 25, 2, 0));
}
