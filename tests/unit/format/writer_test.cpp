// SPDX-License-Identifier: Apache-2.0
#include "format/writer.hpp"

#include "test_messages.hpp"

#include <boost/json.hpp>

#include "catch2_compat.hpp"
#include <malloc.h>
#include <simdjson.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

using namespace iss::format;
namespace proto = iss::proto;
using proto::header_kind;

namespace {

const record_source src{"app", "requests", 2};

/// Compares `actual` with tests/unit/format/golden/<name>; ISS_UPDATE_GOLDEN=1 rewrites it.
void golden(const std::string& name, const std::string& actual) {
    const std::string path = std::string{ISS_SOURCE_DIR} + "/tests/unit/format/golden/" + name;
    if (std::getenv("ISS_UPDATE_GOLDEN") != nullptr) {
        std::ofstream{path, std::ios::binary} << actual;
        return;
    }
    std::ifstream in{path, std::ios::binary};
    INFO("golden file " << path);
    REQUIRE(in);
    std::stringstream ss;
    ss << in.rdbuf();
    CHECK(actual == ss.str());
}

/// Every line of json_lines output is one valid JSON object (checked by Boost.JSON, a
/// reader independent of the simdjson the writer uses).
void check_lines_are_json(const std::string& out) {
    std::size_t start = 0;
    while (start < out.size()) {
        const auto end = out.find('\n', start);
        REQUIRE(end != std::string::npos);
        const std::string line = out.substr(start, end - start);
        INFO(line);
        boost::system::error_code ec;
        const auto v = boost::json::parse(line, ec);
        CHECK_FALSE(ec);
        CHECK(v.is_object());
        start = end + 1;
    }
}

std::string write_all(const writer_options& o, const std::vector<proto::message_view>& ms) {
    writer w{o};
    std::string out;
    w.begin(out);
    for (const auto& m : ms) REQUIRE(w.append(m, src, out).has_value());
    w.finish(out);
    CHECK(w.records() == ms.size());
    return out;
}

/// Inflates a gzip file: a series of one or more members (RFC 1952 §2.2), as gzip and zcat
/// read it; `members` counts them.
std::string gunzip(const std::string& gz, int* members = nullptr) {
    z_stream z{};
    REQUIRE(inflateInit2(&z, 15 + 16) == Z_OK);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
    z.avail_in = static_cast<uInt>(gz.size());
    std::string out;
    int n = 0;
    int rc = Z_OK;
    for (;;) {
        char buf[16384];
        z.next_out = reinterpret_cast<Bytef*>(buf);
        z.avail_out = sizeof buf;
        rc = inflate(&z, Z_NO_FLUSH);
        out.append(buf, sizeof buf - z.avail_out);
        if (rc == Z_STREAM_END) {
            ++n;
            if (z.avail_in == 0) break;
            REQUIRE(inflateReset(&z) == Z_OK);  // the next member
            continue;
        }
        if (rc != Z_OK) break;
    }
    CHECK(rc == Z_STREAM_END);
    CHECK(z.avail_in == 0);  // nothing after the last member
    inflateEnd(&z);
    if (members != nullptr) *members = n;
    return out;
}

std::string unzstd(const std::string& z) {
    ZSTD_DCtx* d = ZSTD_createDCtx();
    REQUIRE(d != nullptr);
    ZSTD_inBuffer in{z.data(), z.size(), 0};
    std::string out;
    std::size_t rc = 1;
    while (in.pos < in.size) {
        char buf[16384];
        ZSTD_outBuffer o{buf, sizeof buf, 0};
        rc = ZSTD_decompressStream(d, &o, &in);
        REQUIRE(ZSTD_isError(rc) == 0);
        out.append(buf, o.pos);
    }
    CHECK(rc == 0);  // the frame is complete (and its checksum verified)
    ZSTD_freeDCtx(d);
    return out;
}

test::headers every_kind() {
    test::headers h;
    const char raw[] = {'\x00', '\x01', '\xfe', '\xff'};
    h.add(header_kind::string, proto::as_bytes("raw"), header_kind::raw, std::as_bytes(std::span{raw}));
    h.add("string", std::string_view{"h\xc3\xa9llo \"w\"\n"});
    h.add("bool_true", true);
    h.add("bool_false", false);
    h.add("int8", std::int8_t{-128});
    h.add("int16", std::int16_t{-32768});
    h.add("int32", std::int32_t{-2147483647 - 1});
    h.add("int64", std::numeric_limits<std::int64_t>::min());
    h.add("int128", -static_cast<proto::i128>((~proto::u128{0}) >> 1) - 1);
    h.add("uint8", std::uint8_t{255});
    h.add("uint16", std::uint16_t{65535});
    h.add("uint32", std::uint32_t{4294967295U});
    h.add("uint64", std::numeric_limits<std::uint64_t>::max());
    h.add("uint128", ~proto::u128{0});
    h.add("float32", 0.1f);
    h.add("float64", 0.1);
    h.add("float64_big", 1e300);
    h.add("nan", std::numeric_limits<double>::quiet_NaN());
    h.add("inf", std::numeric_limits<float>::infinity());
    h.add("neg_inf", -std::numeric_limits<double>::infinity());
    return h;
}

test::headers every_key_kind() {
    test::headers h;
    const char raw[] = {'k', '\xff'};
    h.add(header_kind::raw, std::as_bytes(std::span{raw}), header_kind::string, proto::as_bytes("raw key"));
    h.add_key(std::int32_t{7}, "int32 key");
    h.add_key(true, "bool key");
    h.add_key(std::uint64_t{18446744073709551615ULL}, "uint64 key");
    h.add_key(2.5, "float64 key");
    h.add_key(std::numeric_limits<float>::quiet_NaN(), "nan key");
    h.add("int32:7", std::string_view{"a string key that looks like a typed one"});
    return h;
}

}  // namespace

TEST_CASE("the json_lines envelope has every field in order", "[format][writer]") {
    test::message_store s;
    const proto::u128 id = (proto::u128{0x0123456789abcdefULL} << 64) | 0xfedcba9876543210ULL;
    const auto out = write_all({}, {s.make(42, "{\"user\": 7}", {}, id)});
    CHECK(out ==
          "{\"stream\":\"app\",\"topic\":\"requests\",\"partition_id\":2,\"offset\":42,"
          "\"id\":\"0123456789abcdeffedcba9876543210\",\"timestamp\":1796000523000004,"
          "\"timestamp_iso\":\"2026-11-30T01:02:03.000004Z\",\"origin_timestamp\":1796000522999000,"
          "\"headers\":{},\"payload\":{\"user\":7}}\n");
}

TEST_CASE("one writer follows the names it is given record by record", "[format][writer]") {
    test::message_store s;
    writer_options o;
    o.headers = false;
    writer w{o};
    std::string out;
    w.begin(out);
    const auto m = s.make(1, "1");
    REQUIRE(w.append(m, {"app", "requests", 2}, out).has_value());
    REQUIRE(w.append(m, {"app", "requests", 2}, out).has_value());
    REQUIRE(w.append(m, {"a\"pp", "requests", 3}, out).has_value());
    REQUIRE(w.append(m, {"app", "orders", 3}, out).has_value());
    REQUIRE(w.append(m, {"app", "requests", 2}, out).has_value());
    w.finish(out);
    check_lines_are_json(out);
    std::vector<std::string> names;
    for (std::size_t at = 0; (at = out.find("{\"stream\":", at)) != std::string::npos; ++at)
        names.push_back(out.substr(at, out.find(",\"partition_id\"", at) - at));
    CHECK(names ==
          std::vector<std::string>{R"({"stream":"app","topic":"requests")", R"({"stream":"app","topic":"requests")",
                                   R"({"stream":"a\"pp","topic":"requests")", R"({"stream":"app","topic":"orders")",
                                   R"({"stream":"app","topic":"requests")"});
}

TEST_CASE("golden: every header value kind", "[format][writer][golden]") {
    test::message_store s;
    const auto out = write_all({}, {s.make(1, "{}", every_kind())});
    check_lines_are_json(out);
    golden("header_values.jsonl", out);
}

TEST_CASE("golden: header keys of every kind never collide with string keys", "[format][writer][golden]") {
    test::message_store s;
    const auto out = write_all({}, {s.make(1, "{}", every_key_kind())});
    check_lines_are_json(out);
    golden("header_keys.jsonl", out);
}

TEST_CASE("golden: payload modes", "[format][writer][golden]") {
    const std::vector<std::string> payloads{
        "{ \"a\": [1, 2.50, \"x\"],\n  \"big\": 123456789012345678901234567890 }",
        "  \"just a JSON string\" ",
        "17",
        "plain text, not JSON",
        "",
        std::string{"bin\x00\xff\x01", 6},
        "{\"almost\": json",
    };
    const std::pair<payload_mode, const char*> modes[] = {{payload_mode::automatic, "payload_auto.jsonl"},
                                                          {payload_mode::string, "payload_string.jsonl"},
                                                          {payload_mode::base64, "payload_base64.jsonl"}};
    for (const auto& [mode, file] : modes) {
        test::message_store s;
        std::vector<proto::message_view> ms;
        for (std::size_t i = 0; i < payloads.size(); ++i) ms.push_back(s.make(i, payloads[i]));
        writer_options o;
        o.payload = mode;
        o.metadata = false;
        const auto out = write_all(o, ms);
        check_lines_are_json(out);
        golden(file, out);
    }
}

TEST_CASE("golden: payload json writes valid JSON and refuses the rest as bad messages", "[format][writer][golden]") {
    test::message_store s;
    writer_options o;
    o.payload = payload_mode::json;
    o.headers = false;
    o.metadata = false;
    writer w{o};
    std::string out;
    w.begin(out);
    REQUIRE(w.append(s.make(0, "[1, 2]"), src, out).has_value());
    const std::string before = out;
    auto bad = w.append(s.make(1, "not json"), src, out);
    REQUIRE(bad.has_error());
    CHECK(bad.error() == errc::bad_payload);
    CHECK(bad.error().detail().find("offset 1") != std::string::npos);
    CHECK(out == before);
    CHECK(w.records() == 1);
    REQUIRE(w.append(s.make(2, "{\"k\" : null}"), src, out).has_value());
    w.finish(out);
    check_lines_are_json(out);
    golden("payload_json.jsonl", out);
}

TEST_CASE("golden: UTF-8 edge cases in payloads, headers and names", "[format][writer][golden]") {
    test::message_store s;
    test::headers h;
    h.add_unchecked(header_kind::string, "bad\xff key", header_kind::string, "bad\xc0\xaf value");
    const std::vector<std::string> payloads{
        std::string{"nul\0inside", 10},            // NUL: valid UTF-8, escaped as \u0000
        "\xed\xa0\x80 surrogate D800",             // CESU/surrogate: invalid UTF-8 -> base64 in auto
        "overlong \xc0\xaf slash",                 // invalid
        "truncated \xe2\x82",                      // invalid
        "\xf0\x9f\x98\x80 emoji \xe2\x80\xa8 LS",  // valid 4-byte and U+2028
        "\"\\ud83d\\ude00\"",                      // JSON with an escaped surrogate pair: valid JSON
        "\x7f del and \x1b esc",
    };
    std::vector<proto::message_view> ms;
    for (std::size_t i = 0; i < payloads.size(); ++i)
        ms.push_back(s.make(i, payloads[i], i == 0 ? h : test::headers{}));
    writer w{writer_options{}};
    std::string out;
    w.begin(out);
    for (const auto& m : ms) REQUIRE(w.append(m, record_source{"str\xc3\xa9\x61m", "t\xffpic", 0}, out).has_value());
    w.finish(out);
    check_lines_are_json(out);
    golden("utf8_edges.jsonl", out);
    writer_options so;
    so.payload = payload_mode::string;
    so.metadata = false;
    so.headers = false;
    const auto strings = write_all(so, ms);
    check_lines_are_json(strings);
    golden("utf8_edges_string.jsonl", strings);
}

TEST_CASE("metadata and headers can be left out", "[format][writer]") {
    test::message_store s;
    test::headers h;
    h.add("k", std::string_view{"v"});
    writer_options o;
    o.metadata = false;
    CHECK(write_all(o, {s.make(0, "1", h)}) == "{\"headers\":{\"k\":\"v\"},\"payload\":1}\n");
    o.headers = false;
    CHECK(write_all(o, {s.make(0, "1", h)}) == "{\"payload\":1}\n");
    o.metadata = true;
    const auto out = write_all(o, {s.make(0, "1", h)});
    CHECK(out.find("\"headers\"") == std::string::npos);
    CHECK(out.find("\"origin_timestamp\":1796000522999000,\"payload\":1}") != std::string::npos);
}

TEST_CASE("json_array is well-formed when empty, after one record and after several", "[format][writer]") {
    test::message_store s;
    writer_options o;
    o.format = record_format::json_array;
    o.metadata = false;
    o.headers = false;
    CHECK(write_all(o, {}) == "[]\n");
    CHECK(write_all(o, {s.make(0, "1")}) == "[\n{\"payload\":1}\n]\n");
    const auto three = write_all(o, {s.make(0, "1"), s.make(1, "x"), s.make(2, "{}")});
    CHECK(three == "[\n{\"payload\":1},\n{\"payload\":\"x\"},\n{\"payload\":{}}\n]\n");
    simdjson::dom::parser parser;
    for (const auto& doc : {write_all(o, {}), write_all(o, {s.make(0, "1")}), three}) {
        simdjson::dom::element e;
        CHECK(parser.parse(doc).get(e) == simdjson::SUCCESS);
        CHECK(e.is_array());
    }
    // A bad message between two good ones leaves the array well-formed.
    o.payload = payload_mode::json;
    writer w{o};
    std::string out;
    w.begin(out);
    REQUIRE(w.append(s.make(0, "1"), src, out).has_value());
    CHECK(w.append(s.make(1, "nope"), src, out).has_error());
    REQUIRE(w.append(s.make(2, "2"), src, out).has_value());
    w.finish(out);
    CHECK(out == "[\n{\"payload\":1},\n{\"payload\":2}\n]\n");
}

TEST_CASE("raw joins payloads with the separator", "[format][writer]") {
    test::message_store s;
    const std::vector<proto::message_view> ms{s.make(0, "a"), s.make(1, ""), s.make(2, std::string{"\x00\xff", 2})};
    writer_options o;
    o.format = record_format::raw;
    CHECK(write_all(o, ms) == std::string{"a\n\n\x00\xff", 5});
    o.separator = "";
    CHECK(write_all(o, ms) == std::string{"a\x00\xff", 3});
    o.separator = "\x1e";
    CHECK(write_all(o, ms) == std::string{"a\x1e\x1e\x00\xff", 5});
    CHECK(write_all(o, {}).empty());
}

TEST_CASE("extensions and content types", "[format][writer]") {
    writer_options o;
    CHECK(extension(o) == "jsonl");
    CHECK(content_type(o) == "application/x-ndjson");
    o.format = record_format::json_array;
    CHECK(extension(o) == "json");
    CHECK(content_type(o) == "application/json");
    o.format = record_format::raw;
    CHECK(extension(o) == "bin");
    CHECK(content_type(o) == "application/octet-stream");
    o.compression = compression::gzip;
    CHECK(extension(o) == "bin.gz");
    CHECK(content_type(o) == "application/gzip");
    o.compression = compression::zstd;
    CHECK(extension(o) == "bin.zst");
    CHECK(content_type(o) == "application/zstd");
    o.compression = compression::gzip;
    o.format = record_format::json_lines;
    CHECK(writer{o}.extension() == "jsonl.gz");
}

TEST_CASE("gzip output inflates to exactly the uncompressed output", "[format][writer][gzip]") {
    test::message_store s;
    std::vector<proto::message_view> ms;
    std::vector<std::string> payloads;
    payloads.reserve(2000);
    for (int i = 0; i < 2000; ++i)
        payloads.push_back(fmt::format("{{\"n\": {}, \"pad\": \"{}\"}}", i, std::string(i % 300, 'x')));
    for (int i = 0; i < 2000; ++i)
        ms.push_back(s.make(static_cast<std::uint64_t>(i), payloads[static_cast<std::size_t>(i)], every_kind()));
    for (auto fmt_ : {record_format::json_lines, record_format::json_array, record_format::raw}) {
        writer_options plain;
        plain.format = fmt_;
        writer_options gz = plain;
        gz.compression = compression::gzip;
        const auto expected = write_all(plain, ms);
        writer w{gz};
        std::string out;
        w.begin(out);
        for (const auto& m : ms) REQUIRE(w.append(m, src, out).has_value());
        CHECK(w.bytes_in() ==
              expected.size() - (fmt_ == record_format::json_array ? 3 : 0));  // "\n]\n" comes at finish
        CHECK(w.bytes_out() == out.size());
        w.finish(out);
        CHECK(w.bytes_out() == out.size());
        CHECK(out.size() < expected.size() / 3);
        REQUIRE(out.size() > 18);
        CHECK(static_cast<unsigned char>(out[0]) == 0x1f);  // gzip magic
        CHECK(static_cast<unsigned char>(out[1]) == 0x8b);
        CHECK(gunzip(out) == expected);
        // The writer is reusable: the next object is a complete gzip file of its own.
        std::string second;
        w.begin(second);
        REQUIRE(w.append(ms[0], src, second).has_value());
        w.finish(second);
        CHECK(gunzip(second) == write_all(plain, {ms[0]}));
    }
}

TEST_CASE("gzip: a large object is a series of members; compression_level keeps its meaning",
          "[format][writer][gzip]") {
    test::message_store s;
    std::vector<std::string> payloads;
    std::vector<proto::message_view> ms;
    payloads.reserve(6000);
    for (int i = 0; i < 6000; ++i)
        payloads.push_back(fmt::format("{{\"n\": {}, \"user\": \"u{}\", \"path\": \"/item/{}/view\", \"ms\": {}}}", i,
                                       (i * 7919) % 1000, (i * 104729) % 100000, (i * 31) % 977));
    for (int i = 0; i < 6000; ++i)
        ms.push_back(s.make(static_cast<std::uint64_t>(i), payloads[static_cast<std::size_t>(i)]));
    writer_options plain;
    const auto expected = write_all(plain, ms);
    REQUIRE(expected.size() > 3 * 256 * 1024);
    std::map<int, std::size_t> size_at;
    for (int level : {1, 2, 3, 6, 9}) {
        writer_options gz;
        gz.compression = compression::gzip;
        gz.level = level;
        const auto out = write_all(gz, ms);
        int members = 0;
        CHECK(gunzip(out, &members) == expected);
        // One member per 256 KiB block of input (a block ends after the record that fills it).
        CHECK(members >= 3);
        CHECK(members <= static_cast<int>((expected.size() + 256 * 1024 - 1) / (256 * 1024)));
        size_at[level] = out.size();
    }
    // 1 is fast, 9 small, the default 6 in between (as zlib's levels).
    CHECK(size_at[1] > size_at[6]);
    CHECK(size_at[3] > size_at[6]);
    // Levels 1..3 are ISA-L igzip's: at least about as small as zlib's same level, compressed
    // the same way (256 KiB blocks, each a stream of its own), within 3% (igzip's code path
    // differs by CPU: AVX-512 or not).
    for (int level : {1, 2, 3}) {
        INFO("level " << level);
        std::size_t zlib_size = 0;
        for (std::size_t at = 0; at < expected.size(); at += 256 * 1024) {
            const std::size_t n = std::min<std::size_t>(256 * 1024, expected.size() - at);
            uLongf zlen = compressBound(static_cast<uLong>(n));
            std::string z(zlen, '\0');
            REQUIRE(compress2(reinterpret_cast<Bytef*>(z.data()), &zlen,
                              reinterpret_cast<const Bytef*>(expected.data() + at), static_cast<uLong>(n),
                              level) == Z_OK);
            zlib_size += zlen + 12;  // a gzip member's header and trailer are 12 bytes more than zlib's
        }
        CHECK(static_cast<double>(size_at[level]) <= 1.03 * static_cast<double>(zlib_size));
    }
    CHECK(size_at[6] >= size_at[9]);
    writer_options dflt;
    dflt.compression = compression::gzip;
    CHECK(write_all(dflt, ms).size() == size_at[6]);
}

TEST_CASE("gzip: an empty object is a valid gzip file, a bad message leaves no trace", "[format][writer][gzip]") {
    test::message_store s;
    writer_options o;
    o.compression = compression::gzip;
    o.level = GENERATE(1, 3, 6);  // ISA-L igzip and libdeflate
    INFO("level " << o.level);
    o.payload = payload_mode::json;
    o.metadata = false;
    o.headers = false;
    writer w{o};
    std::string out;
    w.begin(out);
    w.finish(out);
    CHECK(gunzip(out).empty());
    out.clear();
    w.begin(out);
    REQUIRE(w.append(s.make(0, "1"), src, out).has_value());
    CHECK(w.append(s.make(1, "{bad"), src, out).has_error());
    REQUIRE(w.append(s.make(2, "2"), src, out).has_value());
    w.finish(out);
    CHECK(gunzip(out) == "{\"payload\":1}\n{\"payload\":2}\n");
}

TEST_CASE("zstd: a bad message leaves no trace in the block being gathered", "[format][writer][zstd]") {
    test::message_store s;
    writer_options o;
    o.compression = compression::zstd;
    o.payload = payload_mode::json;
    o.metadata = false;
    o.headers = false;
    writer w{o};
    std::string out;
    w.begin(out);
    REQUIRE(w.append(s.make(0, "1"), src, out).has_value());
    CHECK(w.append(s.make(1, "[1, {\"a\": 2}, {bad"), src, out).has_error());
    REQUIRE(w.append(s.make(2, "2"), src, out).has_value());
    CHECK(out.size() <= 4);  // records wait in the block: nothing but zstd's frame start is out yet
    w.finish(out);
    CHECK(unzstd(out) == "{\"payload\":1}\n{\"payload\":2}\n");
}

TEST_CASE("codec_memory is what a writer's compressor takes from the heap", "[format][writer][zstd]") {
    // What the pipeline charges to memory.max_buffered per open object (codec_memory) against
    // what a zstd writer really allocates once its first 128 KiB block is compressed: glibc's
    // own count of bytes in use (arena and mmapped chunks), before and after.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    // A sanitizer's allocator replaces glibc's: mallinfo2() counts nothing of it.
    WARN("not measured: glibc's heap count (mallinfo2) is blind under a sanitizer's allocator");
    return;
#endif
    test::message_store s;
    const std::string payload = fmt::format("{{\"pad\": \"{}\"}}", std::string(900, 'q'));
    std::vector<proto::message_view> ms;
    for (std::uint64_t i = 0; i < 300; ++i) ms.push_back(s.make(i, payload));
    for (const int level : {1, 3, 9}) {
        CAPTURE(level);
        writer_options o;
        o.compression = compression::zstd;
        o.level = level;
        std::string out;
        out.reserve(4 << 20);  // (the output's growth is not the codec's)
        const auto in_use = [] {
            const struct mallinfo2 m = mallinfo2();
            return m.uordblks + m.hblkhd;
        };
        const std::size_t before = in_use();
        {
            writer w{o};
            w.begin(out);
            for (const auto& m : ms) REQUIRE(w.append(m, src, out).has_value());
            REQUIRE(out.size() > 4);  // a block was compressed: the context has its workspace
            const std::size_t taken = in_use() - before;
            // (zstd estimates an upper bound: 1.5.4, Debian 12, allocates within 10 % of it; 1.5.7,
            // Debian 13, 12 % under it at level 9.)
            CHECK(static_cast<double>(taken) >= 0.85 * static_cast<double>(codec_memory(o)));
            CHECK(taken <= codec_memory(o) + (256U << 10));  // + the checker, the scratch record
            // What the pipeline charges for the open object: the context as allocated.
            CHECK(w.codec_bytes() <= codec_memory(o));
            CHECK(static_cast<double>(w.codec_bytes()) >= 0.85 * static_cast<double>(codec_memory(o)));
        }
        {
            // Before its first block the context is not there yet: a small object never has it.
            writer w{o};
            w.begin(out);
            REQUIRE(w.append(ms[0], src, out).has_value());
            CHECK(w.codec_bytes() < (256U << 10));
            CHECK(in_use() - before < (512U << 10));
        }
        CHECK(in_use() <= before + (64U << 10));  // and gives it back
    }
    writer_options o;
    o.compression = compression::zstd;
    CHECK(codec_memory(o) == zstd_compressor_memory(3));
    o.level = 19;
    CHECK(codec_memory(o) > 80U << 20);  // its window and match tables: why it is charged
    o.compression = compression::gzip;
    o.level = 0;
    CHECK(codec_memory(o) == 512U << 10);
    o.compression = compression::none;
    CHECK(codec_memory(o) == 0);
    o.format = record_format::parquet;
    CHECK(codec_memory(o) == 0);
}

TEST_CASE("a malformed headers block is a bad message only when headers are written", "[format][writer]") {
    // Build a message whose header block claims more bytes than it has.
    proto::byte_buffer block;
    REQUIRE(proto::append_user_header(block, header_kind::string, proto::as_bytes("k"), header_kind::string,
                                      proto::as_bytes("v"))
                .has_value());
    block.back() = std::byte{0};
    block[block.size() - 2] = std::byte{0xff};  // value length now runs past the end... (corrupt)
    proto::byte_buffer corrupt{block.begin(), block.end() - 1};
    proto::message_view m;
    m.offset = 9;
    m.payload = proto::as_bytes("1");
    m.user_headers = corrupt;
    writer w{writer_options{}};
    std::string out = "keep";
    w.begin(out);
    auto r = w.append(m, src, out);
    REQUIRE(r.has_error());
    CHECK(r.error() == errc::bad_headers);
    CHECK(out == "keep");
    writer_options no_headers;
    no_headers.headers = false;
    writer w2{no_headers};
    CHECK(w2.append(m, src, out).has_value());
}

TEST_CASE("zstd output decompresses to exactly the uncompressed output", "[format][writer][zstd]") {
    test::message_store s;
    std::vector<std::string> payloads;
    payloads.reserve(3000);
    std::vector<proto::message_view> ms;
    for (int i = 0; i < 3000; ++i)
        payloads.push_back(fmt::format("{{\"n\": {}, \"pad\": \"{}\"}}", i, std::string(i % 200, 'y')));
    for (int i = 0; i < 3000; ++i)
        ms.push_back(s.make(static_cast<std::uint64_t>(i), payloads[static_cast<std::size_t>(i)]));
    for (auto fmt_ : {record_format::json_lines, record_format::json_array, record_format::raw}) {
        writer_options plain;
        plain.format = fmt_;
        writer_options z = plain;
        z.compression = compression::zstd;
        const auto expected = write_all(plain, ms);
        writer w{z};
        std::string out;
        w.begin(out);
        for (const auto& m : ms) REQUIRE(w.append(m, src, out).has_value());
        w.finish(out);
        CHECK(w.bytes_out() == out.size());
        CHECK(out.size() < expected.size() / 3);
        REQUIRE(out.size() > 4);
        CHECK(static_cast<unsigned char>(out[0]) == 0x28);  // zstd frame magic 28 B5 2F FD
        CHECK(static_cast<unsigned char>(out[3]) == 0xfd);
        CHECK(unzstd(out) == expected);
        std::string second;
        w.begin(second);
        w.finish(second);
        CHECK(unzstd(second) == (fmt_ == record_format::json_array ? "[]\n" : ""));
    }
}
