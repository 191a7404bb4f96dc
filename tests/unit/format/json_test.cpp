// SPDX-License-Identifier: Apache-2.0
#include "format/json.hpp"

#include "json_reference.hpp"

#include "catch2_compat.hpp"
#include <simdjson.h>

#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace iss::format::json;
namespace proto = iss::proto;

namespace {
std::string str(std::string_view s) {
    std::string out;
    append_string(out, s);
    return out;
}
std::string minified(std::string_view s, bool* ok = nullptr, payload_checker* reused = nullptr) {
    payload_checker fresh;
    payload_checker& c = reused ? *reused : fresh;
    std::string out = "prefix:";
    const bool r = c.append_minified(s, out);
    if (ok) *ok = r;
    if (!r) CHECK(out == "prefix:");
    return out.substr(7);
}
}  // namespace

TEST_CASE("strings are escaped per RFC 8259", "[format][json]") {
    CHECK(str("plain") == "\"plain\"");
    CHECK(str("q\"b\\s/") == "\"q\\\"b\\\\s/\"");
    CHECK(str("\n\r\t\b\f") == "\"\\n\\r\\t\\b\\f\"");
    CHECK(str(std::string_view{"a\0b", 3}) == "\"a\\u0000b\"");
    CHECK(str("\x1f\x7f") == "\"\\u001f\x7f\"");
    CHECK(str("\xe2\x80\xa8") == "\"\xe2\x80\xa8\"");  // U+2028 is valid in JSON strings
    CHECK(str("\xf0\x9f\x98\x80") == "\"\xf0\x9f\x98\x80\"");
}

TEST_CASE("invalid UTF-8 becomes U+FFFD, one per bad byte", "[format][json]") {
    const std::string fffd = "\xef\xbf\xbd";
    CHECK(str("a\xff"
              "b") == "\"a" + fffd + "b\"");
    CHECK(str("\xc0\xaf") == "\"" + fffd + fffd + "\"");                        // overlong '/'
    CHECK(str("\xed\xa0\x80") == "\"" + fffd + fffd + fffd + "\"");             // UTF-16 surrogate D800
    CHECK(str("\xf4\x90\x80\x80") == "\"" + fffd + fffd + fffd + fffd + "\"");  // above U+10FFFF
    CHECK(str("ok\xe2\x82") == "\"ok" + fffd + fffd + "\"");                    // truncated at the end
    CHECK_FALSE(valid_utf8("\xed\xa0\x80"));
    CHECK(valid_utf8("\xed\x9f\xbf"));  // U+D7FF
}

TEST_CASE("128-bit integers print as exact decimals and hex", "[format][json]") {
    std::string out;
    append_decimal(out, ~proto::u128{0});
    CHECK(out == "340282366920938463463374607431768211455");
    out.clear();
    const proto::i128 min = -static_cast<proto::i128>((~proto::u128{0}) >> 1) - 1;
    append_decimal(out, min);
    CHECK(out == "-170141183460469231731687303715884105728");
    out.clear();
    append_decimal(out, proto::u128{0});
    CHECK(out == "0");
    out.clear();
    append_hex128(out, (proto::u128{0x0123456789abcdefULL} << 64) | 0xfedcba9876543210ULL);
    CHECK(out == "0123456789abcdeffedcba9876543210");
    out.clear();
    append_hex128(out, 1);
    CHECK(out == "00000000000000000000000000000001");
}

TEST_CASE("timestamps are RFC 3339 UTC with microseconds", "[format][json]") {
    std::string out;
    append_rfc3339_micros(out, 1'796'000'523'000'004ULL);
    CHECK(out == "2026-11-30T01:02:03.000004Z");
    out.clear();
    append_rfc3339_micros(out, 0);
    CHECK(out == "1970-01-01T00:00:00.000000Z");
    out.clear();
    append_rfc3339_micros(out, 951'782'400'000'000ULL);  // leap day 2000-02-29
    CHECK(out == "2000-02-29T00:00:00.000000Z");
    out.clear();
    append_rfc3339_micros(out, 4'102'444'799'999'999ULL);
    CHECK(out == "2099-12-31T23:59:59.999999Z");
    out.clear();
    append_rfc3339_micros(out, 253'402'300'800'000'000ULL);  // the first instant past 9999
    CHECK(out == "10000-01-01T00:00:00.000000Z");
}

TEST_CASE("64-bit integers print as exact decimals", "[format][json]") {
    std::string out;
    append_uint(out, 0);
    append_uint(out, ~std::uint64_t{0});
    CHECK(out == "018446744073709551615");
    out.clear();
    append_int(out, std::numeric_limits<std::int64_t>::min());
    out += ' ';
    append_int(out, -7);
    out += ' ';
    append_int(out, 42);
    CHECK(out == "-9223372036854775808 -7 42");
}

TEST_CASE("floats print in shortest round-trip form, specials as strings", "[format][json]") {
    const auto num = [](auto v) {
        std::string out;
        append_number(out, v);
        return out;
    };
    CHECK(num(0.1f) == "0.1");
    CHECK(num(0.1) == "0.1");
    CHECK(num(1.0 / 3) == "0.3333333333333333");
    CHECK(num(16777217.0f) == "16777216");
    CHECK(num(-0.0) == "-0");
    CHECK(num(1e300) == "1e+300");
    CHECK(num(std::numeric_limits<double>::quiet_NaN()) == "\"NaN\"");
    CHECK(num(std::numeric_limits<float>::infinity()) == "\"Infinity\"");
    CHECK(num(-std::numeric_limits<double>::infinity()) == "\"-Infinity\"");
}

TEST_CASE("valid JSON payloads are minified to one line", "[format][json]") {
    CHECK(minified("{ \"a\" : [1, 2,\n 3],\n \"b\": \"x y\\n\" }") == "{\"a\":[1,2,3],\"b\":\"x y\\n\"}");
    CHECK(minified("  42  ") == "42");
    CHECK(minified("\"text\"") == "\"text\"");
    CHECK(minified("null") == "null");
    CHECK(minified("123456789012345678901234567890") == "123456789012345678901234567890");
    CHECK(minified("[1e300, -0.5E-7, 1e-400]") == "[1e300,-0.5E-7,1e-400]");
    // Already compact (no whitespace outside strings): appended as it is. Escaped quotes and
    // backslashes end no string, so what follows them inside it is text, never a number.
    CHECK(minified(R"({"a":"q\"uote 1e400","b":"back\\","c":"x y\\\" 0e999","d":[1,-2.5e3]})") ==
          R"({"a":"q\"uote 1e400","b":"back\\","c":"x y\\\" 0e999","d":[1,-2.5e3]})");
    CHECK(minified(R"({"k" : "a \" b" ,"n":1})") == R"({"k":"a \" b","n":1})");
    // Padding before the first token or after the last is cut off.
    CHECK(minified(" \t{\"a\":\"b c\"}  \n") == R"({"a":"b c"})");
    CHECK(minified("7   ") == "7");
    CHECK(minified("[1 ,2]  ") == "[1,2]");
}

TEST_CASE("strings of every length end at their own quote, escapes anywhere in a block", "[format][json]") {
    // The string scan reads 16 bytes at a time: put an escaped quote, an escaped backslash
    // followed by an escaped quote, and an escaped backslash as the string's last character, at
    // every position around block edges, with number-looking text inside the string (text,
    // never checked). After the string: a big integer (valid JSON that simdjson refuses unless
    // the scan found it and masked it: a scan that ran past the closing quote misses it) and a
    // bad number (must be refused). One checker for all, longest first: its buffer holds the
    // previous payload's bytes past the end.
    payload_checker c;
    for (std::string_view inserted : {R"(\"1e400)", R"(\\\"1e400)", R"(\\)"}) {
        for (std::size_t len = 40; len-- > 0;) {
            for (std::size_t at = 0; at <= len; ++at) {
                std::string body(len, 'x');
                body.insert(at, inserted);
                const std::string good = "[\"" + body + "\",100000000000000000000000]";
                INFO(good);
                CHECK(minified(good, nullptr, &c) == good);
                bool ok = true;
                (void)minified("[\"" + body + "\",1e400]", &ok, &c);
                CHECK_FALSE(ok);
                (void)minified("[\"" + body + "\\\",1]", &ok, &c);  // the closing quote escaped: unterminated
                CHECK_FALSE(ok);
            }
        }
    }
}

TEST_CASE("invalid JSON payloads are refused and leave the output alone", "[format][json]") {
    for (std::string_view bad : {"",
                                 "{",
                                 "{\"a\":1,}",
                                 "[01]",
                                 "1.",
                                 "-",
                                 "tru",
                                 "{\"a\" 1}",
                                 "[1] [2]",
                                 "\"\xff\"",
                                 "\"a\\ud800\"",
                                 R"("escaped quote at the end\")",
                                 R"({"a":"x\\"1e400})",
                                 "'single'",
                                 "12abc",
                                 "\"unterminated",
                                 "1e400",
                                 "[-1E+309]",
                                 "1e-00012345",
                                 "0e309",
                                 "-0.0e731"}) {
        INFO(bad);
        bool ok = true;
        (void)minified(bad, &ok);
        CHECK_FALSE(ok);
    }
}

using iss::test::has_edge_number;
using iss::test::simdjson_accepts;
using iss::test::simdjson_minified;

TEST_CASE("the checker accepts exactly what simdjson's DOM parser accepts, on seeds and 150 000 mutations",
          "[format][json]") {
    // Seeds: the shapes payloads take (numbers kept inside int64/double: there the checker
    // is meant to differ, see json.hpp). Mutations change, insert, delete or duplicate bytes
    // with characters that matter to the grammar, so most variants are near-misses.
    const std::vector<std::string> seeds{
        R"({"ts":"2026-12-06T04:00:00Z","method":"GET","path":"/a/b?c=d","status":200,"bytes":5120,"ms":12.5,"ok":true,"ref":null,"tags":["x","y"],"geo":{"lat":-33.86,"lon":151.2}})",
        R"([1,-2,3.5,4e10,-5E-3,0,0.0,[],{},[[]],[{}],"",true,false,null])",
        R"( { "a" : [ 1 , 2 ] , "b" : { "c" : "d" } } )",
        "\"esc \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\ud83d\\ude00 caf\xc3\xa9 \xe2\x82\xac\"",
        R"({"k\u0041":{"nested":[{"deep":[[[1]]]}]},"e":""})",
        "123",
        "-0.5e-7",
        "true",
        "null",
        "\"s\"",
        "[ ]",
        "{ }",
    };
    const std::string alphabet =
        std::string{
            "{}[]:,\"\\ut0123456789eE.+-nfl \n\t\r\x01\x1f\x7f\x80\xff"
            "aAdD"} +
        std::string(1, '\0');
    simdjson::dom::parser reference;
    payload_checker checker;
    std::mt19937_64 rng{20261206};
    std::size_t accepted = 0;
    std::size_t refused = 0;
    std::size_t skipped = 0;
    const auto compare = [&](const std::string& s) {
        if (has_edge_number(s)) {
            ++skipped;
            return;
        }
        std::string out;
        const bool ours = checker.append_minified(s, out);
        const bool theirs = simdjson_accepts(reference, s);
        INFO("input: " << s);
        REQUIRE(ours == theirs);
        if (ours) {
            CHECK(out == simdjson_minified(s));
            ++accepted;
        } else {
            CHECK(out.empty());
            CHECK(std::string_view{checker.last_error()}.size() > 0);
            ++refused;
        }
    };
    for (const auto& seed : seeds) compare(seed);
    for (int n = 0; n < 150'000; ++n) {
        std::string s = seeds[rng() % seeds.size()];
        const int edits = 1 + static_cast<int>(rng() % 3);
        for (int k = 0; k < edits; ++k) {
            const std::size_t at = s.empty() ? 0 : rng() % s.size();
            const char ch = alphabet[rng() % alphabet.size()];
            switch (rng() % 4) {
                case 0:
                    if (!s.empty()) s[at] = ch;
                    break;
                case 1: s.insert(s.begin() + static_cast<std::ptrdiff_t>(at), ch); break;
                case 2:
                    if (!s.empty()) s.erase(at, 1);
                    break;
                default: {
                    const std::size_t from = s.empty() ? 0 : rng() % s.size();
                    const std::size_t count = std::min<std::size_t>(1 + rng() % 12, s.size() - from);
                    s.insert(at, s.substr(from, count));
                }
            }
        }
        compare(s);
    }
    // Both verdicts occur often: the sweep tests the walk, not one answer.
    CHECK(accepted > 5'000);
    CHECK(refused > 50'000);
    CHECK(skipped < 15'000);
}

TEST_CASE("the checker refuses nesting deeper than max_depth, and lone surrogates", "[format][json]") {
    const auto nested = [](std::size_t depth, bool objects) {
        std::string s;
        for (std::size_t i = 0; i < depth; ++i) s += objects ? "{\"a\":" : "[";
        s += "1";
        for (std::size_t i = 0; i < depth; ++i) s += objects ? "}" : "]";
        return s;
    };
    for (const bool objects : {false, true}) {
        INFO((objects ? "objects" : "arrays"));
        bool ok = false;
        CHECK(minified(nested(payload_checker::max_depth, objects), &ok) ==
              nested(payload_checker::max_depth, objects));
        CHECK(ok);
        (void)minified(nested(payload_checker::max_depth + 1, objects), &ok);
        CHECK_FALSE(ok);
    }
    for (const char* bad : {R"("\ud800")", R"("\udc00")", R"("\ud800\u0041")", R"("\ud800x")", R"("\u12G4")", R"("\x")",
                            "\"tab\tinside\"", "\"unterminated", "[1,]", "{\"a\":1,}", "tru", "nulls", "01", "[1 2]",
                            "{\"a\" 1}", "\"a\"\"b\"", "", "  ", "]"}) {
        bool ok = true;
        (void)minified(bad, &ok);
        INFO(bad);
        CHECK_FALSE(ok);
    }
    bool ok = false;
    CHECK(minified(R"( "\ud83d\ude00\uDBFF\uDFFF" )", &ok) == R"("\ud83d\ude00\uDBFF\uDFFF")");
    CHECK(ok);
}

TEST_CASE(
    "the string scan stops at a quote, backslash or control character in every lane of a 16-byte block and "
    "in the tail",
    "[format][json]") {
    // Strings of k plain bytes then X: X falls in each lane of the SSE2 blocks and in the
    // byte-by-byte tail, and the input ends exactly at or just past a 16-byte boundary.
    for (std::size_t k = 0; k <= 40; ++k) {
        const std::string plain(k, 'a');
        INFO("k = " << k);
        bool ok = true;
        for (const char control : {'\0', '\x1f', '\n'}) {
            (void)minified("\"" + plain + std::string(1, control) + "\"", &ok);
            CHECK_FALSE(ok);
        }
        (void)minified("\"" + plain + "\"\"", &ok);  // a quote ends it: a second string follows
        CHECK_FALSE(ok);
        CHECK(minified("\"" + plain + "\\\"\"", &ok) == "\"" + plain + "\\\"\"");  // an escaped quote
        CHECK(ok);
        CHECK(minified("\"" + plain + "\x7f\"", &ok) == "\"" + plain + "\x7f\"");  // DEL is not a control here
        CHECK(ok);
        (void)minified("\"" + plain + "\\", &ok);  // a backslash at the very end
        CHECK_FALSE(ok);
        (void)minified("\"" + plain + "\\u12", &ok);  // \u cut short by the end
        CHECK_FALSE(ok);
        (void)minified("\"" + plain, &ok);  // never closed
        CHECK_FALSE(ok);
    }
}
