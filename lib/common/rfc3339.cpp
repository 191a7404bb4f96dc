// SPDX-License-Identifier: Apache-2.0
#include "common/rfc3339.hpp"

#include <fmt/format.h>

#include <chrono>
#include <iterator>

namespace iss {

namespace {

/// The `n` decimal digits at `s[at]`, or nullopt when there are fewer or one is not a digit.
std::optional<int> digits(std::string_view s, std::size_t at, std::size_t n) noexcept {
    if (at + n > s.size()) return std::nullopt;
    int v = 0;
    for (std::size_t i = at; i < at + n; ++i) {
        if (s[i] < '0' || s[i] > '9') return std::nullopt;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/// Writes `v` as exactly `width` decimal digits (zero-padded; higher digits dropped).
void put_digits(char* at, std::uint32_t v, int width) noexcept {
    for (int i = width - 1; i >= 0; --i) {
        at[i] = static_cast<char>('0' + v % 10);
        v /= 10;
    }
}

/// `time-numoffset` or `Z` at `s[at]`, to the end of `s`: seconds east of UTC.
std::optional<std::int32_t> offset_at(std::string_view s, std::size_t at) noexcept {
    if (at + 1 == s.size() && (s[at] == 'Z' || s[at] == 'z')) return 0;
    if (at + 6 != s.size() || (s[at] != '+' && s[at] != '-') || s[at + 3] != ':') return std::nullopt;
    const auto hh = digits(s, at + 1, 2);
    const auto mm = digits(s, at + 4, 2);
    if (!hh || !mm || *hh > 23 || *mm > 59) return std::nullopt;
    return (s[at] == '-' ? -1 : 1) * (*hh * 3600 + *mm * 60);
}

}  // namespace

std::optional<std::int64_t> parse_rfc3339_date(std::string_view s) noexcept {
    if (s.size() != 10 || s[4] != '-' || s[7] != '-') return std::nullopt;
    const auto y = digits(s, 0, 4);
    const auto m = digits(s, 5, 2);
    const auto d = digits(s, 8, 2);
    if (!y || !m || !d) return std::nullopt;
    const std::chrono::year_month_day ymd{std::chrono::year{*y}, std::chrono::month{static_cast<unsigned>(*m)},
                                          std::chrono::day{static_cast<unsigned>(*d)}};
    if (!ymd.ok()) return std::nullopt;  // month 00 or 13, day 00, or a day the month lacks
    return std::chrono::sys_days{ymd}.time_since_epoch().count();
}

std::optional<rfc3339_time> parse_rfc3339(std::string_view s) noexcept {
    if (s.size() < 20) return std::nullopt;
    const auto day = parse_rfc3339_date(s.substr(0, 10));
    if (!day || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || s[13] != ':' || s[16] != ':') return std::nullopt;
    const auto hh = digits(s, 11, 2);
    const auto mm = digits(s, 14, 2);
    const auto ss = digits(s, 17, 2);
    if (!hh || !mm || !ss || *hh > 23 || *mm > 59 || *ss > 60) return std::nullopt;
    std::size_t i = 19;
    std::int64_t frac_us = 0;
    if (s[i] == '.') {
        const std::size_t first = ++i;
        std::int64_t scale = 100'000;
        for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
            frac_us += (s[i] - '0') * scale;  // past the sixth digit scale is 0: dropped
            scale /= 10;
        }
        if (i == first) return std::nullopt;  // "." needs a digit
    }
    const auto offset = offset_at(s, i);
    if (!offset) return std::nullopt;
    const std::int64_t secs = *day * 86'400 + *hh * 3600 + *mm * 60 + *ss - *offset;
    return rfc3339_time{secs * 1'000'000 + frac_us, *offset};
}

std::optional<std::int64_t> parse_rfc3339_us(std::string_view s) noexcept {
    const auto t = parse_rfc3339(s);
    if (!t) return std::nullopt;
    return t->utc_us;
}

civil_date civil_from_days(std::int64_t days) noexcept {
    const std::int64_t z = days + 719'468;
    const std::int64_t era = (z >= 0 ? z : z - 146'096) / 146'097;
    const auto doe = static_cast<unsigned>(z - era * 146'097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36'524 - doe / 146'096) / 365;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    const unsigned d = doy - (153 * mp + 2) / 5 + 1;
    const unsigned m = mp < 10 ? mp + 3 : mp - 9;
    return {static_cast<std::int64_t>(yoe) + era * 400 + (m <= 2 ? 1 : 0), m, d};
}

std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) noexcept {
    y -= m <= 2;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146'097 + static_cast<std::int64_t>(doe) - 719'468;
}

void append_rfc3339_date(std::string& out, std::int64_t days) {
    const auto c = civil_from_days(days);
    if (c.year < 0 || c.year > 9999) {
        fmt::format_to(std::back_inserter(out), "{:04}", c.year);
    } else {
        char y[4];
        put_digits(y, static_cast<std::uint32_t>(c.year), 4);
        out.append(y, 4);
    }
    char b[6];  // -MM-DD
    b[0] = '-';
    put_digits(b + 1, c.month, 2);
    b[3] = '-';
    put_digits(b + 4, c.day, 2);
    out.append(b, sizeof b);
}

void append_rfc3339(std::string& out, std::int64_t secs, std::uint32_t frac, int frac_digits) {
    std::int64_t days = secs / 86'400;
    std::int64_t sod = secs % 86'400;
    if (sod < 0) sod += 86'400, days -= 1;
    append_rfc3339_date(out, days);
    char b[18];  // THH:MM:SS.ffffffZ at most (fraction up to 9 digits below)
    const auto s = static_cast<std::uint32_t>(sod);
    b[0] = 'T';
    put_digits(b + 1, s / 3600, 2);
    b[3] = ':';
    put_digits(b + 4, s / 60 % 60, 2);
    b[6] = ':';
    put_digits(b + 7, s % 60, 2);
    std::size_t n = 9;
    if (frac_digits > 0) {
        b[n++] = '.';
        out.append(b, n);
        char f[9];
        const int w = frac_digits > 9 ? 9 : frac_digits;
        put_digits(f, frac, w);
        out.append(f, static_cast<std::size_t>(w));
        out += 'Z';
        return;
    }
    b[n++] = 'Z';
    out.append(b, n);
}

}  // namespace iss
