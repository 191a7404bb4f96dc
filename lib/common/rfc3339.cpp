// SPDX-License-Identifier: Apache-2.0
#include "common/rfc3339.hpp"

#include <chrono>

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

}  // namespace iss
