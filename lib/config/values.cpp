// SPDX-License-Identifier: Apache-2.0
// Scalar value syntax: sizes, durations, ${VAR} interpolation.
#include "config/config.hpp"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <cstdlib>
#include <limits>

namespace iss::config {

namespace {

__extension__ typedef unsigned __int128 u128;  // exact arithmetic for 1.5GiB-style values

const char* config_message(int ev) noexcept {
    switch (static_cast<errc>(ev)) {
        case errc::invalid_value: return "invalid value";
        case errc::unset_variable: return "environment variable is not set";
        case errc::invalid_config: return "invalid configuration";
        case errc::unreadable_file: return "cannot read the configuration file";
    }
    return nullptr;
}

std::string lower(std::string_view s) {
    std::string out{s};
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

error bad(std::string what) { return error{errc::invalid_value, std::move(what)}; }

/// A decimal number (`1_000`, `1.5`) read from `s` at `i`, which moves past it.
struct decimal {
    u128 whole = 0;
    u128 frac = 0;  ///< the fraction's digits as an integer, over `den`
    u128 den = 1;
    bool any = false;        ///< at least one digit
    bool too_large = false;  ///< the whole part passed `max_whole` (reading stopped there)
};
/// Reads digits (and `_` between them), then a `.` and more digits; fraction digits beyond
/// `max_den` are dropped.
decimal read_decimal(std::string_view s, std::size_t& i, u128 max_whole, u128 max_den) {
    decimal d;
    for (; i < s.size() && (is_digit(s[i]) || s[i] == '_'); ++i) {
        if (s[i] == '_') continue;
        d.any = true;
        d.whole = d.whole * 10 + static_cast<unsigned>(s[i] - '0');
        if (d.whole > max_whole) {
            d.too_large = true;
            return d;
        }
    }
    if (i < s.size() && s[i] == '.') {
        ++i;
        for (; i < s.size() && is_digit(s[i]); ++i) {
            d.any = true;
            if (d.den < max_den) {
                d.frac = d.frac * 10 + static_cast<unsigned>(s[i] - '0');
                d.den *= 10;
            }
        }
    }
    return d;
}

}  // namespace

const boost::system::error_category& config_category() noexcept {
    static const simple_category cat{"config", config_message};
    return cat;
}

result<std::uint64_t> parse_size(std::string_view text) {
    const std::string_view s = trim(text);
    std::size_t i = 0;
    const decimal d =
        read_decimal(s, i, std::numeric_limits<std::uint64_t>::max(), static_cast<u128>(1'000'000'000'000'000'000ULL));
    if (d.too_large) return bad(fmt::format("'{}' is too large", text));
    if (!d.any) return bad(fmt::format("'{}' is not a size (write e.g. 8MiB, 8MB or a number of bytes)", text));
    const std::string unit = lower(trim(s.substr(i)));
    static constexpr std::array<std::pair<std::string_view, std::uint64_t>, 11> units{{
        {"", 1},
        {"b", 1},
        {"kb", 1000ULL},
        {"mb", 1000ULL * 1000},
        {"gb", 1000ULL * 1000 * 1000},
        {"tb", 1000ULL * 1000 * 1000 * 1000},
        {"kib", kib},
        {"mib", mib},
        {"gib", gib},
        {"tib", 1024 * gib},
        {"bytes", 1},
    }};
    for (const auto& [name, mult] : units) {
        if (name != unit) continue;
        const u128 total = d.whole * mult + d.frac * mult / d.den;
        if (d.frac * mult % d.den != 0) return bad(fmt::format("'{}' is not a whole number of bytes", text));
        if (total > std::numeric_limits<std::uint64_t>::max()) return bad(fmt::format("'{}' is too large", text));
        return static_cast<std::uint64_t>(total);
    }
    if (unit == "k" || unit == "m" || unit == "g" || unit == "t" || unit == "ki" || unit == "mi" || unit == "gi")
        return bad(fmt::format("'{}': the unit is ambiguous; write {}iB (powers of 1024) or {}B (powers of 1000)", text,
                               std::string(1, static_cast<char>(std::toupper(unit[0]))),
                               std::string(1, static_cast<char>(std::toupper(unit[0])))));
    return bad(fmt::format("'{}' has an unknown unit '{}' (units: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)", text,
                           trim(s.substr(i))));
}

result<milliseconds> parse_duration(std::string_view text) {
    const std::string_view s = trim(text);
    if (s.empty()) return bad("empty duration (write e.g. 250ms, 10s, 10m, 1h, 1d)");
    bool all_digits = true;
    for (char c : s) all_digits = all_digits && (is_digit(c) || c == '_');
    if (all_digits) {
        if (s.find_first_not_of("0_") == std::string_view::npos) return milliseconds{0};
        return bad(fmt::format("'{}' needs a unit: {}s, {}ms, {}m ... (units: ms, s, m, h, d)", text, s, s, s));
    }
    static constexpr std::array<std::pair<std::string_view, std::int64_t>, 9> units{{
        {"ms", 1},
        {"s", 1000},
        {"sec", 1000},
        {"m", 60'000},
        {"min", 60'000},
        {"h", 3'600'000},
        {"hr", 3'600'000},
        {"d", 86'400'000},
        {"us", 0},
    }};
    u128 total_us = 0;
    std::size_t i = 0;
    while (i < s.size()) {
        if (s[i] == ' ') {
            ++i;
            continue;
        }
        if (s[i] == '-') return bad(fmt::format("'{}': a duration cannot be negative", text));
        const decimal d = read_decimal(s, i, static_cast<u128>(1) << 64, 1'000'000'000'000ULL);
        if (d.too_large) return bad(fmt::format("'{}' is too large", text));
        if (!d.any) return bad(fmt::format("'{}' is not a duration (write e.g. 250ms, 10s, 10m, 1h, 1d)", text));
        const std::size_t u0 = i;
        while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
        const std::string_view unit = s.substr(u0, i - u0);
        if (unit.empty()) return bad(fmt::format("'{}': every number needs a unit (ms, s, m, h, d)", text));
        std::int64_t mult_ms = -1;
        for (const auto& [name, m] : units)
            if (name == unit) mult_ms = m;
        u128 mult_us = 0;
        if (unit == "us") mult_us = 1;
        else if (mult_ms > 0) mult_us = static_cast<u128>(mult_ms) * 1000;
        else
            return bad(fmt::format("'{}' has an unknown unit '{}' (units: ms, s, m, h, d; M and Y are not allowed)",
                                   text, unit));
        total_us += d.whole * mult_us + d.frac * mult_us / d.den;
        if (total_us > static_cast<u128>(std::numeric_limits<std::int64_t>::max()))
            return bad(fmt::format("'{}' is too large", text));
    }
    if (total_us % 1000 != 0) return bad(fmt::format("'{}': the smallest step is 1ms", text));
    return milliseconds{static_cast<std::int64_t>(total_us / 1000)};
}

std::string format_size(std::uint64_t bytes) {
    if (bytes == 0) return "0";
    static constexpr std::array<std::pair<std::string_view, std::uint64_t>, 4> units{
        {{"TiB", 1024 * gib}, {"GiB", gib}, {"MiB", mib}, {"KiB", kib}}};
    for (const auto& [name, mult] : units)
        if (bytes % mult == 0) return fmt::format("{}{}", bytes / mult, name);
    return fmt::format("{}", bytes);
}

std::string format_duration(milliseconds d) {
    auto ms = d.count();
    if (ms == 0) return "0s";
    std::string out;
    if (ms < 0) {
        out += '-';
        ms = -ms;
    }
    if (ms % 1000 != 0 && ms > 1000) return out + fmt::format("{}ms", ms);
    static constexpr std::array<std::pair<std::string_view, std::int64_t>, 5> units{
        {{"d", 86'400'000}, {"h", 3'600'000}, {"m", 60'000}, {"s", 1000}, {"ms", 1}}};
    for (const auto& [name, mult] : units) {
        if (ms >= mult) {
            out += fmt::format("{}{}", ms / mult, name);
            ms %= mult;
        }
    }
    return out;
}

result<std::string> interpolate(std::string_view s, const env_lookup& env) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        if (s[i] == '$' && s.substr(i, 3) == "$${") {
            out += "${";
            i += 3;
            continue;
        }
        if (s[i] != '$' || s.substr(i, 2) != "${") {
            out += s[i++];
            continue;
        }
        const auto close = s.find('}', i + 2);
        if (close == std::string_view::npos)
            return error{errc::invalid_value, "'${' without a closing '}' (write $${ for a literal ${)"};
        const std::string_view inner = s.substr(i + 2, close - i - 2);
        const auto sep = inner.find(":-");
        const std::string_view name = inner.substr(0, sep);
        bool valid = !name.empty() && !is_digit(name.front());
        for (char c : name) valid = valid && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
        if (!valid)
            return error{errc::invalid_value,
                         fmt::format("'${{{}}}' is not a variable reference (${{NAME}} or ${{NAME:-default}}, NAME "
                                     "of letters, digits and _)",
                                     inner)};
        auto v = env ? env(name) : std::nullopt;
        if (sep != std::string_view::npos) {
            if (!v || v->empty()) v = std::string{inner.substr(sep + 2)};
        } else if (!v) {
            return error{
                errc::unset_variable,
                fmt::format("environment variable {} is not set (write ${{{}:-}} to allow it unset)", name, name)};
        }
        out += *v;
        i = close + 1;
    }
    return out;
}

env_lookup process_environment() {
    return [](std::string_view name) -> std::optional<std::string> {
        const std::string n{name};
        const char* v = std::getenv(n.c_str());
        if (v == nullptr) return std::nullopt;
        return std::string{v};
    };
}

std::string to_string(const problem& p) {
    std::string out = p.path.empty() ? p.message : p.path + ": " + p.message;
    if (p.line > 0) out += fmt::format(" (line {})", p.line);
    return out;
}

}  // namespace iss::config
