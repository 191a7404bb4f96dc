// SPDX-License-Identifier: Apache-2.0
// Record placeholders: rendering ({yyyy} .. {hour}, {header:NAME}, {field:PATH}), the values
// read from a message, record times and their buckets across DST switches.
#include "format/key_fields.hpp"

#include "common/rfc3339.hpp"
#include "format/key_template.hpp"
#include "proto/message.hpp"

#include "catch2_compat.hpp"
#include <date/tz.h>

using namespace iss::format;

namespace {

std::int64_t utc_us(int y, unsigned mo, unsigned d, int h, int mi) {
    using namespace std::chrono;
    const auto day = date::sys_days{date::year{y} / date::month{mo} / date::day{d}};
    return duration_cast<microseconds>((day + hours{h} + minutes{mi}).time_since_epoch()).count();
}

std::string render(std::string_view tmpl, const record_values* rv, std::uint64_t start = 7) {
    auto t = key_template::parse(tmpl);
    REQUIRE(t.has_value());
    key_values v{"lake", "app", "orders", 3, start, "jsonl"};
    v.record = rv;
    return t->render(v);
}

/// A user-headers block.
struct headers {
    iss::proto::byte_buffer block;
    headers& add(std::string_view key, iss::proto::header_kind kind, iss::proto::bytes_view value) {
        REQUIRE(iss::proto::append_user_header(block, iss::proto::header_kind::string, iss::proto::as_bytes(key), kind,
                                               value)
                    .has_value());
        return *this;
    }
    headers& str(std::string_view key, std::string_view v) {
        return add(key, iss::proto::header_kind::string, iss::proto::as_bytes(v));
    }
    template <class T>
    headers& num(std::string_view key, iss::proto::header_kind kind, T v) {
        return add(key, kind, std::as_bytes(std::span{&v, 1}));
    }
    iss::proto::bytes_view view() const { return {block.data(), block.size()}; }
};

iss::proto::bytes_view bytes(const std::string& s) { return iss::proto::as_bytes(s); }

}  // namespace

TEST_CASE("key_fields: every record placeholder renders from the record values", "[key_fields]") {
    record_values rv;
    rv.time = local_time{2026, 3, 9, 4, 5};
    rv.args = {std::string{"acme"}, std::string{"DE"}};
    CHECK(render("{yyyy}/{MM}/{dd}/{HH}/{mm}/{partition}-{start_offset:04}", &rv) == "2026/03/09/04/05/3-0007");
    CHECK(render("dt={date}/hour={hour}/tenant={header:tenant}/c={field:user.country}/{partition}-{start_offset}",
                 &rv) == "dt=2026-03-09/hour=04/tenant=acme/c=DE/3-7");
    auto t = key_template::parse("{header:tenant}/{field:a.b}/{header:tenant}/{partition}{start_offset}");
    REQUIRE(t.has_value());
    REQUIRE(t->record_args().size() == 2);  // a repeated one is read once
    CHECK(t->record_args()[0] == record_arg{record_arg_kind::header, "tenant"});
    CHECK(t->record_args()[1] == record_arg{record_arg_kind::field, "a.b"});
    CHECK(t->finest_time() == time_unit::none);
    CHECK(t->uses_record());
    CHECK(key_template::parse("{date}/{partition}{start_offset}")->finest_time() == time_unit::day);
    CHECK(key_template::parse("{date}/{hour}/{partition}{start_offset}")->finest_time() == time_unit::hour);
    CHECK(key_template::parse("{yyyy}/{mm}/{partition}{start_offset}")->finest_time() == time_unit::minute);
    CHECK_FALSE(key_template::parse("{partition}{start_offset}")->uses_record());
}

TEST_CASE("key_fields: a missing header, field or time renders naming.missing_value", "[key_fields]") {
    record_values rv;
    rv.args = {std::nullopt, std::string{}};
    rv.missing = "none";
    CHECK(render("{date}/{hour}/t={header:tenant}/c={field:c}/{partition}-{start_offset}", &rv) ==
          "none/none/t=none/c=none/3-7");
    // Without record values at all: the Hive default.
    CHECK(render("t={header:tenant}/{partition}-{start_offset}", nullptr) == "t=__HIVE_DEFAULT_PARTITION__/3-7");
    rv.missing = "a/b";  // encoded like any value
    CHECK(render("t={header:tenant}/{partition}-{start_offset}", &rv) == "t=a%2Fb/3-7");
}

TEST_CASE("key_fields: values are percent-encoded and never add a path level (non-ASCII, '/', '..')", "[key_fields]") {
    record_values rv;
    rv.args = {std::string{"a/b"}, std::string{"M\xc3\xbcnchen"}, std::string{".."}};
    const auto key = render("t={header:t}/c={field:city}/d={header:dots}/{partition}-{start_offset}", &rv);
    CHECK(key == "t=a%2Fb/c=M%C3%BCnchen/d=%2E%2E/3-7");
    CHECK(std::count(key.begin(), key.end(), '/') == 3);
}

TEST_CASE("key_fields: template rules for the record placeholders", "[key_fields]") {
    auto has = [](std::string_view t, std::string_view text) {
        for (const auto& p : key_template::check(t))
            if (p.find(text) != std::string::npos) return true;
        return false;
    };
    CHECK(key_template::check("{header:tenant}/{field:items.0.sku}/{date}/{partition}{start_offset}").empty());
    CHECK(has("{header:}/{partition}{start_offset}", "needs a header name"));
    CHECK(has("{field:}/{partition}{start_offset}", "needs a payload path"));
    CHECK(has("{field:a..b}/{partition}{start_offset}", "joined by '.'"));
    CHECK(has("{HH:02}/{partition}{start_offset}", "fixed widths"));
}

TEST_CASE("key_fields: header values as key text by kind", "[key_fields]") {
    using iss::proto::header_kind;
    headers h;
    h.str("tenant", "acme")
        .num("n", header_kind::int32, std::int32_t{-42})
        .num("u", header_kind::uint64, std::uint64_t{18'446'744'073'709'551'615ULL})
        .num("f", header_kind::float64, 1.5)
        .num("b", header_kind::boolean, std::uint8_t{1});
    const std::string raw{"\x01\xab", 2};
    h.add("r", header_kind::raw, iss::proto::as_bytes(raw));
    CHECK(header_text(h.view(), "tenant").value() == std::optional<std::string>{"acme"});
    CHECK(header_text(h.view(), "n").value() == std::optional<std::string>{"-42"});
    CHECK(header_text(h.view(), "u").value() == std::optional<std::string>{"18446744073709551615"});
    CHECK(header_text(h.view(), "f").value() == std::optional<std::string>{"1.5"});
    CHECK(header_text(h.view(), "b").value() == std::optional<std::string>{"true"});
    CHECK(header_text(h.view(), "r").value() == std::optional<std::string>{"01ab"});
    CHECK(header_text(h.view(), "absent").value() == std::nullopt);
    const std::string junk{"\x09garbage"};
    CHECK(header_text(iss::proto::as_bytes(junk), "x").error() == errc::bad_headers);
}

TEST_CASE("key_fields: payload fields by dotted path, numbers as written", "[key_fields]") {
    auto t = *key_template::parse("{field:x}/{partition}{start_offset}");
    record_reader r{t, {}, date::locate_zone("UTC"), "none"};
    const std::string p = R"({"user":{"country":"DE","name":"J\u00fcrgen \"J\""},"items":[{"sku":"a1"},{"sku":"b2"}],)"
                          R"("price":1.50,"big":123456789012345678901234567890,"ok":false,"nothing":null,"o":{}})";
    CHECK(r.field_text(bytes(p), "user.country") == std::optional<std::string>{"DE"});
    CHECK(r.field_text(bytes(p), "user.name") == std::optional<std::string>{"J\xc3\xbcrgen \"J\""});
    CHECK(r.field_text(bytes(p), "items.1.sku") == std::optional<std::string>{"b2"});
    CHECK(r.field_text(bytes(p), "price") == std::optional<std::string>{"1.50"});
    CHECK(r.field_text(bytes(p), "big") == std::optional<std::string>{"123456789012345678901234567890"});
    CHECK(r.field_text(bytes(p), "ok") == std::optional<std::string>{"false"});
    CHECK(r.field_text(bytes(p), "nothing") == std::nullopt);
    CHECK(r.field_text(bytes(p), "o") == std::nullopt);
    CHECK(r.field_text(bytes(p), "items.7.sku") == std::nullopt);
    CHECK(r.field_text(bytes(p), "user.missing") == std::nullopt);
    CHECK(r.field_text(bytes(std::string{"not json"}), "user") == std::nullopt);
}

TEST_CASE("key_fields: RFC 3339 times and time sources", "[key_fields]") {
    CHECK(iss::parse_rfc3339_us("2026-03-29T01:30:00Z") == utc_us(2026, 3, 29, 1, 30));
    CHECK(iss::parse_rfc3339_us("2026-03-29T03:30:00.25+02:00") == utc_us(2026, 3, 29, 1, 30) + 250'000);
    CHECK(iss::parse_rfc3339_us("2026-03-28 21:30:00-04:00") == utc_us(2026, 3, 29, 1, 30));
    CHECK(iss::parse_rfc3339_us("2026-02-30T00:00:00Z") == std::nullopt);
    CHECK(iss::parse_rfc3339_us("2026-03-29T01:30:00") == std::nullopt);  // no offset: ambiguous
    CHECK(iss::parse_rfc3339_us("yesterday") == std::nullopt);
    CHECK(parse_time_source("timestamp").value().what == time_source::kind::timestamp);
    CHECK(parse_time_source("origin_timestamp").value().what == time_source::kind::origin_timestamp);
    CHECK(parse_time_source("field:meta.ts").value() == time_source{time_source::kind::field, "meta.ts"});
    CHECK(parse_time_source("header:ts").value() == time_source{time_source::kind::header, "ts"});
    CHECK(parse_time_source("field:").has_error());
    CHECK(parse_time_source("wallclock").has_error());
}

TEST_CASE("key_fields: the record reader takes time from the chosen source; unreadable time is an error",
          "[key_fields]") {
    using iss::proto::header_kind;
    auto t = *key_template::parse("{date}/{hour}/{header:tenant}/{partition}{start_offset}");
    const auto* berlin = date::locate_zone("Europe/Berlin");
    headers h;
    h.str("tenant", "acme").num("ts", header_kind::int64, std::int64_t{utc_us(2026, 7, 1, 22, 30) / 1000});
    const std::string payload = R"({"ts":"2026-07-01T10:00:00Z"})";
    record_input in{static_cast<std::uint64_t>(utc_us(2026, 1, 1, 0, 0)),
                    static_cast<std::uint64_t>(utc_us(2026, 2, 1, 0, 0)), bytes(payload), h.view()};
    record_values rv;
    std::optional<std::int64_t> bucket;
    record_reader by_ts{t, {}, berlin, "none"};
    REQUIRE(by_ts.read(in, rv, bucket).has_value());
    CHECK(rv.time == local_time{2026, 1, 1, 1, 0});  // CET
    CHECK(rv.args.at(0) == std::optional<std::string>{"acme"});
    record_reader by_origin{t, {time_source::kind::origin_timestamp, {}}, berlin, "none"};
    REQUIRE(by_origin.read(in, rv, bucket).has_value());
    CHECK(rv.time == local_time{2026, 2, 1, 1, 0});
    record_reader by_field{t, {time_source::kind::field, "ts"}, berlin, "none"};
    REQUIRE(by_field.read(in, rv, bucket).has_value());
    CHECK(rv.time == local_time{2026, 7, 1, 12, 0});  // CEST
    record_reader by_header{t, {time_source::kind::header, "ts"}, berlin, "none"};
    REQUIRE(by_header.read(in, rv, bucket).has_value());
    CHECK(rv.time == local_time{2026, 7, 2, 0, 30});  // the next local day
    record_reader missing{t, {time_source::kind::field, "nope"}, berlin, "none"};
    auto r = missing.read(in, rv, bucket);
    REQUIRE(r.has_error());
    CHECK(r.error() == errc::bad_record_time);
    CHECK(r.error().detail().find("field:nope") != std::string::npos);
}

TEST_CASE("key_fields: Europe/Berlin spring forward: local 02 never exists, buckets follow real hours",
          "[key_fields][dst]") {
    const auto& tz = *date::locate_zone("Europe/Berlin");
    // 2026-03-29 01:00 UTC: 02:00 CET becomes 03:00 CEST.
    CHECK(to_local_time(utc_us(2026, 3, 29, 0, 59), tz) == local_time{2026, 3, 29, 1, 59});
    CHECK(to_local_time(utc_us(2026, 3, 29, 1, 0), tz) == local_time{2026, 3, 29, 3, 0});
    const auto h1 = time_bucket(utc_us(2026, 3, 29, 0, 30), time_unit::hour, tz);
    const auto h3 = time_bucket(utc_us(2026, 3, 29, 1, 30), time_unit::hour, tz);
    CHECK(h3 - h1 == 3600);  // local 01 and 03 are consecutive real hours
    // The 23-hour day is one day bucket.
    CHECK(time_bucket(utc_us(2026, 3, 28, 23, 0), time_unit::day, tz) ==
          time_bucket(utc_us(2026, 3, 29, 21, 59), time_unit::day, tz));
    CHECK(time_bucket(utc_us(2026, 3, 29, 22, 0), time_unit::day, tz) >
          time_bucket(utc_us(2026, 3, 29, 21, 59), time_unit::day, tz));
}

TEST_CASE("key_fields: Europe/Berlin fall back: local 02 twice, two buckets that render alike", "[key_fields][dst]") {
    const auto& tz = *date::locate_zone("Europe/Berlin");
    // 2026-10-25 01:00 UTC: 03:00 CEST becomes 02:00 CET.
    const auto first = utc_us(2026, 10, 25, 0, 30);   // 02:30 CEST
    const auto second = utc_us(2026, 10, 25, 1, 30);  // 02:30 CET
    CHECK(to_local_time(first, tz) == local_time{2026, 10, 25, 2, 30});
    CHECK(to_local_time(second, tz) == local_time{2026, 10, 25, 2, 30});
    CHECK(time_bucket(second, time_unit::hour, tz) - time_bucket(first, time_unit::hour, tz) == 3600);
    CHECK(time_bucket(first, time_unit::minute, tz) != time_bucket(second, time_unit::minute, tz));
    // The 25-hour day: 22:00 UTC the day before to 23:00 UTC is one local day.
    CHECK(time_bucket(utc_us(2026, 10, 24, 22, 0), time_unit::day, tz) ==
          time_bucket(utc_us(2026, 10, 25, 22, 59), time_unit::day, tz));
    CHECK(time_bucket(utc_us(2026, 10, 25, 23, 0), time_unit::day, tz) >
          time_bucket(utc_us(2026, 10, 25, 22, 59), time_unit::day, tz));
}

TEST_CASE("key_fields: America/Sao_Paulo historical DST (midnight switches, abolished 2019)", "[key_fields][dst]") {
    const auto& tz = *date::locate_zone("America/Sao_Paulo");
    // 2018-11-04 03:00 UTC: 00:00 BRT became 01:00 BRST: local hour 00 of that day never existed.
    CHECK(to_local_time(utc_us(2018, 11, 4, 2, 59), tz) == local_time{2018, 11, 3, 23, 59});
    CHECK(to_local_time(utc_us(2018, 11, 4, 3, 0), tz) == local_time{2018, 11, 4, 1, 0});
    CHECK(time_bucket(utc_us(2018, 11, 4, 3, 0), time_unit::day, tz) -
              time_bucket(utc_us(2018, 11, 4, 2, 59), time_unit::day, tz) ==
          1);
    // 2019-02-17 02:00 UTC: 00:00 BRST went back to 23:00 BRT of the 16th: hour 23 twice.
    const auto a = utc_us(2019, 2, 17, 1, 30);  // 23:30 BRST (-02)
    const auto b = utc_us(2019, 2, 17, 2, 30);  // 23:30 BRT (-03)
    CHECK(to_local_time(a, tz) == local_time{2019, 2, 16, 23, 30});
    CHECK(to_local_time(b, tz) == local_time{2019, 2, 16, 23, 30});
    CHECK(time_bucket(b, time_unit::hour, tz) - time_bucket(a, time_unit::hour, tz) == 3600);
    CHECK(time_bucket(a, time_unit::day, tz) == time_bucket(b, time_unit::day, tz));
    // Since 2019 no DST: -03 all year.
    CHECK(to_local_time(utc_us(2026, 1, 15, 12, 0), tz) == local_time{2026, 1, 15, 9, 0});
}

TEST_CASE("key_fields: one record reader across DST switches gives the zone's real offsets each side",
          "[key_fields][dst]") {
    auto t = *key_template::parse("{date}/{hour}/{partition}{start_offset}");
    record_reader r{t, {}, date::locate_zone("Europe/Berlin"), "none"};
    record_values rv;
    std::optional<std::int64_t> bucket;
    auto at = [&](std::int64_t us) {
        REQUIRE(r.read({static_cast<std::uint64_t>(us), 0, {}, {}}, rv, bucket).has_value());
        return std::make_pair(*rv.time, *bucket);
    };
    const auto a = at(utc_us(2026, 10, 25, 0, 30));  // 02:30 CEST
    const auto b = at(utc_us(2026, 10, 25, 1, 30));  // 02:30 CET
    const auto c = at(utc_us(2026, 3, 29, 1, 30));   // back in spring: 03:30 CEST
    const auto d = at(utc_us(2026, 3, 29, 0, 30));   // 01:30 CET
    CHECK(a.first == local_time{2026, 10, 25, 2, 30});
    CHECK(b.first == local_time{2026, 10, 25, 2, 30});
    CHECK(b.second - a.second == 3600);
    CHECK(c.first == local_time{2026, 3, 29, 3, 30});
    CHECK(d.first == local_time{2026, 3, 29, 1, 30});
    CHECK(c.second - d.second == 3600);
}
