// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// UTF-8 validation and JSON string escaping shared by the log writer (common/log.cpp) and
/// the JSON envelope (format/json.cpp). Inline: they sit on the formatting hot path.

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

}  // namespace iss
