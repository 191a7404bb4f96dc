// SPDX-License-Identifier: Apache-2.0
// One record, two readers of its time: the key's placement (`naming.time_source: field:t`,
// format/key_fields.cpp) and a timestamp column (`from: payload:t`, format/row_reader.cpp, the
// cells the Parquet, Avro and CSV writers encode) read the same RFC 3339 text by the same rules
// (common/rfc3339.hpp), so a record's folder and its column never disagree, nor does one of
// them take a time the other refuses.
#include "common/rfc3339.hpp"
#include "format/key_fields.hpp"
#include "format/key_template.hpp"
#include "format/schema.hpp"
#include "test_messages.hpp"

#include "catch2_compat.hpp"
#include <date/tz.h>

using namespace iss::format;

namespace {

std::string key_of(const key_template& t, const local_time& when) {
    record_values rv;
    rv.time = when;
    key_values v{"lake", "app", "orders", 3, 7, "parquet"};
    v.record = &rv;
    return t.render(v);
}

}  // namespace

TEST_CASE("record time: the key's placement and the timestamp column agree on the same text", "[format][rfc3339]") {
    test::message_store ms;
    const auto tmpl = *key_template::parse("{yyyy}/{MM}/{dd}/{HH}/{mm}/{partition}-{start_offset}");
    const auto* utc = date::locate_zone("UTC");
    record_reader key_reader{tmpl, {time_source::kind::field, "t"}, utc, "none"};
    column c;
    c.name = "t";
    c.type = column_type::timestamp_us;
    c.source = column_source::payload_path;
    c.path = "t";
    row_reader column_reader{{c}};
    struct sample {
        const char* text;
        const char* key;  ///< the key both place it under; nullptr: both refuse it
    };
    for (const sample& s : {
             sample{"2026-03-29T03:30:00.25+02:00", "2026/03/29/01/30/3-7"},
             sample{"2026-03-28 21:30:00-04:00", "2026/03/29/01/30/3-7"},
             sample{"2024-02-29T23:59:59.999999Z", "2024/02/29/23/59/3-7"},
             sample{"2016-12-31T23:59:60Z", "2017/01/01/00/00/3-7"},
             // Used to differ: the column refused more than nine fraction digits, the key took them.
             sample{"2026-01-02T03:04:05.1234567890Z", "2026/01/02/03/04/3-7"},
             // Used to differ: the column took days that do not exist, the key refused them.
             sample{"2026-02-31T00:00:00Z", nullptr},
             sample{"2026-04-31T12:00:00Z", nullptr},
             sample{"2100-02-29T00:00:00Z", nullptr},
             sample{"2026-01-02T03:04:05.Z", nullptr},
             sample{"2026-01-02T03:04:05", nullptr},
         }) {
        INFO(s.text);
        const std::string payload = std::string{R"({"t":")"} + s.text + "\"}";
        const auto m = ms.make(0, payload);
        const record_input in{m.timestamp, m.origin_timestamp, m.payload, m.user_headers};
        record_values rv;
        std::optional<std::int64_t> bucket;
        const auto placed = key_reader.read(in, rv, bucket);
        const auto row = column_reader.read(m, "app", "orders", 3);
        CHECK(placed.has_value() == row.has_value());
        if (s.key == nullptr) {
            CHECK_FALSE(placed.has_value());
            CHECK_FALSE(row.has_value());
            continue;
        }
        REQUIRE(placed.has_value());
        REQUIRE(row.has_value());
        const std::int64_t column_us = (*row)[0].i;
        CHECK(key_reader.record_time_us(in).value() == column_us);
        CHECK(column_us == iss::parse_rfc3339_us(s.text));
        CHECK(key_of(tmpl, *rv.time) == s.key);
        CHECK(key_of(tmpl, to_local_time(column_us, *utc)) == s.key);  // the folder the column's value names
    }
}
