// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Logging over fmt (docs/architecture.md §8.5): one named logger per module (`s3`, `sigv4`, `iggy`,
/// `pipeline`, `config`, `app`), one line per event on stderr (journald, Docker), as text or
/// JSON lines. Every line may carry context fields (bucket, key, stream/topic/partition/offset).
///
/// Text:  `2026-11-30T01:02:03.000004Z warn  s3: retrying bucket=lake attempt=2/10`
/// JSON:  `{"ts":"2026-11-30T01:02:03.000004Z","level":"warn","logger":"s3","msg":"retrying","bucket":"lake","attempt":"2/10"}`
///
/// Field values are formatted with fmt, so secret types (common/types.hpp) print `****`.
/// The level and format are set once at start by the daemon (`configure`); the sink and the
/// clock can be replaced for tests.

#include "common/clock.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace iss::log {

enum class level : std::uint8_t { trace, debug, info, warn, error, off };
enum class output_format : std::uint8_t { text, json };

/// "trace", "debug", "info", "warn", "error", "off".
[[nodiscard]] std::string_view to_string(level l) noexcept;
/// Parses a level name as written by `to_string` (also "warning"); nullopt when unknown.
[[nodiscard]] std::optional<level> parse_level(std::string_view s) noexcept;
/// "text" or "json"; nullopt when unknown.
[[nodiscard]] std::optional<output_format> parse_format(std::string_view s) noexcept;

/// A context field: a key and its already formatted value.
struct field {
    std::string key;
    std::string value;
    friend bool operator==(const field&, const field&) = default;
};
using fields = std::vector<field>;

/// A field from any fmt-formattable value.
template <class V>
[[nodiscard]] field kv(std::string_view key, const V& value) {
    return field{std::string{key}, fmt::format("{}", value)};
}

/// One event, before it is turned into a line.
struct record {
    clock::system_time time;
    level lvl = level::info;
    std::string_view logger;
    std::string_view message;
    std::span<const field> context;  ///< the logger's own fields
    std::span<const field> fields;   ///< this event's fields
};

/// The line for `r` in format `f`, without a trailing newline. Text quotes values that are
/// empty or contain spaces, quotes, `=` or control characters; JSON escapes per RFC 8259.
[[nodiscard]] std::string format_record(const record& r, output_format f);

/// Sets the minimum level and the output format for all loggers (thread-safe).
void configure(level min_level, output_format f);
[[nodiscard]] level min_level() noexcept;
/// Replaces where lines go (each call gets one line without newline); an empty function
/// restores stderr. For tests.
void set_sink(std::function<void(std::string_view)> sink);
/// Replaces the clock used for timestamps (nullptr: the real clock). For tests.
void set_clock(const iss::clock* c);

/// A named logger with optional context fields. Cheap to copy; `with` adds fields.
class logger {
public:
    explicit logger(std::string name, fields context = {});
    /// A child logger with `extra` fields appended to this one's.
    [[nodiscard]] logger with(fields extra) const;
    [[nodiscard]] bool enabled(level l) const noexcept { return l >= min_level() && l != level::off; }
    [[nodiscard]] const std::string& name() const noexcept { return name_; }

    /// Emits `message` at `l` with `extra` fields, if `l` is enabled.
    void write(level l, std::string_view message, std::span<const field> extra = {}) const;

    template <class... A>
    void log(level l, fmt::format_string<A...> f, A&&... a) const {
        if (enabled(l)) write(l, fmt::vformat(f, fmt::make_format_args(a...)));
    }
    template <class... A>
    void log(level l, const fields& extra, fmt::format_string<A...> f, A&&... a) const {
        if (enabled(l)) write(l, fmt::vformat(f, fmt::make_format_args(a...)), extra);
    }

#define ISS_LOG_LEVEL_FN(NAME)                                                   \
    template <class... A>                                                        \
    void NAME(fmt::format_string<A...> f, A&&... a) const {                      \
        log(level::NAME, f, std::forward<A>(a)...);                              \
    }                                                                            \
    template <class... A>                                                        \
    void NAME(const fields& extra, fmt::format_string<A...> f, A&&... a) const { \
        log(level::NAME, extra, f, std::forward<A>(a)...);                       \
    }
    ISS_LOG_LEVEL_FN(trace)
    ISS_LOG_LEVEL_FN(debug)
    ISS_LOG_LEVEL_FN(info)
    ISS_LOG_LEVEL_FN(warn)
    ISS_LOG_LEVEL_FN(error)
#undef ISS_LOG_LEVEL_FN

private:
    std::string name_;
    fields context_;
};

/// Appends `s` to `out` as the body of a JSON string (no quotes), escaping per RFC 8259.
/// Invalid UTF-8 bytes are replaced by U+FFFD so the line stays valid JSON.
void append_json_escaped(std::string& out, std::string_view s);

/// RFC 3339 UTC with microseconds: `2026-11-30T01:02:03.000004Z`.
[[nodiscard]] std::string format_rfc3339_micros(clock::system_time t);

}  // namespace iss::log
