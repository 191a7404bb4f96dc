// SPDX-License-Identifier: Apache-2.0
#include "iceberg/partition.hpp"

#include "format/schema.hpp"
#include "iceberg/schema.hpp"

#include "catch2_compat.hpp"

#include <string>
#include <vector>

using namespace iss;
using namespace iss::iceberg;

namespace {

format::column col(std::string name, format::column_type t, bool nullable = true) {
    format::column c;
    c.name = std::move(name);
    c.type = t;
    c.nullable = nullable;
    return c;
}

std::vector<format::column> columns() {
    using ct = format::column_type;
    return {col("ts", ct::timestamp_us, false),
            col("tenant", ct::string),
            col("n", ct::int64),
            col("d", ct::date),
            col("b", ct::binary),
            col("x", ct::float64),
            col("h", ct::map)};
}

table_schema schema() { return make_schema(columns()).value(); }

partition_field field_of(std::string entry) {
    const std::vector<std::string> e{std::move(entry)};
    auto spec = parse_partition_by(e, schema());
    REQUIRE(spec.has_value());
    return spec->fields.at(0);
}

// 2017-11-16T22:31:08Z in µs
constexpr std::int64_t spec_ts = 1'510'871'468'000'000LL;

}  // namespace

TEST_CASE("bucket hash passes the spec's Appendix B test values", "[iceberg][partition]") {
    CHECK(bucket_hash(type_id::int_, value::of_int(34)) == 2017239379);
    CHECK(bucket_hash(type_id::long_, value::of_int(34)) == 2017239379);
    CHECK(bucket_hash(type_id::date, value::of_int(17486)) == -653330422);  // 2017-11-16
    CHECK(bucket_hash(type_id::timestamptz, value::of_int(spec_ts)) == -2047944441);
    CHECK(bucket_hash(type_id::timestamptz, value::of_int(spec_ts + 1)) == -1207196810);
    CHECK(bucket_hash(type_id::string, value::of_bytes("iceberg")) == 1210000089);
    CHECK(bucket_hash(type_id::binary, value::of_bytes(std::string{"\x00\x01\x02\x03", 4})) == -188683207);
    // uuid bytes (Appendix B note 4): exercises the 4-byte blocks with a high bit set
    CHECK(murmur3_x86_32(std::string{"\xF7\x9C\x3E\x09\x67\x7C\x4B\xBD\xA4\x79\x3F\x34\x9C\xB7\x85\xE7", 16}) ==
          1488055340);
}

TEST_CASE("bucket(N, c) is the hash's non-negative part modulo N", "[iceberg][partition]") {
    const auto f = field_of("bucket(16, tenant)");
    CHECK(f.name == "tenant_bucket");
    CHECK(f.transform_text() == "bucket[16]");
    CHECK(f.result_type() == type_id::int_);
    CHECK(apply(f, value::of_bytes("iceberg")).i == 1210000089 % 16);
    const auto g = field_of("bucket(100, n)");
    CHECK(apply(g, value::of_int(34)).i == 79);  // 2017239379 % 100
    // a negative hash: (h & INT_MAX) % N
    const auto d = field_of("bucket(10, d)");
    CHECK(apply(d, value::of_int(17486)).i == ((-653330422 & 0x7FFFFFFF) % 10));
    CHECK(apply(f, value{}).null);
}

TEST_CASE("truncate(W, c) follows the spec for integers, strings and binary", "[iceberg][partition]") {
    const auto f = field_of("truncate(10, n)");
    CHECK(f.name == "n_trunc");
    CHECK(apply(f, value::of_int(1)).i == 0);
    CHECK(apply(f, value::of_int(-1)).i == -10);
    CHECK(apply(f, value::of_int(11)).i == 10);
    const auto s = field_of("truncate(3, tenant)");
    CHECK(apply(s, value::of_bytes("iceberg")).s == "ice");
    // code points, not bytes: "é" is two bytes
    CHECK(apply(s, value::of_bytes("\xC3\xA9t\xC3\xA9s")).s == "\xC3\xA9t\xC3\xA9");
    const auto b = field_of("truncate(2, b)");
    CHECK(apply(b, value::of_bytes(std::string{"\x00\x01\x02", 3})).s == std::string{"\x00\x01", 2});
}

TEST_CASE("time transforms count from 1970 in UTC, before the epoch too", "[iceberg][partition]") {
    const auto y = field_of("year(ts)");
    const auto m = field_of("month(ts)");
    const auto d = field_of("day(ts)");
    const auto h = field_of("hour(ts)");
    CHECK(apply(y, value::of_int(spec_ts)).i == 47);
    CHECK(apply(m, value::of_int(spec_ts)).i == 47 * 12 + 10);
    CHECK(apply(d, value::of_int(spec_ts)).i == 17486);
    CHECK(d.result_type() == type_id::date);
    CHECK(apply(h, value::of_int(spec_ts)).i == 17486 * 24 + 22);
    // one µs before the epoch is day -1, hour -1, 1969
    CHECK(apply(d, value::of_int(-1)).i == -1);
    CHECK(apply(h, value::of_int(-1)).i == -1);
    CHECK(apply(y, value::of_int(-1)).i == -1);
    CHECK(apply(m, value::of_int(-1)).i == -1);
    // a date column
    CHECK(apply(field_of("month(d)"), value::of_int(17486)).i == 47 * 12 + 10);
}

TEST_CASE("the partition path is what Iceberg writers name it", "[iceberg][partition]") {
    const std::vector<std::string> e{"day(ts)", "identity(tenant)"};
    const auto spec = parse_partition_by(e, schema()).value();
    std::vector<format::cell> row(7);
    row[0].k = format::cell::kind::integer;
    row[0].i = 1'796'601'600'000'000LL + 3'600'000'000LL;  // 2026-12-07T01:00:00Z
    row[1].k = format::cell::kind::bytes;
    row[1].s = "a";
    const auto v = spec.values(row);
    CHECK(spec.path(v) == "ts_day=2026-12-07/tenant=a");
    row[1].s = "a b/c&d";
    CHECK(spec.path(spec.values(row)) == "ts_day=2026-12-07/tenant=a+b%2Fc%26d");
    row[1].k = format::cell::kind::null;
    CHECK(spec.path(spec.values(row)) == "ts_day=2026-12-07/tenant=null");
    const auto hour = field_of("hour(ts)");
    CHECK(human_string(hour, apply(hour, value::of_int(spec_ts))) == "2017-11-16-22");
    const auto month = field_of("month(ts)");
    CHECK(human_string(month, apply(month, value::of_int(spec_ts))) == "2017-11");
    const auto year = field_of("year(ts)");
    CHECK(human_string(year, apply(year, value::of_int(spec_ts))) == "2017");
}

TEST_CASE("the spec JSON has field ids from 1000 and the schema's source ids", "[iceberg][partition]") {
    const std::vector<std::string> e{"day(ts)", "bucket(8, tenant)"};
    const auto spec = parse_partition_by(e, schema()).value();
    CHECK(spec.json() == R"({"spec-id":0,"fields":[{"name":"ts_day","transform":"day","source-id":1,"field-id":1000},)"
                         R"({"name":"tenant_bucket","transform":"bucket[8]","source-id":2,"field-id":1001}]})");
    CHECK(spec.last_partition_id() == 1001);
    CHECK(partition_spec{}.last_partition_id() == 999);
    CHECK(partition_spec{}.path({}).empty());
}

TEST_CASE("check_partition_by names every unknown transform, column and misfit", "[iceberg][partition]") {
    const auto cols = columns();
    const std::vector<std::string> e{"days(ts)", "identity(nope)", "hour(d)", "bucket(0, n)", "bucket(4, x)",
                                     "tenant",   "day(ts)",        "day(ts)", "truncate(3)"};
    const auto p = check_partition_by(e, cols);
    REQUIRE(p.size() == 8);
    CHECK_THAT(p[0], Catch::Matchers::ContainsSubstring("unknown transform `days`"));
    CHECK_THAT(p[0], Catch::Matchers::ContainsSubstring("bucket(N, c)"));
    CHECK_THAT(p[1], Catch::Matchers::ContainsSubstring("no column `nope`"));
    CHECK_THAT(p[1], Catch::Matchers::ContainsSubstring("columns: ts, tenant"));
    CHECK_THAT(p[2], Catch::Matchers::ContainsSubstring("hour does not apply to column `d` of type date"));
    CHECK_THAT(p[3], Catch::Matchers::ContainsSubstring("positive integer"));
    CHECK_THAT(p[4], Catch::Matchers::ContainsSubstring("bucket does not apply to column `x` of type double"));
    CHECK_THAT(p[5], Catch::Matchers::ContainsSubstring("`tenant` is not a transform call"));
    CHECK_THAT(p[6], Catch::Matchers::ContainsSubstring("`ts_day` is already defined"));
    CHECK_THAT(p[7], Catch::Matchers::ContainsSubstring("truncate(N, c)"));
    CHECK(check_partition_by(std::vector<std::string>{"identity(tenant)", " bucket( 4 , n ) "}, cols).empty());
    CHECK_FALSE(parse_partition_by(e, schema()).has_value());
}

TEST_CASE("a bucket count or width beyond an Iceberg int says it is too large, not that it is not positive",
          "[iceberg][partition]") {
    const auto cols = columns();
    for (const std::string n : {"2147483648", "99999999999999999999999"}) {
        const auto p =
            check_partition_by(std::vector<std::string>{"bucket(" + n + ", n)", "truncate(" + n + ", tenant)"}, cols);
        REQUIRE(p.size() == 2);
        CHECK_THAT(p[0], Catch::Matchers::ContainsSubstring("the bucket count N is too large: `" + n +
                                                            "` is above 2147483647, the largest Iceberg int"));
        CHECK_THAT(p[1], Catch::Matchers::ContainsSubstring("the width W is too large"));
        CHECK(p[0].find("positive") == std::string::npos);
    }
    CHECK(check_partition_by(std::vector<std::string>{"bucket(2147483647, n)"}, cols).empty());
    const auto neg = check_partition_by(std::vector<std::string>{"bucket(-99999999999999999999, n)"}, cols);
    REQUIRE(neg.size() == 1);
    CHECK_THAT(neg[0], Catch::Matchers::ContainsSubstring("must be a positive integer"));
}

TEST_CASE("single-value serialization follows Appendix D", "[iceberg][partition]") {
    CHECK(single_value(type_id::int_, value::of_int(1)) == std::string{"\x01\x00\x00\x00", 4});
    CHECK(single_value(type_id::date, value::of_int(-1)) == std::string{"\xFF\xFF\xFF\xFF", 4});
    CHECK(single_value(type_id::long_, value::of_int(34)) == std::string{"\x22\0\0\0\0\0\0\0", 8});
    CHECK(single_value(type_id::timestamptz, value::of_int(1)).size() == 8);
    CHECK(single_value(type_id::double_, value{false, 0, 1.0, {}}) == std::string{"\0\0\0\0\0\0\xF0\x3F", 8});
    CHECK(single_value(type_id::float_, value{false, 0, 1.0, {}}) == std::string{"\0\0\x80\x3F", 4});
    CHECK(single_value(type_id::boolean, value::of_int(1)) == std::string{"\x01", 1});
    CHECK(single_value(type_id::string, value::of_bytes("abc")) == "abc");
}
