// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Reading the record placeholders' values out of one message (key_template.hpp renders them):
/// the record time (`naming.time_source`) as a local time in `naming.timezone`, its time bucket,
/// user header values and JSON payload fields.
///
/// Everything here is a function of the message's own bytes, never of the clock, so a replay
/// after a crash reads the same values and renders the same keys (the delivery contract in
/// pipeline/delivery.hpp depends on it).

#include "format/error.hpp"
#include "format/key_template.hpp"
#include "proto/wire.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace date {
class time_zone;
}

namespace iss::format {

/// `naming.time_source`: where a message's record time comes from.
struct time_source {
    enum class kind : std::uint8_t {
        timestamp,         ///< Iggy's append time (the default; never goes back within a partition)
        origin_timestamp,  ///< the producer's timestamp (µs)
        field,             ///< a JSON payload field: epoch milliseconds (a number) or an RFC 3339 string
        header,            ///< a user header: epoch milliseconds (a number kind or a decimal string) or RFC 3339
                           ///< (RFC 3339 by the rules of common/rfc3339.hpp, as timestamp columns read it)
    };
    kind what = kind::timestamp;
    std::string arg;  ///< PATH or NAME for field / header
    friend bool operator==(const time_source&, const time_source&) = default;
};

/// Parses `timestamp`, `origin_timestamp`, `field:PATH`, `header:NAME`; errc::bad_key_template
/// with a sentence naming the accepted forms otherwise.
[[nodiscard]] result<time_source> parse_time_source(std::string_view text);

/// The parts of a message the record placeholders read.
struct record_input {
    std::uint64_t timestamp_us = 0;         ///< Iggy append time, µs since the Unix epoch
    std::uint64_t origin_timestamp_us = 0;  ///< producer time, µs
    proto::bytes_view payload;
    proto::bytes_view user_headers;  ///< the encoded user-headers block
};

/// The value of user header `name` (a string key) in `block` as key text: strings as they
/// are, integers and floats in decimal, bool `true`/`false`, raw bytes in lower-case hex.
/// nullopt when absent; errc::bad_headers when the block is malformed.
[[nodiscard]] result<std::optional<std::string>> header_text(proto::bytes_view block, std::string_view name);

/// Reads the record values one template needs, for one message at a time. Keeps a JSON parser
/// and a buffer between calls (no allocation per message once warm). Not thread-safe.
class record_reader {
public:
    /// \param tz the zone for local times (date::locate_zone; outlives the reader).
    record_reader(const key_template& t, time_source source, const date::time_zone* tz, std::string missing);
    record_reader(record_reader&&) noexcept;
    record_reader& operator=(record_reader&&) noexcept;
    ~record_reader();

    /// Fills `out` for message `in`. The time is read only when the template has a time field;
    /// when it cannot be read (field missing, not a number or RFC 3339 string) the result is
    /// errc::bad_record_time naming the source: the message then follows
    /// `delivery.on_bad_message`. Missing headers or fields are not errors: they render
    /// `naming.missing_value`. A malformed user-headers block is errc::bad_headers.
    /// \param bucket set to the message's time bucket (see `time_bucket`) when a time field is used.
    result<void> read(const record_input& in, record_values& out, std::optional<std::int64_t>& bucket);

    /// The record time (µs since the epoch) of `in` per the time source.
    result<std::int64_t> record_time_us(const record_input& in);

    /// The JSON text of the value at dotted `path` in `payload`: a string unescaped, a number
    /// as written, `true`/`false`; nullopt when the payload is not JSON or the value is
    /// missing, null, an object or an array.
    std::optional<std::string> field_text(proto::bytes_view payload, std::string_view path);

    [[nodiscard]] const key_template& key() const noexcept { return t_; }
    [[nodiscard]] const std::string& missing() const noexcept { return missing_; }

private:
    struct impl;
    key_template t_;
    time_source source_;
    const date::time_zone* tz_;
    std::string missing_;
    std::unique_ptr<impl> impl_;
};

/// `t` (µs since the epoch) as local time in `tz`.
[[nodiscard]] local_time to_local_time(std::int64_t t_us, const date::time_zone& tz);

/// An id of the time bucket of `t_us` for `unit` in `tz`, increasing with time: for minutes
/// and hours the UTC second at which the local minute/hour began (so the two 02 hours of a
/// fall-back night are two buckets), for days the local day number, for months year*12+month,
/// for years the year. 0 for time_unit::none.
[[nodiscard]] std::int64_t time_bucket(std::int64_t t_us, time_unit unit, const date::time_zone& tz);

}  // namespace iss::format
