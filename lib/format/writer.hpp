// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Record writers: Iggy messages (`proto::message_view`) -> the bytes of ONE object, streamed.
///
/// ```
/// format::writer w{opts};                 // one per open object (reusable: begin again after finish)
/// std::string buf;                         // the pipeline drains `buf` into part buffers
/// w.begin(buf);                            // json_array: "["
/// for (msg : poll) {
///     auto r = w.append(msg, {stream, topic, partition}, buf);
///     if (!r) { /* a bad message: buf is exactly as before the call */ }
///     if (w.bytes_out() >= max_bytes) ...  // rotate on the object's size as uploaded
/// }
/// w.finish(buf);                           // json_array: "]"; gzip: the rest + trailer
/// ```
///
/// Formats (one record per message):
/// - `json_lines` (`.jsonl`): one JSON envelope per line, each ending in `\n`.
/// - `json_array` (`.json`): `[`, the envelopes separated by `,` and newlines, `]`; valid JSON
///   with zero records (`[]`) and with one.
/// - `raw` (`.bin`): the payloads as they are, with `separator` between two payloads (not
///   after the last one); the separator may be empty.
///
/// The envelope, fields in this order: `stream`, `topic`, `partition_id`, `offset`, `id`
/// (the u128 as 32 lower-case hex digits, most significant first), `timestamp` (µs, integer),
/// `timestamp_iso` (RFC 3339 UTC with µs), `origin_timestamp` (µs as sent), `headers`,
/// `payload`. `metadata = false` keeps only `headers` (if on) and `payload`.
///
/// `headers`: an object. A string key is written as it is; a key of another kind as
/// `<kind>:<text>` (`int32:7`, `bool:true`, `raw:<base64>`); a string key that itself starts
/// with `<kind>:` is written with `string:` in front (`string:int32:7`), so string and typed
/// keys can never collide. Values: string -> string; bool -> true/false; 8..32-bit integers -> numbers;
/// float32/float64 -> numbers in shortest round-trip text (float32 as its own shortest text,
/// 0.1f is `0.1`), NaN and infinities as the strings `"NaN"`, `"Infinity"`, `"-Infinity"`;
/// 64- and 128-bit integers -> decimal strings (JSON readers round numbers above 2^53); raw ->
/// base64 string. No headers: `"headers": {}`. Invalid UTF-8 in a string key or value is
/// replaced by U+FFFD.
///
/// `payload` modes: `automatic` embeds valid JSON as JSON (checked by simdjson, minified so
/// that a record is one line), else valid UTF-8 as a JSON string, else base64 (a string);
/// `json` requires valid JSON and refuses anything else as a bad message
/// (`errc::bad_payload`); `string` always writes a string (invalid UTF-8 replaced by U+FFFD);
/// `base64` always writes base64.
///
/// Typed formats (`table.hpp`), one row per message with the columns of `schema` (or, when it
/// is empty, `envelope_schema(headers, payload)`), read by `row_reader` (`schema.hpp`):
/// - `csv` (`.csv`, `text/csv`): RFC 4180 with a header row; compression as for JSON.
/// - `parquet` (`.parquet`, `application/vnd.apache.parquet`): compressed inside, per page;
///   a row group is appended to `out` once `parquet.row_group_size` bytes are buffered, and
///   at `finish` with the footer. `buffered_bytes()` is what is held meanwhile.
/// - `avro` (`.avro`, `application/avro`): an object container file, compressed inside per
///   block.
/// `compression` must be `none` for parquet and avro (the configuration refuses it).
///
/// Compression (`compressor.hpp`) is a separate stage: records are formatted, then fed to the
/// compressor, whose output is appended to `out`. `bytes_out()` counts bytes appended to
/// `out` (the object as uploaded); with gzip it lags the input by the block being gathered (at
/// most 256 KiB plus one record), with zstd by its block being gathered (at most 128 KiB plus
/// one record) and what zstd holds; rotation on `max_bytes` may overshoot by that.

#include "format/compressor.hpp"
#include "format/error.hpp"
#include "format/json.hpp"
#include "format/schema.hpp"
#include "format/table.hpp"
#include "proto/message.hpp"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace iss::format {

enum class record_format : std::uint8_t { json_lines, json_array, raw, csv, parquet, avro };

/// The formats written from a schema of columns (`format.schema`, table.hpp): CSV, Parquet, Avro.
[[nodiscard]] constexpr bool is_typed(record_format f) noexcept {
    return f == record_format::csv || f == record_format::parquet || f == record_format::avro;
}
/// The formats that compress inside the file (Parquet's pages, Avro's blocks): an outer
/// `format.compression` would break the file, so it is none for them.
[[nodiscard]] constexpr bool compresses_inside(record_format f) noexcept {
    return f == record_format::parquet || f == record_format::avro;
}
enum class payload_mode : std::uint8_t { automatic, json, string, base64 };

/// What a writer writes. The daemon fills it from `config::format_section`.
struct writer_options {
    record_format format = record_format::json_lines;
    format::compression compression = format::compression::none;
    bool metadata = true;  ///< JSON: envelope fields besides payload
    bool headers = true;   ///< JSON: the headers object
    payload_mode payload = payload_mode::automatic;
    std::string separator = "\n";  ///< raw: between two payloads
    int level = 0;                 ///< compression level; 0: the codec's default (gzip 6, zstd 3)
    std::vector<column> schema;    ///< typed formats: the columns; empty: the envelope schema
    parquet_options parquet;
    csv_options csv;
    avro_options avro;
};

/// The columns a typed format writes: `o.schema`, or the envelope schema when it is empty.
[[nodiscard]] std::vector<column> effective_schema(const writer_options& o);

/// The object's extension without the leading dot, for `{ext}`: `jsonl`, `json`, `bin`, plus
/// `.gz` with gzip (`jsonl.gz`) or `.zst` with zstd; `csv`; `parquet` and `avro` (never
/// compressed outside).
[[nodiscard]] std::string extension(const writer_options& o);
/// The object's Content-Type: `application/x-ndjson`, `application/json`,
/// `application/octet-stream`, `text/csv`, `application/vnd.apache.parquet`,
/// `application/avro`; `application/gzip` with gzip, `application/zstd` with zstd
/// (and no Content-Encoding).
[[nodiscard]] std::string_view content_type(const writer_options& o);

/// Bytes of memory one writer with these options holds for its compressor at most, beyond
/// `buffered_bytes()` (what it holds now: `codec_bytes()`): the gzip or zstd compressor's
/// (compressor.hpp: `gzip_compressor_memory`, `zstd_compressor_memory`; zstd level 3:
/// 3.7 MiB, 19: 89.8 MiB); 0 without compression and for Parquet and Avro (their pages and
/// blocks are compressed one at a time, with no state kept between them).
[[nodiscard]] std::uint64_t codec_memory(const writer_options& o) noexcept;

/// Where a message came from (its names are in the envelope).
struct record_source {
    std::string_view stream;
    std::string_view topic;
    std::uint32_t partition = 0;
};

/// One format's encoding of one object, the one interface every format is behind: json_lines
/// and json_array (the envelope), raw, and the typed formats (csv, parquet, avro: `row_reader`
/// turns each message into a row, then their `table_writer` writes it). `writer` drives one
/// and adds what all formats share: the compression stage and the counters. One object at a
/// time, reusable (`begin` after `finish`); not thread-safe.
class record_writer {
public:
    virtual ~record_writer() = default;
    /// Starts an object: json_array `[`; csv the header row; parquet `PAR1`; avro the
    /// container header; nothing for json_lines and raw.
    virtual void begin(std::string& out) = 0;
    /// Appends one record. On error (a bad message) the record is not counted and `out` may
    /// hold part of it: the caller cuts `out` back. Output may lag (Parquet appends a row
    /// group once it is full, Avro a block).
    virtual result<void> append(const proto::message_view& m, const record_source& src, std::string& out) = 0;
    /// Ends the object: json_array `]`; what parquet and avro hold, and their trailer.
    virtual void finish(std::string& out) = 0;
    /// Bytes held for the object and not yet appended to `out` (Parquet's open row group).
    [[nodiscard]] virtual std::uint64_t buffered_bytes() const noexcept { return 0; }
    /// True when `append` writes each record whole and at once (JSON, raw), so that `writer`
    /// formats it straight into a block compressor's input (`compressor::staging`, no copy);
    /// false: through `compressor::write`, which cuts its input into exact blocks (csv: its
    /// compressed objects stay byte for byte what they were).
    [[nodiscard]] virtual bool formats_in_place() const noexcept { return false; }
    /// Typed formats: the cells of the record the last successful `append` wrote (column
    /// order, as `row_reader` gave them), valid until the next call; empty otherwise.
    [[nodiscard]] virtual std::span<const cell> last_row() const noexcept { return {}; }
    /// After `finish`, typed formats: `table_writer::column_bytes()` (Parquet: bytes stored
    /// per leaf column); empty otherwise.
    [[nodiscard]] virtual std::vector<std::int64_t> column_bytes() const { return {}; }
};

/// The record writer of `o.format` (record_writers.cpp), before compression: the only place
/// that chooses by format.
[[nodiscard]] std::unique_ptr<record_writer> make_record_writer(const writer_options& o);

/// Writes one object at a time. Not thread-safe. Holds a payload checker and, with gzip, a
/// 256 KiB input block (the deflate compressor is shared per thread), or a zstd context and
/// its 128 KiB input block, reused from object to object.
class writer {
public:
    explicit writer(writer_options o);
    ~writer();
    writer(writer&&) noexcept;
    writer& operator=(writer&&) noexcept;

    /// Starts an object: resets the counters and appends the format's prologue (json_array:
    /// `[`). \pre no object open, or the previous one finished.
    void begin(std::string& out);
    /// Appends one record. On error (`errc::bad_payload` under `payload: json`,
    /// `errc::bad_headers` for a malformed headers block when headers are written) `out` and
    /// the writer are exactly as before the call. The error's detail names the offset.
    result<void> append(const proto::message_view& m, const record_source& src, std::string& out);
    /// Ends the object: epilogue (json_array: `]`), compressor flush and trailer.
    void finish(std::string& out);

    [[nodiscard]] std::uint64_t records() const noexcept { return records_; }
    /// Bytes of formatted records (before compression) in the current object.
    [[nodiscard]] std::uint64_t bytes_in() const noexcept { return bytes_in_; }
    /// Bytes appended to `out` for the current object (after compression).
    [[nodiscard]] std::uint64_t bytes_out() const noexcept { return bytes_out_; }
    /// Bytes held for the current object and not yet in `out` (Parquet: the open row group,
    /// uncompressed); 0 for the other formats.
    [[nodiscard]] std::uint64_t buffered_bytes() const noexcept { return format_->buffered_bytes(); }
    /// Bytes of memory the compressor holds now (compressor::memory: its block and, with
    /// zstd, its context as allocated); at most `codec_memory(options())`.
    [[nodiscard]] std::uint64_t codec_bytes() const noexcept { return compressor_ ? compressor_->memory() : 0; }
    [[nodiscard]] const writer_options& options() const noexcept { return o_; }
    /// Typed formats: the cells of the record the last successful `append` wrote (column
    /// order, as `row_reader` gave them), valid until the next call; empty otherwise.
    [[nodiscard]] std::span<const cell> last_row() const noexcept {
        return format_ ? format_->last_row() : std::span<const cell>{};
    }
    /// After `finish`, typed formats: `table_writer::column_bytes()` (Parquet: bytes stored
    /// per leaf column); empty otherwise.
    [[nodiscard]] std::vector<std::int64_t> column_bytes() const {
        return format_ ? format_->column_bytes() : std::vector<std::int64_t>{};
    }
    [[nodiscard]] std::string extension() const { return format::extension(o_); }
    [[nodiscard]] std::string_view content_type() const { return format::content_type(o_); }

private:
    void emit(std::string_view bytes, std::string& out);

    writer_options o_;
    std::unique_ptr<record_writer> format_;  ///< the format's encoding, before compression
    std::unique_ptr<compressor> compressor_;
    std::string scratch_;  ///< a prologue, an epilogue, or one record formatted for `compressor::write`
    std::uint64_t records_ = 0;
    std::uint64_t bytes_in_ = 0;
    std::uint64_t bytes_out_ = 0;
};

}  // namespace iss::format
