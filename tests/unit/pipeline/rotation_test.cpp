#include "pipeline/error.hpp"
#include "pipeline/rotation.hpp"

#include <date/date.h>

#include <catch2/catch.hpp>

namespace pl = iss::pipeline;
using namespace std::chrono_literals;

namespace {
iss::clock::system_time utc(int y, unsigned mo, unsigned d, int h, int mi, int s = 0) {
    return date::sys_days{date::year{y} / mo / d} + std::chrono::hours{h} + std::chrono::minutes{mi}
           + std::chrono::seconds{s};
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
