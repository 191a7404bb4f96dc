#include "format/json.hpp"

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

namespace iss::format::json {

namespace {

constexpr char hex_lower[] = "0123456789abcdef";

/// Escape class per byte: 0 copy, 1 needs escaping (control, '"', '\\').
constexpr std::array<std::uint8_t, 256> make_escape_table() {
    std::array<std::uint8_t, 256> t{};
    for (int c = 0; c < 0x20; ++c) t[static_cast<std::size_t>(c)] = 1;
    t['"'] = 1;
    t['\\'] = 1;
    return t;
}
constexpr auto escape_table = make_escape_table();

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

/// Writes `v` as exactly `width` decimal digits (zero-padded; higher digits dropped).
void put_digits(char* at, unsigned v, int width) noexcept {
    for (int i = width - 1; i >= 0; --i) {
        at[i] = static_cast<char>('0' + v % 10);
        v /= 10;
    }
}

/// Index of the first '"' or '\\' in `s[i, n)`, or `n`. Reads up to 15 bytes past `n`: the
/// caller's buffer must have that much room (the checker's copy has simdjson's padding).
std::size_t find_quote_or_backslash(const char* s, std::size_t i, std::size_t n) noexcept {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    for (; i < n; i += 16) {
        const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
        const auto mask = static_cast<unsigned>(
            _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(chunk, quote), _mm_cmpeq_epi8(chunk, backslash))));
        if (mask != 0) return std::min(n, i + static_cast<std::size_t>(__builtin_ctz(mask)));
    }
    return n;
#else
    for (; i < n; ++i)
        if (s[i] == '"' || s[i] == '\\') return i;
    return n;
#endif
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

void append_valid_string(std::string& out, std::string_view s) {
    out += '"';
    std::size_t run = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (escape_table[c] == 0) continue;
        out.append(s.data() + run, i - run);
        append_json_escape(out, c);
        run = i + 1;
    }
    out.append(s.data() + run, s.size() - run);
    out += '"';
}

void append_string(std::string& out, std::string_view s) {
    if (valid_utf8(s)) {
        append_valid_string(out, s);
        return;
    }
    out += '"';
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            if (escape_table[c] != 0) append_json_escape(out, c);
            else out += static_cast<char>(c);
            ++i;
            continue;
        }
        const std::size_t n = iss::utf8_sequence_length(s, i);
        if (n == 0) {
            out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
            ++i;
        } else {
            out.append(s.substr(i, n));
            i += n;
        }
    }
    out += '"';
}

void append_base64(std::string& out, std::span<const std::byte> bytes) {
    static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const std::size_t start = out.size();
    out.resize(start + (bytes.size() + 2) / 3 * 4);
    char* o = out.data() + start;
    std::size_t i = 0;
    const auto at = [&](std::size_t k) { return static_cast<std::uint32_t>(std::to_integer<unsigned char>(bytes[k])); };
    for (; i + 3 <= bytes.size(); i += 3) {
        const std::uint32_t v = (at(i) << 16) | (at(i + 1) << 8) | at(i + 2);
        *o++ = alphabet[(v >> 18) & 63];
        *o++ = alphabet[(v >> 12) & 63];
        *o++ = alphabet[(v >> 6) & 63];
        *o++ = alphabet[v & 63];
    }
    const std::size_t rest = bytes.size() - i;
    if (rest == 1) {
        const std::uint32_t v = at(i) << 16;
        *o++ = alphabet[(v >> 18) & 63];
        *o++ = alphabet[(v >> 12) & 63];
        *o++ = '=';
        *o++ = '=';
    } else if (rest == 2) {
        const std::uint32_t v = (at(i) << 16) | (at(i + 1) << 8);
        *o++ = alphabet[(v >> 18) & 63];
        *o++ = alphabet[(v >> 12) & 63];
        *o++ = alphabet[(v >> 6) & 63];
        *o++ = '=';
    }
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
    // Days to civil date: Howard Hinnant's algorithm (public domain, chrono-Compatible
    // Low-Level Date Algorithms, "civil_from_days").
    const std::uint64_t secs = us / 1'000'000;
    const auto frac = static_cast<unsigned>(us % 1'000'000);
    const auto days = static_cast<std::int64_t>(secs / 86'400);
    const auto sod = static_cast<unsigned>(secs % 86'400);
    const std::int64_t z = days + 719'468;
    const std::int64_t era = z / 146'097;
    const auto doe = static_cast<unsigned>(z - era * 146'097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36'524 - doe / 146'096) / 365;
    const std::int64_t y0 = static_cast<std::int64_t>(yoe) + era * 400;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    const unsigned d = doy - (153 * mp + 2) / 5 + 1;
    const unsigned m = mp < 10 ? mp + 3 : mp - 9;
    const std::int64_t y = m <= 2 ? y0 + 1 : y0;
    // Fixed-width fields written in place (no format-string parsing: this runs per record).
    if (y > 9999) {
        append_uint(out, static_cast<std::uint64_t>(y));
    } else {
        char yb[4];
        put_digits(yb, static_cast<unsigned>(y), 4);
        out.append(yb, 4);
    }
    char b[23];  // -MM-DDTHH:MM:SS.ffffffZ
    b[0] = '-';
    put_digits(b + 1, m, 2);
    b[3] = '-';
    put_digits(b + 4, d, 2);
    b[6] = 'T';
    put_digits(b + 7, sod / 3600, 2);
    b[9] = ':';
    put_digits(b + 10, sod / 60 % 60, 2);
    b[12] = ':';
    put_digits(b + 13, sod % 60, 2);
    b[15] = '.';
    put_digits(b + 16, frac, 6);
    b[22] = 'Z';
    out.append(b, sizeof b);
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
    simdjson::dom::parser parser;
    std::string padded;  ///< the payload copied with SIMDJSON_PADDING bytes of room
};

payload_checker::payload_checker() : impl_{std::make_unique<impl>()} {}
payload_checker::~payload_checker() = default;
payload_checker::payload_checker(payload_checker&&) noexcept = default;
payload_checker& payload_checker::operator=(payload_checker&&) noexcept = default;

bool payload_checker::append_minified(std::string_view payload, std::string& out) {
    // The copy gets simdjson's padding at once: the string scan below reads 16 bytes at a time
    // and may look past the payload's end into it.
    auto& p = impl_->padded;
    const std::size_t len = payload.size();
    p.resize(len + simdjson::SIMDJSON_PADDING);
    if (len != 0) std::memcpy(p.data(), payload.data(), len);
    // simdjson's number parser refuses values outside double/int64 range (a big integer, 1e400)
    // although RFC 8259 allows them. Check every number token against the grammar here and
    // let simdjson see a 0 in its place; strings, structure and UTF-8 stay simdjson's job.
    // Most of a record's bytes are inside strings: those are skipped to the next quote 16
    // bytes at a time, stepping over each backslash and the character it escapes.
    char* const base = p.data();
    const auto skip_string = [base, len](std::size_t i) {  // i: just after the opening quote
        for (;;) {
            const std::size_t at = find_quote_or_backslash(base, i, len);
            if (at >= len || base[at] == '"') return at;  // the closing quote (or the end: simdjson refuses it)
            i = at + 2;                                   // past the escaped character
        }
    };
    // Whitespace between tokens: minify. Else the payload is minified already, but for
    // whitespace before its first token or after its last (padding), which is cut off.
    bool spaced = false;
    bool pending_space = false;  // whitespace since the last token
    bool seen_token = false;
    for (std::size_t i = 0; i < len; ++i) {
        const char c = base[i];
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
            pending_space = true;
            continue;
        }
        if (pending_space && seen_token) spaced = true;
        pending_space = false;
        seen_token = true;
        if (c == '"') {
            i = skip_string(i + 1);
            continue;
        }
        if (c == '-' || (c >= '0' && c <= '9')) {
            std::size_t j = i;
            while (j < len && is_number_char(base[j])) ++j;
            if (!valid_number(std::string_view{base + i, j - i})) {
                last_error_ = "a number does not follow the JSON grammar or is beyond double range";
                return false;
            }
            base[i] = '0';
            for (std::size_t k = i + 1; k < j; ++k) base[k] = ' ';
            i = j - 1;
        }
    }
    simdjson::dom::element doc;
    const auto err = impl_->parser.parse(p.data(), len, false).get(doc);
    if (err != simdjson::SUCCESS) {
        last_error_ = simdjson::error_message(err);
        return false;
    }
    if (!spaced) {
        // (No pass through minify, no zero-fill of the room for it.)
        constexpr std::string_view ws = " \n\r\t";
        const std::size_t from = payload.find_first_not_of(ws);
        out.append(payload.substr(from, payload.find_last_not_of(ws) + 1 - from));
        return true;
    }
    const std::size_t start = out.size();
    out.resize(start + payload.size());
    std::size_t written = 0;
    if (simdjson::minify(payload.data(), payload.size(), out.data() + start, written) != simdjson::SUCCESS) {
        out.resize(start);
        last_error_ = "minification failed";
        return false;
    }
    out.resize(start + written);
    return true;
}

void append_header_value(std::string& out, proto::header_kind k, proto::bytes_view v, bool as_json) {
    using proto::header_kind;
    switch (k) {
        case header_kind::raw:
            if (as_json) out += '"';
            append_base64(out, v);
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
