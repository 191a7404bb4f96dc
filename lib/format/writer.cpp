// SPDX-License-Identifier: Apache-2.0
#include "format/writer.hpp"

#include "common/base64.hpp"

#include <fmt/format.h>

#include <cstring>

namespace iss::format {

namespace {

std::string_view text(proto::bytes_view b) { return proto::as_text(b); }

/// True when `k` starts with a header kind's name and ':' ("int32:7", "string:x").
bool looks_typed(std::string_view k) noexcept {
    const auto colon = k.find(':');
    if (colon == std::string_view::npos) return false;
    const std::string_view head = k.substr(0, colon);
    for (std::uint8_t kind = 1; kind <= 15; ++kind)
        if (proto::header_kind_name(static_cast<proto::header_kind>(kind)) == head) return true;
    return false;
}

}  // namespace

std::vector<column> effective_schema(const writer_options& o) {
    if (!o.schema.empty()) return o.schema;
    const envelope_payload p = o.payload == payload_mode::base64 ? envelope_payload::binary
                               : o.payload == payload_mode::json ? envelope_payload::json
                                                                 : envelope_payload::string;
    return envelope_schema(o.headers, p);
}

std::string extension(const writer_options& o) {
    std::string e;
    switch (o.format) {
        case record_format::csv: e = "csv"; break;
        case record_format::parquet: return "parquet";
        case record_format::avro: return "avro";
        case record_format::json_lines: e = "jsonl"; break;
        case record_format::json_array: e = "json"; break;
        case record_format::raw: e = "bin"; break;
    }
    if (o.compression == compression::gzip) e += ".gz";
    if (o.compression == compression::zstd) e += ".zst";
    return e;
}

std::string_view content_type(const writer_options& o) {
    if (o.format == record_format::parquet) return "application/vnd.apache.parquet";
    if (o.format == record_format::avro) return "application/avro";
    if (o.compression == compression::gzip) return "application/gzip";
    if (o.compression == compression::zstd) return "application/zstd";
    switch (o.format) {
        case record_format::json_lines: return "application/x-ndjson";
        case record_format::json_array: return "application/json";
        case record_format::raw: return "application/octet-stream";
        case record_format::csv: return "text/csv";
        default: break;
    }
    return "application/octet-stream";
}

namespace {
/// The compression level in force: `o.level`, or the codec's default for 0 (gzip 6, zstd 3).
int level_or_default(const writer_options& o) noexcept {
    return o.level > 0 ? o.level : o.compression == compression::gzip ? 6 : 3;
}
}  // namespace

std::uint64_t codec_memory(const writer_options& o) noexcept {
    if (o.format == record_format::parquet || o.format == record_format::avro) return 0;
    if (o.compression == compression::gzip) return gzip_compressor_memory(level_or_default(o));
    if (o.compression == compression::zstd) return zstd_compressor_memory(level_or_default(o));
    return 0;
}

writer::writer(writer_options o) : o_{std::move(o)} {
    switch (o_.format) {
        case record_format::csv: table_ = make_csv_writer(effective_schema(o_), o_.csv); break;
        case record_format::parquet: table_ = make_parquet_writer(effective_schema(o_), o_.parquet); break;
        case record_format::avro: table_ = make_avro_writer(effective_schema(o_), o_.avro); break;
        default: break;
    }
    if (table_) rows_ = std::make_unique<row_reader>(effective_schema(o_));
    // Parquet and Avro compress inside; an outer compressor would break the file.
    if (o_.format == record_format::parquet || o_.format == record_format::avro) o_.compression = compression::none;
    if (o_.compression == compression::gzip) compressor_ = make_gzip_compressor(level_or_default(o_));
    if (o_.compression == compression::zstd) compressor_ = make_zstd_compressor(level_or_default(o_));
}
writer::~writer() = default;
writer::writer(writer&&) noexcept = default;
writer& writer::operator=(writer&&) noexcept = default;

void writer::emit(std::string_view bytes, std::string& out) {
    bytes_in_ += bytes.size();
    const std::size_t before = out.size();
    if (compressor_) compressor_->write(bytes, out);
    else out.append(bytes);
    bytes_out_ += out.size() - before;
}

void writer::begin(std::string& out) {
    last_row_ = {};
    records_ = 0;
    bytes_in_ = 0;
    bytes_out_ = 0;
    if (compressor_) compressor_->reset();
    if (o_.format == record_format::json_array) emit("[", out);
    if (table_) {
        scratch_.clear();
        table_->begin(scratch_);
        emit(scratch_, out);
    }
}

void writer::finish(std::string& out) {
    if (o_.format == record_format::json_array) emit(records_ == 0 ? "]\n" : "\n]\n", out);
    if (table_) {
        scratch_.clear();
        table_->finish(scratch_);
        emit(scratch_, out);
    }
    if (compressor_) {
        const std::size_t before = out.size();
        compressor_->finish(out);
        bytes_out_ += out.size() - before;
    }
}

result<void> writer::append(const proto::message_view& m, const record_source& src, std::string& out) {
    if (table_) {
        auto row = rows_->read(m, src.stream, src.topic, src.partition);
        if (!row) return row.error();
        last_row_ = *row;
        ++records_;
        if (!compressor_) {
            const std::size_t before = out.size();
            table_->append(*row, out);
            bytes_in_ += out.size() - before;
            bytes_out_ += out.size() - before;
            return {};
        }
        scratch_.clear();
        table_->append(*row, scratch_);
        emit(scratch_, out);
        return {};
    }
    if (!compressor_) {
        // Format straight into `out`; on a bad message cut it back.
        const std::size_t before = out.size();
        auto r = format_record(m, src, out);
        if (!r) {
            out.resize(before);
            return r;
        }
        ++records_;
        bytes_in_ += out.size() - before;
        bytes_out_ += out.size() - before;
        return {};
    }
    if (std::string* stage = compressor_->staging()) {
        // Format straight into the codec's input (no copy through scratch_); cut back a
        // record that failed half-way.
        const std::size_t before = stage->size();
        auto r = format_record(m, src, *stage);
        if (!r) {
            stage->resize(before);
            return r;
        }
        ++records_;
        bytes_in_ += stage->size() - before;
        const std::size_t out_before = out.size();
        compressor_->staged(out);
        bytes_out_ += out.size() - out_before;
        return {};
    }
    scratch_.clear();
    auto r = format_record(m, src, scratch_);
    if (!r) return r;
    ++records_;
    emit(scratch_, out);
    return {};
}

result<void> writer::format_record(const proto::message_view& m, const record_source& src, std::string& buf) {
    if (o_.format == record_format::raw) {
        if (records_ > 0) buf += o_.separator;
        buf.append(text(m.payload));
        return {};
    }
    if (o_.format == record_format::json_array) buf += records_ == 0 ? "\n" : ",\n";
    buf += '{';
    if (o_.metadata) {
        if (names_json_.empty() || src.stream != names_stream_ || src.topic != names_topic_) {
            names_stream_.assign(src.stream);
            names_topic_.assign(src.topic);
            names_json_ = "\"stream\":";
            json::append_string(names_json_, src.stream);
            names_json_ += ",\"topic\":";
            json::append_string(names_json_, src.topic);
        }
        buf += names_json_;
        // Numbers appended in place: format-string parsing per record cost more than the rest
        // of the metadata (tests/bench/e2e_bench.py --profile).
        buf += ",\"partition_id\":";
        json::append_uint(buf, src.partition);
        buf += ",\"offset\":";
        json::append_uint(buf, m.offset);
        buf += ",\"id\":\"";
        json::append_hex128(buf, m.id);
        buf += "\",\"timestamp\":";
        json::append_uint(buf, m.timestamp);
        buf += ",\"timestamp_iso\":\"";
        json::append_rfc3339_micros(buf, m.timestamp);
        buf += "\",\"origin_timestamp\":";
        json::append_uint(buf, m.origin_timestamp);
        buf += ',';
    }
    if (o_.headers) {
        buf += "\"headers\":";
        if (auto r = append_headers(m, buf); !r) return r;
        buf += ',';
    }
    buf += "\"payload\":";
    if (auto r = append_payload(m, buf); !r) return r;
    buf += '}';
    if (o_.format == record_format::json_lines) buf += '\n';
    return {};
}

result<void> writer::append_headers(const proto::message_view& m, std::string& buf) {
    buf += '{';
    proto::header_reader reader{m.user_headers};
    bool first = true;
    for (;;) {
        auto next = reader.next();
        if (!next) return error{errc::bad_headers, fmt::format("offset {}: {}", m.offset, next.error().message())};
        if (!*next) break;
        const proto::header_view& h = **next;
        if (!first) buf += ',';
        first = false;
        if (h.key_kind == proto::header_kind::string) {
            // A string key that itself starts with "<kind>:" gets "string:" in front, so that
            // no string key can collide with a typed one (`int32:7`), and the mapping stays
            // one-to-one ("string:x" -> "string:string:x").
            const std::string_view k = h.key_text();
            if (looks_typed(k)) {
                std::string prefixed{"string:"};
                prefixed += k;
                json::append_string(buf, prefixed);
            } else {
                json::append_string(buf, k);
            }
        } else {
            std::string key{proto::header_kind_name(h.key_kind)};
            key += ':';
            json::append_header_value(key, h.key_kind, h.key, false);
            json::append_string(buf, key);
        }
        buf += ':';
        json::append_header_value(buf, h.value_kind, h.value, true);
    }
    buf += '}';
    return {};
}

result<void> writer::append_payload(const proto::message_view& m, std::string& buf) {
    const std::string_view p = text(m.payload);
    switch (o_.payload) {
        case payload_mode::json:
            if (!checker_.append_minified(p, buf))
                return error{errc::bad_payload,
                             fmt::format("offset {}: payload is not valid JSON ({})", m.offset, checker_.last_error())};
            return {};
        case payload_mode::automatic:
            if (checker_.append_minified(p, buf)) return {};
            if (json::valid_utf8(p)) {
                json::append_string(buf, p);
                return {};
            }
            break;
        case payload_mode::string: json::append_string(buf, p); return {};
        case payload_mode::base64: break;
    }
    buf += '"';
    iss::append_base64(buf, m.payload);
    buf += '"';
    return {};
}

}  // namespace iss::format
