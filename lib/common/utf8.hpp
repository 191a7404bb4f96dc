// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// UTF-8 validation and the one JSON string escaper: the log writer and, through
/// `log::append_json_escaped` (common/log.hpp), the `--json` reports and config/print.cpp;
/// the JSON envelope and Avro schema (format/json.cpp). Inline: they sit on the formatting hot
/// path.

#include <cstddef>
#include <string>
#include <string_view>

namespace iss {

/// Length (1-4) of the valid UTF-8 sequence that starts at `s[i]`, or 0 when the bytes there
/// are not valid UTF-8 (RFC 3629 §4: no overlong forms, no surrogates U+D800..U+DFFF, nothing
/// above U+10FFFF, no truncated sequence). \pre i < s.size()
[[nodiscard]] inline std::size_t utf8_sequence_length(std::string_view s, std::size_t i) noexcept {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
    const unsigned char c = b(0);
    const std::size_t left = s.size() - i;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) return left >= 2 && (b(1) & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (left < 3 || (b(1) & 0xC0) != 0x80 || (b(2) & 0xC0) != 0x80) return 0;
        if (c == 0xE0 && b(1) < 0xA0) return 0;  // overlong
        if (c == 0xED && b(1) > 0x9F) return 0;  // surrogates
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (left < 4 || (b(1) & 0xC0) != 0x80 || (b(2) & 0xC0) != 0x80 || (b(3) & 0xC0) != 0x80) return 0;
        if (c == 0xF0 && b(1) < 0x90) return 0;  // overlong
        if (c == 0xF4 && b(1) > 0x8F) return 0;  // above U+10FFFF
        return 4;
    }
    return 0;
}

/// Appends the JSON escape of one byte that a JSON string may not hold as itself (RFC 8259
/// §7: '"', '\\' and the control bytes below 0x20): the two-character form where there is one,
/// else \u00XX in lower-case hex. \pre c < 0x20 || c == '"' || c == '\\'
inline void append_json_escape(std::string& out, unsigned char c) {
    static constexpr char hex[] = "0123456789abcdef";
    switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
            out += "\\u00";
            out += hex[c >> 4];
            out += hex[c & 0xf];
    }
}

/// Appends `s` to `out` as the body of a JSON string (no quotes), escaping per RFC 8259 §7:
/// '"', '\\' and the control bytes below 0x20 (`append_json_escape`); every other byte of valid
/// UTF-8 is copied as it is, and each byte that is not part of valid UTF-8
/// (`utf8_sequence_length` 0) becomes U+FFFD REPLACEMENT CHARACTER, so the text is valid JSON
/// whatever the input. Copies runs that need no escaping in one append.
inline void append_json_escaped(std::string& out, std::string_view s) {
    std::size_t run = 0;  // start of the bytes not yet copied
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            ++i;
            continue;
        }
        const std::size_t n = c < 0x80 ? 0 : utf8_sequence_length(s, i);
        if (n != 0) {
            i += n;
            continue;
        }
        out.append(s.data() + run, i - run);
        if (c < 0x80) append_json_escape(out, c);
        else out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
        run = ++i;
    }
    out.append(s.data() + run, s.size() - run);
}

}  // namespace iss
