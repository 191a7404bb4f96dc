// SPDX-License-Identifier: Apache-2.0
// The typed formats through format::writer: schema errors (bad messages), determinism, row
// groups appended as they fill, CSV text. What the files hold is checked by DuckDB and
// python3-avro (typed_sample.cpp, tests/readers).
#include "common/rfc3339.hpp"
#include "format/writer.hpp"
#include "test_messages.hpp"

#include "catch2_compat.hpp"

#include <limits>

using namespace iss::format;
namespace proto = iss::proto;

namespace {

const record_source src{"app", "requests", 2};

bool ok(const iss::result<void>& r) { return r.has_value(); }

column col(std::string name, column_type t, std::string path, bool nullable = true) {
    column c;
    c.name = std::move(name);
    c.type = t;
    c.source = column_source::payload_path;
    c.path = std::move(path);
    c.nullable = nullable;
    return c;
}

writer_options typed(record_format f, std::vector<column> cols) {
    writer_options o;
    o.format = f;
    o.schema = std::move(cols);
    return o;
}

}  // namespace

TEST_CASE("schema: a value that does not fit is a bad message naming column and offset; out is untouched",
          "[format][schema]") {
    test::message_store ms;
    const auto fmt = GENERATE(record_format::parquet, record_format::csv, record_format::avro);
    writer w{typed(fmt, {col("n", column_type::int32, "n"), col("s", column_type::string, "s", false)})};
    std::string out;
    w.begin(out);
    REQUIRE(ok(w.append(ms.make(0, R"({"n":1,"s":"a"})"), src, out)));
    const std::string before = out;
    const auto before_buffered = w.buffered_bytes();
    struct bad {
        const char* payload;
        const char* says;
    };
    for (const bad& b :
         {bad{R"({"n":2147483648,"s":"a"})", "outside the int32 range"}, bad{R"({"n":"7","s":"a"})", "is a string"},
          bad{R"({"n":1.5,"s":"a"})", "is not an integer"}, bad{R"({"n":1})", "has no value (nullable: false)"},
          bad{R"({"n":1,"s":null})", "has no value (nullable: false)"},
          bad{R"({"n":1,"s":{"x":1}})", "is an object"}}) {
        INFO(b.payload);
        auto r = w.append(ms.make(41, b.payload), src, out);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error() == errc::bad_value);
        CHECK_THAT(r.error().detail(),
                   Catch::Matchers::ContainsSubstring("offset 41") && Catch::Matchers::ContainsSubstring(b.says));
        CHECK(out == before);
        CHECK(w.buffered_bytes() == before_buffered);
    }
    auto notjson = w.append(ms.make(42, "not json"), src, out);
    REQUIRE_FALSE(notjson.has_value());
    CHECK(notjson.error() == errc::bad_payload);
    CHECK(w.records() == 1);
}

TEST_CASE("schema: config texts become columns, or every problem", "[format][schema]") {
    column c;
    CHECK(make_column("a", "int64", "payload:x.y", true, c).empty());
    CHECK(c.source == column_source::payload_path);
    CHECK(c.path == "x.y");
    CHECK(make_column("a", "json", "payload:.", true, c).empty());
    CHECK(c.source == column_source::payload_root);
    CHECK(make_column("a", "timestamp_us", "timestamp", false, c).empty());
    CHECK(make_column("a", "string", "header:trace-id", true, c).empty());
    CHECK(c.source == column_source::header);
    const auto p = make_column("", "integer", "payload:a..b", true, c);
    REQUIRE(p.size() == 3);
    CHECK_THAT(p[0], Catch::Matchers::StartsWith("name:"));
    CHECK_THAT(p[1], Catch::Matchers::StartsWith("type:"));
    CHECK_THAT(p[2], Catch::Matchers::StartsWith("from:"));
    const auto q = make_column("t", "boolean", "timestamp", true, c);
    REQUIRE(q.size() == 1);
    CHECK_THAT(q[0], Catch::Matchers::ContainsSubstring("timestamp_us, timestamp_ms or int64"));
    CHECK(make_column("x", "string", "headerz", true, c).size() == 1);
    const std::vector<column> dup{col("a", column_type::string, "x"), col("a", column_type::int64, "y")};
    CHECK(check_schema(dup).size() == 1);
}

TEST_CASE("schema: RFC 3339 and dates, header values by kind", "[format][schema]") {
    test::message_store ms;
    column h;
    h.name = "h";
    h.type = column_type::int32;
    h.source = column_source::header;
    h.path = "code";
    row_reader rr{{col("t", column_type::timestamp_ms, "t"), col("d", column_type::date, "d"), h}};
    test::headers hs;
    hs.add("code", proto::header_value{std::int16_t{-7}});
    auto row = rr.read(ms.make(0, R"({"t":"1970-01-01T00:00:01.5+00:00","d":"2000-03-01"})", hs), "s", "t", 0);
    REQUIRE(row.has_value());
    CHECK((*row)[0].i == 1500);
    CHECK((*row)[1].i == iss::days_from_civil(2000, 3, 1));
    CHECK((*row)[1].i == 11'017);
    CHECK((*row)[2].i == -7);
    CHECK_FALSE(rr.read(ms.make(1, R"({"t":"1970-01-01 00:00:01","d":"2000-03-01"})"), "s", "t", 0).has_value());
    CHECK_FALSE(rr.read(ms.make(2, R"({"t":0,"d":"2000-13-01"})"), "s", "t", 0).has_value());
    CHECK_FALSE(rr.read(ms.make(3, R"({"t":0,"d":2147483648})"), "s", "t", 0).has_value());  // days beyond int32
    std::string s;
    append_timestamp(s, -1, true);
    CHECK(s == "1969-12-31T23:59:59.999Z");
}

TEST_CASE("parquet: the same messages give the same bytes", "[format][parquet]") {
    test::message_store ms;
    const auto codec = GENERATE(parquet_codec::none, parquet_codec::snappy, parquet_codec::zstd, parquet_codec::gzip);
    auto o = typed(record_format::parquet, {col("n", column_type::int64, "n"), col("s", column_type::string, "s")});
    o.parquet.codec = codec;
    o.parquet.row_group_size = 4096;
    std::string a, b;
    for (std::string* out : {&a, &b}) {
        writer w{o};
        w.begin(*out);
        for (int i = 0; i < 2000; ++i)
            REQUIRE(ok(
                w.append(ms.make(i, "{\"n\":" + std::to_string(i * 7) + ",\"s\":\"v" + std::to_string(i % 13) + "\"}"),
                         src, *out)));
        w.finish(*out);
    }
    CHECK(a == b);
    CHECK(a.substr(0, 4) == "PAR1");
    CHECK(a.substr(a.size() - 4) == "PAR1");
}

TEST_CASE("parquet: a full row group goes to out before the object ends; memory is one row group",
          "[format][parquet]") {
    test::message_store ms;
    auto o = typed(record_format::parquet, {col("n", column_type::int64, "n"), col("s", column_type::string, "s")});
    o.parquet.row_group_size = 64 * 1024;
    writer w{o};
    std::string out;
    w.begin(out);
    CHECK(out == "PAR1");
    std::uint64_t flushes = 0, max_buffered = 0;
    std::size_t last = out.size();
    for (int i = 0; i < 20'000; ++i) {
        REQUIRE(ok(w.append(ms.make(i, "{\"n\":" + std::to_string(i) + ",\"s\":\"row " + std::to_string(i) + "\"}"),
                            src, out)));
        max_buffered = std::max(max_buffered, w.buffered_bytes());
        if (out.size() != last) {
            ++flushes;
            CHECK(w.buffered_bytes() == 0);
            last = out.size();
        }
    }
    CHECK(flushes >= 3);
    CHECK(max_buffered < o.parquet.row_group_size + 1024);
    CHECK(w.bytes_out() == out.size());
    w.finish(out);
    CHECK(w.bytes_out() == out.size());
    CHECK(w.buffered_bytes() == 0);
}

TEST_CASE("parquet and avro refuse an outer compressor; extensions and content types", "[format][writer]") {
    auto o = typed(record_format::parquet, {col("n", column_type::int64, "n")});
    o.compression = compression::gzip;
    CHECK(extension(o) == "parquet");
    CHECK(content_type(o) == "application/vnd.apache.parquet");
    test::message_store ms;
    writer w{o};
    std::string out;
    w.begin(out);
    REQUIRE(ok(w.append(ms.make(0, R"({"n":1})"), src, out)));
    w.finish(out);
    CHECK(out.substr(0, 4) == "PAR1");  // not a gzip stream
    o.format = record_format::avro;
    CHECK(extension(o) == "avro");
    CHECK(content_type(o) == "application/avro");
    o.format = record_format::csv;
    CHECK(extension(o) == "csv.gz");
    CHECK(content_type(o) == "application/gzip");
    o.compression = compression::none;
    CHECK(content_type(o) == "text/csv");
}

TEST_CASE("csv: RFC 4180 quoting, CRLF, nulls and empty strings differ", "[format][csv]") {
    test::message_store ms;
    auto o = typed(record_format::csv, {col("s", column_type::string, "s"), col("n", column_type::int64, "n"),
                                        col("b", column_type::binary, "b"), col("j", column_type::json, "j")});
    SECTION("defaults") {
        writer w{o};
        std::string out;
        w.begin(out);
        REQUIRE(
            ok(w.append(ms.make(0, R"({"s":"a,b","n":-9223372036854775808,"b":"hi","j":{"x":[1, 2]}})"), src, out)));
        REQUIRE(ok(w.append(ms.make(1, R"({"s":"","n":null})"), src, out)));
        REQUIRE(ok(w.append(ms.make(2, R"({"s":"say \"hi\"\r\nok","n":9223372036854775807})"), src, out)));
        w.finish(out);
        CHECK(out ==
              "s,n,b,j\r\n"
              "\"a,b\",-9223372036854775808,aGk=,\"{\"\"x\"\":[1,2]}\"\r\n"
              "\"\",,,\r\n"
              "\"say \"\"hi\"\"\r\nok\",9223372036854775807,,\r\n");
    }
    SECTION("tab delimiter and a null marker") {
        o.csv.delimiter = '\t';
        o.csv.null_text = "NULL";
        writer w{o};
        std::string out;
        w.begin(out);
        REQUIRE(ok(w.append(ms.make(0, R"({"s":"NULL","n":1,"b":"","j":"x"})"), src, out)));
        REQUIRE(ok(w.append(ms.make(1, R"({"s":"a,b"})"), src, out)));
        w.finish(out);
        CHECK(out ==
              "s\tn\tb\tj\r\n\"NULL\"\t1\t\t\"\"\"x\"\"\"\r\n"
              "a,b\tNULL\tNULL\tNULL\r\n");
    }
}
