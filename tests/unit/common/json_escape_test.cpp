// SPDX-License-Identifier: Apache-2.0
// The one JSON string escaper (common/utf8.hpp, append_json_escaped): RFC 8259 §7 escapes,
// UTF-8 copied as it is, every invalid byte one U+FFFD.
#include "common/utf8.hpp"

#include "catch2_compat.hpp"

namespace {
std::string esc(std::string_view s) {
    std::string out = "<";
    iss::append_json_escaped(out, s);
    return out + ">";
}
}  // namespace

TEST_CASE("valid multi-byte UTF-8 passes through JSON escaping unchanged", "[log]") {
    std::string out;
    iss::append_json_escaped(out, "caf\xc3\xa9 \xf0\x9f\x98\x80");
    CHECK(out == "caf\xc3\xa9 \xf0\x9f\x98\x80");
    out.clear();
    iss::append_json_escaped(out, "\xed\xa0\x80");  // a UTF-16 surrogate encoded in UTF-8 is invalid
    CHECK(out == "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
}

TEST_CASE("json escaping: quotes, backslashes and control bytes; nothing else", "[json_escape]") {
    CHECK(esc("") == "<>");
    CHECK(esc("plain text / 123") == "<plain text / 123>");
    CHECK(esc("a\"b\\c") == "<a\\\"b\\\\c>");
    CHECK(esc("\n\r\t\b\f") == "<\\n\\r\\t\\b\\f>");
    CHECK(esc(std::string_view{"\x00\x01\x1f", 3}) == "<\\u0000\\u0001\\u001f>");
    CHECK(esc("\x7f") == "<\x7f>");  // DEL is not a JSON control character
}

TEST_CASE("json escaping: each byte outside valid UTF-8 is one U+FFFD, the rest is kept", "[json_escape]") {
    CHECK(esc("a\xff") == "<a\xef\xbf\xbd>");
    CHECK(esc("\xc3") == "<\xef\xbf\xbd>");                                                  // truncated sequence
    CHECK(esc("\xc0\xaf") == "<\xef\xbf\xbd\xef\xbf\xbd>");                                  // overlong '/'
    CHECK(esc("\xf4\x90\x80\x80") == "<\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd>");  // above U+10FFFF
    CHECK(esc("\xe2\x82\xac\"\xff\n") == "<\xe2\x82\xac\\\"\xef\xbf\xbd\\n>");
}
