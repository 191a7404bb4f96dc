// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The column schema of the typed formats (Parquet, Avro, CSV): which columns a record has,
/// their types, and where each value comes from in an Iggy message.
///
/// A column is `{name, type, from, nullable}`:
/// - `type`: `string`, `int32`, `int64`, `float` (32-bit), `double`, `boolean`,
///   `timestamp_ms`, `timestamp_us` (since the Unix epoch, UTC), `date` (days since the
///   epoch), `binary`, `json` (the minified JSON text of a sub-tree). `map` (string to string)
///   exists only in the envelope schema, for `headers`.
/// - `from`: `payload:PATH` (a dotted path into the JSON payload, `payload:.` for the whole
///   payload), `header:NAME` (a user header with the string key NAME), or an envelope field:
///   `stream`, `topic`, `partition`, `offset`, `id`, `timestamp`, `origin_timestamp`,
///   `payload`.
/// - `nullable` (default true): a missing value (absent path, JSON `null`, absent header) is
///   null; with `nullable: false` it is a bad message, as is a value of the wrong type.
///
/// Conversions (`row_reader`): a JSON integer fits `int32` / `int64` when in range, any JSON
/// number fits `float` / `double`; `timestamp_*` take a JSON integer (in the column's unit) or
/// an RFC 3339 string (`2026-11-30T01:02:03.5Z`, `+01:00` offsets); `date` takes an integer
/// (days) or `YYYY-MM-DD`; `string` and `binary` take a JSON string (its UTF-8 bytes);
/// `json` takes any JSON value. Header values convert by kind (integers to integer columns
/// in range, floats to float columns, bool, string to string/json/binary, raw to binary); a
/// string header also fills a number or boolean column when its text parses as one.
/// Envelope fields: `stream`, `topic` are strings; `partition`, `offset` integers; `id` a
/// string (32 hex digits) or 16 bytes (binary, most significant first); `timestamp`,
/// `origin_timestamp` µs (`timestamp_us`, `int64`, or `timestamp_ms` divided by 1000);
/// `payload` string (invalid UTF-8 is a bad message), binary, or json (must be valid JSON).

#include "common/error.hpp"
#include "proto/message.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace iss::format {

enum class column_type : std::uint8_t {
    string,
    int32,
    int64,
    float32,
    float64,
    boolean,
    timestamp_ms,
    timestamp_us,
    date,
    binary,
    json,
    map,  ///< string -> string (the envelope's `headers` only)
};

/// Where a column's value comes from.
enum class column_source : std::uint8_t {
    payload_path,  ///< `payload:a.b.c` (JSON payload)
    payload_root,  ///< `payload:.` (the whole JSON payload as a value)
    header,        ///< `header:NAME`
    stream,
    topic,
    partition,
    offset,
    id,
    timestamp,
    origin_timestamp,
    payload,  ///< the payload bytes (not parsed)
    headers,  ///< every user header (envelope schema, `map`)
};

/// One column of the schema.
struct column {
    std::string name;
    column_type type = column_type::string;
    column_source source = column_source::payload_path;
    std::string path;  ///< payload_path: the dotted path; header: the header name
    bool nullable = true;
    friend bool operator==(const column&, const column&) = default;
};

/// The schema's type name (`string`, `float`, `timestamp_ms`, `map<string,string>` ...).
[[nodiscard]] std::string_view to_string(column_type t) noexcept;
/// Parses a type name of `format.schema[].type` (not `map`).
[[nodiscard]] std::optional<column_type> parse_column_type(std::string_view s) noexcept;
/// The `from` text of a column (`payload:a.b`, `header:x`, `offset`).
[[nodiscard]] std::string from_text(const column& c);

/// Builds a column from the config's texts. Returns every problem found (one sentence each,
/// naming the value and what is allowed); empty on success, and then `out` is filled.
[[nodiscard]] std::vector<std::string> make_column(std::string_view name, std::string_view type, std::string_view from,
                                                   bool nullable, column& out);
/// Problems of a whole schema (duplicate names, an empty schema ...), one sentence each.
[[nodiscard]] std::vector<std::string> check_schema(std::span<const column> cols);

/// How the envelope schema writes the payload (mirrors `format.payload`).
enum class envelope_payload : std::uint8_t { string, json, binary };
/// The schema used without `format.schema`: stream, topic, partition_id, offset, id (string),
/// timestamp, origin_timestamp (timestamp_us), headers (map, when `headers`), payload
/// (string, or binary). All but headers' values are non-nullable.
[[nodiscard]] std::vector<column> envelope_schema(bool headers, envelope_payload payload);

/// One cell of a row. Views point into the message, the reader's parser or its scratch:
/// valid until the next `row_reader::read`.
struct cell {
    enum class kind : std::uint8_t { null, integer, real, boolean, bytes, map } k = kind::null;
    std::int64_t i = 0;  ///< integer, boolean (0/1), timestamps, date
    double d = 0;        ///< real (float columns hold the float's value)
    std::string_view s;  ///< bytes
    std::span<const std::pair<std::string_view, std::string_view>> entries;  ///< map
};

/// Turns a message into one row of cells, by the schema. Parses a JSON payload once per
/// message (simdjson DOM) when a column reads from it. Not thread-safe; one per writer.
class row_reader {
public:
    explicit row_reader(std::vector<column> cols);
    ~row_reader();
    row_reader(row_reader&&) noexcept;
    row_reader& operator=(row_reader&&) noexcept;

    /// The row of `m` (cells in column order), or `errc::bad_value` naming the column, the
    /// offset and what is wrong (`bad_payload` when a payload column needs JSON and the
    /// payload is not JSON; `bad_headers` for a malformed headers block).
    result<std::span<const cell>> read(const proto::message_view& m, std::string_view stream, std::string_view topic,
                                       std::uint32_t partition);
    [[nodiscard]] const std::vector<column>& columns() const noexcept { return cols_; }

private:
    struct impl;
    std::vector<column> cols_;
    std::unique_ptr<impl> impl_;
};

/// RFC 3339 UTC text (common/rfc3339.hpp's `append_rfc3339`) of a time in `unit_us` units (1000 for ms, 1 for µs) since the epoch,
/// with 3 (ms) or 6 (µs) fraction digits; negative times are supported.
void append_timestamp(std::string& out, std::int64_t v, bool millis);

}  // namespace iss::format
