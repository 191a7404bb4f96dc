// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The one RFC 3339 parser: record times in keys (`naming.time_source`, format/key_fields.cpp),
/// timestamp and date columns (format/row_reader.cpp), credential expiry times (aws/parse.cpp).
///
/// The rules (RFC 3339 §5.6, https://www.rfc-editor.org/rfc/rfc3339#section-5.6):
/// - `full-date`: `YYYY-MM-DD`, four-digit year 0000-9999, month 01-12, and a day that exists in
///   that month of that year (§5.7: 2026-02-29 and 2026-04-31 are refused, 2024-02-29 is not);
/// - `date-time`: `full-date` `T` `HH:MM:SS` [`.` one or more digits] offset, where `T` may also
///   be `t` or a space (§5.6's note), hour 00-23, minute 00-59, second 00-60;
/// - the offset is `Z`, `z` or `+HH:MM` / `-HH:MM` (hour 00-23, minute 00-59); `-00:00` is UTC. A
///   time without an offset is refused: it names no instant;
/// - a fraction may have any number of digits; digits past the sixth (below a microsecond) are
///   dropped, so the instant is rounded toward the past;
/// - second 60 (a leap second, §5.7) is read as the first second of the next minute: there is
///   no leap-second table here, and the POSIX time scale every consumer uses has no such second.
/// Nothing else is accepted: no leading or trailing spaces, no other separators, no week or
/// ordinal dates. Pure: no allocation, no clock, no locale.
///
/// And the one writer of such times (log lines, the JSON envelope, CSV and partition values,
/// credential expiry): `append_rfc3339`, `append_rfc3339_date`, over the one conversion between
/// day numbers and proleptic Gregorian dates (`civil_from_days`, `days_from_civil`).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace iss {

/// An RFC 3339 `date-time` read by `parse_rfc3339`.
struct rfc3339_time {
    std::int64_t utc_us = 0;    ///< µs since 1970-01-01T00:00:00Z (negative before)
    std::int32_t offset_s = 0;  ///< the local offset it was written with, seconds east of UTC
    friend bool operator==(const rfc3339_time&, const rfc3339_time&) = default;
};

/// Parses an RFC 3339 `date-time` (the rules above); nullopt when `s` is not one.
[[nodiscard]] std::optional<rfc3339_time> parse_rfc3339(std::string_view s) noexcept;

/// `parse_rfc3339(s)->utc_us`: µs since the Unix epoch; nullopt when `s` is not a `date-time`.
[[nodiscard]] std::optional<std::int64_t> parse_rfc3339_us(std::string_view s) noexcept;

/// Parses an RFC 3339 `full-date` (`YYYY-MM-DD`, a day that exists) into days since
/// 1970-01-01 (negative before); nullopt when `s` is not one.
[[nodiscard]] std::optional<std::int64_t> parse_rfc3339_date(std::string_view s) noexcept;

/// A proleptic Gregorian date (month 1-12, day 1-31).
struct civil_date {
    std::int64_t year = 1970;
    unsigned month = 1;
    unsigned day = 1;
    friend bool operator==(const civil_date&, const civil_date&) = default;
};

/// The date of a day number (days since 1970-01-01, negative before), for any int64 day whose
/// year fits int64 (Howard Hinnant's public-domain `civil_from_days`).
[[nodiscard]] civil_date civil_from_days(std::int64_t days) noexcept;
/// Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's `days_from_civil`); the date
/// is not checked (2026-02-31 is 2026-03-03).
[[nodiscard]] std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) noexcept;

/// Appends `YYYY-MM-DD` for a day number. Years 0-9999 take four digits; others (outside
/// RFC 3339) are written as `fmt`'s `{:04}` writes them: `10000`, `-001`.
void append_rfc3339_date(std::string& out, std::int64_t days);
/// Appends `YYYY-MM-DDTHH:MM:SS[.F]Z` for `secs` seconds since the epoch (any sign) and a
/// fraction `frac` < 10^`frac_digits` written with exactly `frac_digits` digits (0: no `.`);
/// the year as `append_rfc3339_date` writes it. Runs per record: no format-string parsing.
void append_rfc3339(std::string& out, std::int64_t secs, std::uint32_t frac, int frac_digits);

}  // namespace iss
