// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// JSON building blocks for the record writers: strings (common/utf8.hpp escapes them), 128-bit decimals,
/// RFC 3339 timestamps, shortest round-trip floats, and the JSON payload checker (simdjson
/// validation + minification). All append to a `std::string` and never allocate beyond it
/// (except the checker's reusable buffers).

#include "proto/message.hpp"
#include "proto/wire.hpp"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace iss::format::json {

/// True when `s` is valid UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF).
[[nodiscard]] bool valid_utf8(std::string_view s) noexcept;

/// Appends `"s"` with RFC 8259 escapes (`\"`, `\\`, `\n`, ..., `\u00XX` for other control
/// characters). Invalid UTF-8 sequences become U+FFFD, so the output is always valid JSON
/// (the one escaper, `iss::append_json_escaped` in common/utf8.hpp, between quotes).
void append_string(std::string& out, std::string_view s);

/// Decimal text of 64-bit integers (no format-string parsing: for per-record fields).
void append_uint(std::string& out, std::uint64_t v);
void append_int(std::string& out, std::int64_t v);

/// Decimal text of 128-bit integers.
void append_decimal(std::string& out, proto::u128 v);
void append_decimal(std::string& out, proto::i128 v);

/// 32 lower-case hex digits, most significant first.
void append_hex128(std::string& out, proto::u128 v);

/// RFC 3339 UTC with microseconds (`2026-11-30T01:02:03.000004Z`) for µs since the epoch.
void append_rfc3339_micros(std::string& out, std::uint64_t us);

/// A JSON number in shortest round-trip form (float32 as its own shortest text); NaN and the
/// infinities as the strings "NaN", "Infinity", "-Infinity" (JSON has no such numbers).
void append_number(std::string& out, double v);
void append_number(std::string& out, float v);

/// Validates JSON payloads against RFC 8259 in one pass (json.cpp: a grammar walk, strings
/// skipped 16 bytes at a time, UTF-8 by simdjson's validator) and appends them minified, so a
/// record is always one line (simdjson's minify where there is whitespace between tokens).
/// Accepts what simdjson's DOM parser accepts (lone \u surrogates refused, as there), with
/// two differences: numbers are checked against the grammar and kept digit for digit, so
/// `123456789012345678901234567890` is valid, but a number beyond double range (`1e400`) is
/// not, since many readers refuse it; nesting deeper than `max_depth` is refused. Reuses its
/// buffers: keep one per writer.
class payload_checker {
public:
    payload_checker();
    ~payload_checker();
    payload_checker(payload_checker&&) noexcept;
    payload_checker& operator=(payload_checker&&) noexcept;

    /// Appends the minified JSON text of `payload` and returns true when it is one valid JSON
    /// value (any type, surrounding whitespace allowed); otherwise leaves `out` as it was and
    /// returns false, with `last_error()` saying why.
    bool append_minified(std::string_view payload, std::string& out);
    /// Arrays and objects nested deeper are refused.
    static constexpr std::size_t max_depth = 1023;
    [[nodiscard]] const char* last_error() const noexcept { return last_error_; }

private:
    struct impl;
    std::unique_ptr<impl> impl_;
    const char* last_error_ = "";
};

/// A user header's key (after `kind:`) or value as text, by its kind (`proto::header_kind`):
/// raw as base64, string as is, booleans and integers in decimal, floats in shortest form.
/// With `as_json` the result is a JSON value (raw, strings and 64/128-bit integers quoted, so
/// readers do not round them); without, the bare text of a key (NaN and the infinities
/// unquoted). Fixed-size kinds must have their size (header_reader checks it).
void append_header_value(std::string& out, proto::header_kind k, proto::bytes_view v, bool as_json);

}  // namespace iss::format::json
