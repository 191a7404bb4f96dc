// SPDX-License-Identifier: Apache-2.0
#include "format/json.hpp"

#include "common/base64.hpp"
#include "common/rfc3339.hpp"
#include "common/utf8.hpp"

#include <fmt/format.h>
#include <simdjson.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <vector>

namespace iss::format::json {

namespace {

constexpr char hex_lower[] = "0123456789abcdef";

/// Checks one number token against RFC 8259: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
bool valid_number(std::string_view t) noexcept {
    std::size_t i = 0;
    const auto digit = [&](std::size_t k) { return k < t.size() && t[k] >= '0' && t[k] <= '9'; };
    if (i < t.size() && t[i] == '-') ++i;
    if (!digit(i)) return false;
    if (t[i] == '0') ++i;
    else
        while (digit(i)) ++i;
    if (i < t.size() && t[i] == '.') {
        ++i;
        if (!digit(i)) return false;
        while (digit(i)) ++i;
    }
    std::size_t e = std::string_view::npos;  // where the exponent starts (the grammar walk finds it)
    if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
        e = i;
        ++i;
        if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
        if (!digit(i)) return false;
        while (digit(i)) ++i;
    }
    if (i != t.size()) return false;
    // The grammar has no limit, but JSON readers do: a value beyond double range (1e400) makes
    // many of them refuse the whole line, so it is not embedded as JSON (RFC 8259 §6 lets
    // implementations limit range). Underflow (1e-400) reads as 0 everywhere and stays.
    if (e != std::string_view::npos) {
        // An exponent of more than 4 digits overflows some readers' exponent counters.
        std::string_view exp = t.substr(e + 1);
        const bool negative = !exp.empty() && exp.front() == '-';
        if (!exp.empty() && (exp.front() == '+' || exp.front() == '-')) exp.remove_prefix(1);
        while (exp.size() > 1 && exp.front() == '0') exp.remove_prefix(1);
        if (exp.size() > 4) return false;
        // A positive exponent past double range is refused even on a zero mantissa: some
        // readers turn 0e400 into NaN.
        if (!negative && (exp.size() > 3 || std::stoi(std::string{exp}) > 308)) return false;
    }
    if (e != std::string_view::npos || t.size() > 300) {
        const std::string copy{t};
        if (std::isinf(std::strtod(copy.c_str(), nullptr))) return false;
    }
    return true;
}

/// Decimal text of an unsigned integer of up to 128 bits.
template <class U>
void append_unsigned(std::string& out, U v) {
    char buf[40];
    char* p = buf + sizeof buf;
    do {
        *--p = static_cast<char>('0' + static_cast<int>(v % 10));
        v /= 10;
    } while (v != 0);
    out.append(p, static_cast<std::size_t>(buf + sizeof buf - p));
}

/// Decimal text of a signed integer; `U` is its unsigned counterpart.
template <class U, class S>
void append_signed(std::string& out, S v) {
    if (v < 0) {
        out += '-';
        // -(v + 1) + 1 avoids overflow for the smallest value.
        append_unsigned(out, static_cast<U>(-(v + 1)) + 1);
        return;
    }
    append_unsigned(out, static_cast<U>(v));
}

/// Index of the first '"', '\\' or control character (U+0000..U+001F) in `s[i, n)`, or
/// `n`: what ends a run of plain string bytes (RFC 8259 §7). Reads nothing past `n`: whole
/// 16-byte blocks with SSE2, the tail byte by byte.
std::size_t find_string_special(const char* s, std::size_t i, std::size_t n) noexcept {
    const auto special = [](char c) { return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20; };
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i below_space = _mm_set1_epi8(0x1f);
    for (; i + 16 <= n; i += 16) {
        const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
        // x <= 0x1f (unsigned) exactly when max(x, 0x1f) == 0x1f.
        const __m128i control = _mm_cmpeq_epi8(_mm_max_epu8(chunk, below_space), below_space);
        const auto mask = static_cast<unsigned>(_mm_movemask_epi8(
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(chunk, quote), _mm_cmpeq_epi8(chunk, backslash)), control)));
        if (mask != 0) return i + static_cast<std::size_t>(__builtin_ctz(mask));
    }
#endif
    for (; i < n; ++i)
        if (special(s[i])) return i;
    return n;
}

/// The value of the 4 hex digits at `s[i, i + 4)` (below `n`), or -1.
long hex4(const char* s, std::size_t i, std::size_t n) noexcept {
    if (i + 4 > n) return -1;
    long v = 0;
    for (std::size_t k = i; k < i + 4; ++k) {
        const char c = s[k];
        int d = 0;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return -1;
        v = v * 16 + d;
    }
    return v;
}

bool is_number_char(char c) noexcept {
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

template <class T>
T load(proto::bytes_view b) {
    T v{};
    std::memcpy(&v, b.data(), sizeof v);  // little-endian hosts only (as proto/)
    return v;
}

}  // namespace

bool valid_utf8(std::string_view s) noexcept { return simdjson::validate_utf8(s.data(), s.size()); }

void append_string(std::string& out, std::string_view s) {
    out += '"';
    iss::append_json_escaped(out, s);
    out += '"';
}

void append_decimal(std::string& out, proto::u128 v) { append_unsigned(out, v); }
void append_decimal(std::string& out, proto::i128 v) { append_signed<proto::u128>(out, v); }

void append_hex128(std::string& out, proto::u128 v) {
    char buf[32];
    // Two 64-bit halves: 128-bit shifts cost more per digit.
    auto half = [&buf](std::uint64_t h, int at) {
        for (int i = at + 15; i >= at; --i) {
            buf[i] = hex_lower[h & 0xf];
            h >>= 4;
        }
    };
    half(static_cast<std::uint64_t>(v >> 64), 0);
    half(static_cast<std::uint64_t>(v), 16);
    out.append(buf, 32);
}

void append_rfc3339_micros(std::string& out, std::uint64_t us) {
    iss::append_rfc3339(out, static_cast<std::int64_t>(us / 1'000'000), static_cast<std::uint32_t>(us % 1'000'000), 6);
}

void append_uint(std::string& out, std::uint64_t v) { append_unsigned(out, v); }
void append_int(std::string& out, std::int64_t v) { append_signed<std::uint64_t>(out, v); }

void append_number(std::string& out, double v) {
    if (std::isnan(v)) out += "\"NaN\"";
    else if (std::isinf(v)) out += v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
    else fmt::format_to(std::back_inserter(out), "{}", v);
}

void append_number(std::string& out, float v) {
    if (std::isnan(v)) out += "\"NaN\"";
    else if (std::isinf(v)) out += v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
    else fmt::format_to(std::back_inserter(out), "{}", v);
}

struct payload_checker::impl {
    std::vector<bool> in_object;  ///< per open array/object: whether it is an object
};

payload_checker::payload_checker() : impl_{std::make_unique<impl>()} {}
payload_checker::~payload_checker() = default;
payload_checker::payload_checker(payload_checker&&) noexcept = default;
payload_checker& payload_checker::operator=(payload_checker&&) noexcept = default;

namespace {

/// What the grammar walk of `append_minified` allows next (RFC 8259 §2, §4, §5).
enum class expect : std::uint8_t {
    value,           ///< a value (the document's, or one after ':' or an array's ',')
    value_or_close,  ///< just after '[': a value or ']'
    key_or_close,    ///< just after '{': a key (a string) or '}'
    key,             ///< after an object's ',': a key
    colon,           ///< after a key
    comma_or_close,  ///< after a value inside an array or object
    end,             ///< after the document's value: only whitespace
};

/// Steps `at` (just after a string's opening quote) to its closing quote in `s[0, n)`,
/// checking escapes and \u surrogate pairs (RFC 8259 §7); nullptr, or why the string is bad.
const char* scan_string(const char* s, std::size_t& at, std::size_t n) noexcept {
    for (;;) {
        at = find_string_special(s, at, n);
        if (at >= n) return "a string is not closed";
        if (s[at] == '"') return nullptr;
        if (s[at] != '\\') return "a string holds an unescaped control character (U+0000 to U+001F)";
        const char e = at + 1 < n ? s[at + 1] : '\0';
        if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't') {
            at += 2;
            continue;
        }
        if (e != 'u') return "a string holds an invalid escape";
        const long cp = hex4(s, at + 2, n);
        at += 6;
        if (cp < 0) return "a string holds an invalid \\u escape (four hex digits)";
        if (cp >= 0xdc00 && cp <= 0xdfff) return "a string holds a lone low surrogate (\\uDC00..\\uDFFF)";
        if (cp >= 0xd800 && cp < 0xdc00) {  // a high surrogate: a low one must follow
            const long low = at + 1 < n && s[at] == '\\' && s[at + 1] == 'u' ? hex4(s, at + 2, n) : -1;
            if (low < 0xdc00 || low > 0xdfff) return "a string holds a lone high surrogate (\\uD800..\\uDBFF)";
            at += 6;
        }
    }
}

/// Steps `at` (at a 't', 'f' or 'n') past the literal `true`, `false` or `null` that starts
/// there; nullptr, or why it is not one.
const char* scan_literal(std::string_view s, std::size_t& at) noexcept {
    const std::string_view word = s[at] == 't' ? "true" : s[at] == 'f' ? "false" : "null";
    const std::size_t j = at + word.size();
    if (s.substr(at, word.size()) != word ||
        (j < s.size() && std::string_view{" \n\r\t,:[]{}\""}.find(s[j]) == std::string_view::npos))
        return "invalid literal (true, false and null are the only words)";
    at = j;
    return nullptr;
}

/// Steps `at` (at a '-' or digit) past the number that starts there; nullptr, or why it is
/// not one (valid_number).
const char* scan_number(std::string_view s, std::size_t& at) noexcept {
    std::size_t j = at;
    while (j < s.size() && is_number_char(s[j])) ++j;
    if (!valid_number(s.substr(at, j - at)))
        return "a number does not follow the JSON grammar or is beyond double range";
    at = j;
    return nullptr;
}

constexpr const char* bad_structure =
    "improper structure: a missing or superfluous comma, colon, brace or bracket, or a key that is not a string";

}  // namespace

bool payload_checker::append_minified(std::string_view payload, std::string& out) {
    // One walk over the payload: the RFC 8259 grammar with a stack of open arrays and objects,
    // strings skipped to their next quote, backslash or control character 16 bytes at a time
    // (escapes checked, \u surrogates paired), numbers checked by valid_number (digit for
    // digit: big integers stay valid), literals compared whole. UTF-8 is validated over the
    // whole payload first (simdjson's SIMD validator). What this accepts is what simdjson's
    // DOM parser accepts, but for numbers beyond its int64/double parsing (valid here unless
    // beyond double range) and nesting (refused past max_depth here; simdjson takes 1023
    // non-empty levels plus an innermost empty one). tests/unit/format/json_test.cpp
    // compares the two on generated inputs, tests/fuzz/json_check_fuzz.cpp on fuzzed ones.
    last_error_ = "";
    const char* const base = payload.data();
    const std::size_t len = payload.size();
    if (!simdjson::validate_utf8(base, len)) {
        last_error_ = "not valid UTF-8";
        return false;
    }
    auto& stack = impl_->in_object;
    stack.clear();
    expect state = expect::value;
    const auto after_value = [&] { return stack.empty() ? expect::end : expect::comma_or_close; };
    const auto fail = [this](const char* why) {
        last_error_ = why;
        return false;
    };
    bool spaced = false;         // whitespace between two tokens: the output needs minify
    bool pending_space = false;  // whitespace since the last token
    std::size_t first = len;     // where the first token starts
    std::size_t last_end = 0;    // where the last token ends
    std::size_t i = 0;
    while (i < len) {
        const char c = base[i];
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
            pending_space = true;
            ++i;
            continue;
        }
        if (pending_space && first < len) spaced = true;
        pending_space = false;
        if (first == len) first = i;
        const bool value_allowed = state == expect::value || state == expect::value_or_close;
        switch (c) {
            case '{':
            case '[':
                if (!value_allowed) return fail(bad_structure);
                if (stack.size() >= max_depth) return fail("nested deeper than 1023 arrays and objects");
                stack.push_back(c == '{');
                state = c == '{' ? expect::key_or_close : expect::value_or_close;
                ++i;
                break;
            case '}':
            case ']': {
                const bool object = c == '}';
                const bool may_close = state == expect::comma_or_close ||
                                       state == (object ? expect::key_or_close : expect::value_or_close);
                if (!may_close || stack.empty() || stack.back() != object) return fail(bad_structure);
                stack.pop_back();
                state = after_value();
                ++i;
                break;
            }
            case ',':
                if (state != expect::comma_or_close) return fail(bad_structure);
                state = stack.back() ? expect::key : expect::value;
                ++i;
                break;
            case ':':
                if (state != expect::colon) return fail(bad_structure);
                state = expect::value;
                ++i;
                break;
            case '"': {
                const bool is_key = state == expect::key || state == expect::key_or_close;
                if (!is_key && !value_allowed) return fail(bad_structure);
                std::size_t at = i + 1;
                if (const char* why = scan_string(base, at, len)) return fail(why);
                state = is_key ? expect::colon : after_value();
                i = at + 1;
                break;
            }
            case 't':
            case 'f':
            case 'n':
                if (!value_allowed) return fail(bad_structure);
                if (const char* why = scan_literal(payload, i)) return fail(why);
                state = after_value();
                break;
            default:
                if (c != '-' && (c < '0' || c > '9'))
                    return fail("unexpected character: not the start of a value nor a structural character");
                if (!value_allowed) return fail(bad_structure);
                if (const char* why = scan_number(payload, i)) return fail(why);
                state = after_value();
                break;
        }
        last_end = i;
    }
    if (first == len) return fail("empty: no JSON value");
    if (state != expect::end) return fail("the payload ends inside an array or object");
    if (!spaced) {
        // Minified already (whitespace at most before the first token or after the last).
        out.append(base + first, last_end - first);
        return true;
    }
    const std::size_t start = out.size();
    out.resize(start + len);
    std::size_t written = 0;
    if (simdjson::minify(base, len, out.data() + start, written) != simdjson::SUCCESS) {
        out.resize(start);
        return fail("minification failed");
    }
    out.resize(start + written);
    return true;
}

void append_header_value(std::string& out, proto::header_kind k, proto::bytes_view v, bool as_json) {
    using proto::header_kind;
    switch (k) {
        case header_kind::raw:
            if (as_json) out += '"';
            iss::append_base64(out, v);
            if (as_json) out += '"';
            return;
        case header_kind::string:
            if (as_json) append_string(out, proto::as_text(v));
            else out += proto::as_text(v);
            return;
        case header_kind::boolean: out += std::to_integer<unsigned char>(v[0]) != 0 ? "true" : "false"; return;
        case header_kind::int8: append_int(out, load<std::int8_t>(v)); return;
        case header_kind::int16: append_int(out, load<std::int16_t>(v)); return;
        case header_kind::int32: append_int(out, load<std::int32_t>(v)); return;
        case header_kind::uint8: append_uint(out, load<std::uint8_t>(v)); return;
        case header_kind::uint16: append_uint(out, load<std::uint16_t>(v)); return;
        case header_kind::uint32: append_uint(out, load<std::uint32_t>(v)); return;
        case header_kind::int64:
        case header_kind::uint64:
        case header_kind::int128:
        case header_kind::uint128:
            // 64- and 128-bit integers: decimal strings, so JSON readers do not round them.
            if (as_json) out += '"';
            if (k == header_kind::int64) append_int(out, load<std::int64_t>(v));
            else if (k == header_kind::uint64) append_uint(out, load<std::uint64_t>(v));
            else if (k == header_kind::int128) append_decimal(out, load<proto::i128>(v));
            else append_decimal(out, load<proto::u128>(v));
            if (as_json) out += '"';
            return;
        case header_kind::float32:
        case header_kind::float64: {
            std::string num;
            if (k == header_kind::float32) append_number(num, load<float>(v));
            else append_number(num, load<double>(v));
            // In a key, NaN and the infinities lose their JSON quotes (the key is quoted whole).
            if (!as_json && !num.empty() && num.front() == '"') out.append(num, 1, num.size() - 2);
            else out += num;
            return;
        }
    }
}

}  // namespace iss::format::json
