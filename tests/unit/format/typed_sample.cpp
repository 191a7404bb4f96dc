// SPDX-License-Identifier: Apache-2.0
// Writes Parquet, CSV and Avro samples into argv[1] for the independent readers
// (tests/readers/check_parquet.mjs with DuckDB, tests/readers/check_avro.py), together with
// what they must find there (`*.expected.json`): the values are the inputs of the messages,
// written here by hand, not read back from the writer.
#include "format/writer.hpp"

#include <boost/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

namespace {

namespace proto = iss::proto;
namespace fmtns = iss::format;
using fmtns::column;
using fmtns::column_source;
using fmtns::column_type;

struct msg {
    std::string payload;
    proto::byte_buffer headers;
};

bool write_object(const std::string& path, const fmtns::writer_options& o, const std::vector<msg>& msgs) {
    fmtns::writer w{o};
    std::string out;
    w.begin(out);
    std::uint64_t offset = 0;
    for (const msg& m : msgs) {
        proto::byte_buffer buf;
        proto::message_fields f;
        f.offset = offset++;
        f.id = (static_cast<proto::u128>(0x0102030405060708ULL) << 64) | f.offset;
        f.timestamp = 1'796'000'523'000'004ULL + f.offset;
        f.origin_timestamp = 1'796'000'522'000'000ULL;
        f.payload = proto::as_bytes(m.payload);
        f.user_headers = m.headers;
        if (!proto::append_message(buf, f, true)) return false;
        auto v = proto::decode_message(buf);
        if (!v) return false;
        if (auto r = w.append(*v, {"app", "requests", 7}, out); !r) {
            std::fprintf(stderr, "append %s: %s\n", path.c_str(), r.error().message().c_str());
            return false;
        }
    }
    w.finish(out);
    std::ofstream{path, std::ios::binary} << out;
    return true;
}

column col(std::string name, column_type t, std::string path, bool nullable = true) {
    column c;
    c.name = std::move(name);
    c.type = t;
    c.source = column_source::payload_path;
    c.path = std::move(path);
    c.nullable = nullable;
    return c;
}

proto::byte_buffer int64_header(std::string_view key, std::int64_t v) {
    proto::byte_buffer b;
    proto::byte_buffer value;
    proto::append_header_value_bytes(value, proto::header_value{v});
    (void)proto::append_user_header(b, proto::header_kind::string, proto::as_bytes(key), proto::header_kind::int64,
                                    value);
    return b;
}

void save(const std::string& path, const boost::json::value& v) { std::ofstream{path} << boost::json::serialize(v); }

std::string slurp(const std::string& path) {
    std::ifstream in{path, std::ios::binary};
    return {std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

/// Golden files: the sample must be byte for byte the reviewed file in GOLDEN_DIR (which the
/// readers check too); ISS_UPDATE_GOLDEN=1 rewrites it.
bool golden(const std::string& sample, const std::string& golden_path) {
    const std::string got = slurp(sample);
    if (std::getenv("ISS_UPDATE_GOLDEN") != nullptr) {
        std::ofstream{golden_path, std::ios::binary} << got;
        return true;
    }
    if (got != slurp(golden_path)) {
        std::fprintf(stderr, "%s differs from the golden file %s (review, then ISS_UPDATE_GOLDEN=1)\n", sample.c_str(),
                     golden_path.c_str());
        return false;
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2 && argc != 3) {
        std::fprintf(stderr, "usage: typed_sample OUT_DIR [GOLDEN_DIR]\n");
        return 2;
    }
    const std::string dir = argv[1];
    constexpr auto i64min = std::numeric_limits<std::int64_t>::min();

    // 1. Every type, nulls, empty strings, non-ASCII, extremes.
    std::vector<column> types{
        col("c_string", column_type::string, "s"),        col("c_int32", column_type::int32, "i32"),
        col("c_int64", column_type::int64, "i64"),        col("c_float", column_type::float32, "f"),
        col("c_double", column_type::float64, "d"),       col("c_bool", column_type::boolean, "b"),
        col("c_ts_ms", column_type::timestamp_ms, "tms"), col("c_ts_us", column_type::timestamp_us, "tus"),
        col("c_date", column_type::date, "day"),          col("c_binary", column_type::binary, "bin"),
        col("c_json", column_type::json, "obj"),          col("c_nested", column_type::int64, "a.b.1"),
    };
    {
        column h;
        h.name = "c_header";
        h.type = column_type::int64;
        h.source = column_source::header;
        h.path = "h";
        types.push_back(h);
        column off;
        off.name = "c_offset";
        off.type = column_type::int64;
        off.source = column_source::offset;
        off.nullable = false;
        types.push_back(off);
    }
    const std::vector<msg> type_msgs{
        {R"({"s":"hello","i32":2147483647,"i64":9223372036854775807,"f":1.5,"d":0.1,"b":true,"tms":1796000523123,)"
         R"("tus":"2026-11-30T01:02:03.000004Z","day":"2026-11-30","bin":"abc","obj":{"a":[1,2,{"b":null}]},"a":{"b":[5,6]}})",
         {}},
        {R"({"s":"","i32":-2147483648,"i64":-9223372036854775808,"f":-2.25,"d":-1e300,"b":false,"tms":-1,"tus":0,)"
         R"("day":0,"bin":"","obj":"x"})",
         {}},
        {R"({})", {}},
        {R"({"s":"h\u00e9llo w\u00f6rld \u2713 \ud834\udd1e","i32":0,"i64":0,"f":3.4e38,"d":5e-324,"b":null,)"
         R"("tms":"1969-12-31T23:59:59.999Z","tus":-1,"day":-1,"bin":"\u00fcn\u00ef","obj":null,"a":{"b":[0,-7]}})",
         int64_header("h", i64min)},
        {R"({"s":"a,b\"c\r\nd","i32":-1,"i64":1,"f":0,"d":2.5,"b":true,"tms":0,"tus":"2026-11-30T02:02:03.5+01:00",)"
         R"("day":"1970-01-02","bin":"\u0000\u00ff","obj":[true,false]})",
         int64_header("h", 42)},
    };
    using boost::json::array;
    using boost::json::value;
    // kinds: text, hex, int, real, bool, ts_ms, ts_us, days
    const array kinds{"text",  "int",  "int", "real", "real", "bool", "ts_ms",
                      "ts_us", "days", "hex", "text", "int",  "int",  "int"};
    array names;
    for (const auto& c : types) names.emplace_back(c.name);
    const value N = nullptr;
    array rows{
        array{"hello", "2147483647", "9223372036854775807", 1.5, 0.1, "true", "1796000523123", "1796000523000004",
              "20787", "616263", R"({"a":[1,2,{"b":null}]})", "6", N, "0"},
        array{"", "-2147483648", "-9223372036854775808", -2.25, -1e300, "false", "-1", "0", "0", "", R"("x")", N, N,
              "1"},
        array{N, N, N, N, N, N, N, N, N, N, N, N, N, "2"},
        array{"h\xc3\xa9llo w\xc3\xb6rld \xe2\x9c\x93 \xf0\x9d\x84\x9e", "0", "0", static_cast<double>(3.4e38f), 5e-324,
              N, "-1", "-1", "-1", "C3BC6EC3AF", N, "-7", "-9223372036854775808", "3"},
        array{"a,b\"c\r\nd", "-1", "1", 0.0, 2.5, "true", "0", "1796000523500000", "1", "00C3BF", "[true,false]", N,
              "42", "4"},
    };
    fmtns::writer_options o;
    o.schema = types;
    const std::pair<const char*, fmtns::parquet_codec> codecs[]{{"none", fmtns::parquet_codec::none},
                                                                {"snappy", fmtns::parquet_codec::snappy},
                                                                {"zstd", fmtns::parquet_codec::zstd},
                                                                {"gzip", fmtns::parquet_codec::gzip}};
    array files;
    for (const auto& [name, codec] : codecs) {
        o.format = fmtns::record_format::parquet;
        o.parquet.codec = codec;
        const std::string file = std::string{"types."} + name + ".parquet";
        if (!write_object(dir + "/" + file, o, type_msgs)) return 1;
        files.emplace_back(file);
    }
    o.format = fmtns::record_format::csv;
    if (!write_object(dir + "/types.csv", o, type_msgs)) return 1;
    o.format = fmtns::record_format::avro;
    o.avro.codec = fmtns::avro_codec::deflate;
    if (!write_object(dir + "/types.avro", o, type_msgs)) return 1;
    if (argc == 3) {
        const std::string gd = argv[2];
        if (!golden(dir + "/types.snappy.parquet", gd + "/types.snappy.parquet") ||
            !golden(dir + "/types.csv", gd + "/types.csv") || !golden(dir + "/types.avro", gd + "/types.avro"))
            return 1;
    }
    save(dir + "/types.expected.json",
         boost::json::object{
             {"files", files}, {"columns", names}, {"kinds", kinds}, {"rows", rows}, {"order", "c_offset"}});

    // 2. Row groups, dictionary and its fallback, statistics: 10 000 rows in 64 KiB row groups.
    std::vector<msg> many;
    for (int i = 0; i < 10'000; ++i) {
        many.push_back({"{\"n\":" + std::to_string(i) + ",\"cat\":\"c" + std::to_string(i % 10) + "\",\"u\":\"u" +
                            std::to_string(i) + "\",\"v\":" + std::to_string(i % 97) + ".5}",
                        {}});
    }
    fmtns::writer_options g;
    g.format = fmtns::record_format::parquet;
    g.schema = {col("n", column_type::int64, "n", false), col("cat", column_type::string, "cat"),
                col("u", column_type::string, "u"), col("v", column_type::float64, "v")};
    g.parquet.row_group_size = 64 * 1024;
    g.parquet.page_size = 8 * 1024;
    g.parquet.dictionary_max_values = 1000;
    if (!write_object(dir + "/groups.parquet", g, many)) return 1;
    std::int64_t sum = 0;
    for (int i = 0; i < 10'000; ++i) sum += i;
    save(dir + "/groups.expected.json", boost::json::object{{"rows", 10'000}, {"sum_n", sum}});

    // 3. The envelope schema (no format.schema), with a headers map.
    fmtns::writer_options e;
    e.format = fmtns::record_format::parquet;
    std::vector<msg> env{{R"({"x":1})", int64_header("h", 5)}, {R"({"x":2})", {}}};
    if (!write_object(dir + "/envelope.parquet", e, env)) return 1;
    return 0;
}
