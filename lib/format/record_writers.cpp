// SPDX-License-Identifier: Apache-2.0
// The record writers behind `record_writer` (writer.hpp): the JSON envelope (json_lines,
// json_array), raw payloads, and the typed formats (a row_reader in front of a table_writer).
#include "common/base64.hpp"
#include "format/writer.hpp"

#include <fmt/format.h>

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

/// `before` (the text that ends the previous field and names this one), then `v` in decimal.
void append_number(std::string& buf, std::string_view before, std::uint64_t v) {
    buf += before;
    json::append_uint(buf, v);
}

/// json_lines (`{...}\n` per record) and json_array (`[`, records separated by `,\n`, `]`).
class json_writer final : public record_writer {
public:
    explicit json_writer(const writer_options& o)
        : array_{o.format == record_format::json_array},
          metadata_{o.metadata},
          headers_{o.headers},
          payload_{o.payload} {}

    void begin(std::string& out) override {
        records_ = 0;
        if (array_) out += '[';
    }
    result<void> append(const proto::message_view& m, const record_source& src, std::string& out) override;
    void finish(std::string& out) override {
        if (array_) out += records_ == 0 ? "]\n" : "\n]\n";
    }
    [[nodiscard]] bool formats_in_place() const noexcept override { return true; }

private:
    void append_metadata(const proto::message_view& m, const record_source& src, std::string& buf);
    result<void> append_headers(const proto::message_view& m, std::string& buf);
    result<void> append_payload(const proto::message_view& m, std::string& buf);

    bool array_;
    bool metadata_;
    bool headers_;
    payload_mode payload_;
    json::payload_checker checker_;
    std::uint64_t records_ = 0;  ///< in the current object
    /// The envelope's `"stream":"..","topic":".."` as last rendered, and the names it was
    /// rendered from: a writer sees the same names record after record, so they are escaped
    /// once, not per record.
    std::string names_json_;
    std::string names_stream_;
    std::string names_topic_;
};

result<void> json_writer::append(const proto::message_view& m, const record_source& src, std::string& buf) {
    if (array_) buf += records_ == 0 ? "\n" : ",\n";
    buf += '{';
    if (metadata_) append_metadata(m, src, buf);
    if (headers_) {
        buf += "\"headers\":";
        if (auto r = append_headers(m, buf); !r) return r;
        buf += ',';
    }
    buf += "\"payload\":";
    if (auto r = append_payload(m, buf); !r) return r;
    buf += '}';
    if (!array_) buf += '\n';
    ++records_;
    return {};
}

void json_writer::append_metadata(const proto::message_view& m, const record_source& src, std::string& buf) {
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
    append_number(buf, ",\"partition_id\":", src.partition);
    append_number(buf, ",\"offset\":", m.offset);
    buf += ",\"id\":\"";
    json::append_hex128(buf, m.id);
    append_number(buf, "\",\"timestamp\":", m.timestamp);
    buf += ",\"timestamp_iso\":\"";
    json::append_rfc3339_micros(buf, m.timestamp);
    append_number(buf, "\",\"origin_timestamp\":", m.origin_timestamp);
    buf += ',';
}

result<void> json_writer::append_headers(const proto::message_view& m, std::string& buf) {
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

result<void> json_writer::append_payload(const proto::message_view& m, std::string& buf) {
    const std::string_view p = text(m.payload);
    switch (payload_) {
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

/// raw: the payloads as they are, `separator` between two of them.
class raw_writer final : public record_writer {
public:
    explicit raw_writer(std::string separator) : separator_{std::move(separator)} {}
    void begin(std::string& /*out*/) override { records_ = 0; }
    result<void> append(const proto::message_view& m, const record_source& /*src*/, std::string& out) override {
        if (records_ > 0) out += separator_;
        out.append(text(m.payload));
        ++records_;
        return {};
    }
    void finish(std::string& /*out*/) override {}
    [[nodiscard]] bool formats_in_place() const noexcept override { return true; }

private:
    std::string separator_;
    std::uint64_t records_ = 0;  ///< in the current object
};

/// csv, parquet, avro: each message read into a row of cells, then written by the table writer.
class table_record_writer final : public record_writer {
public:
    table_record_writer(std::vector<column> cols, std::unique_ptr<table_writer> table)
        : rows_{std::move(cols)}, table_{std::move(table)} {}
    void begin(std::string& out) override {
        last_row_ = {};
        table_->begin(out);
    }
    result<void> append(const proto::message_view& m, const record_source& src, std::string& out) override {
        auto row = rows_.read(m, src.stream, src.topic, src.partition);
        if (!row) return row.error();
        last_row_ = *row;
        table_->append(*row, out);
        return {};
    }
    void finish(std::string& out) override { table_->finish(out); }
    [[nodiscard]] std::uint64_t buffered_bytes() const noexcept override { return table_->buffered_bytes(); }
    [[nodiscard]] std::span<const cell> last_row() const noexcept override { return last_row_; }
    [[nodiscard]] std::vector<std::int64_t> column_bytes() const override { return table_->column_bytes(); }

private:
    row_reader rows_;
    std::unique_ptr<table_writer> table_;
    std::span<const cell> last_row_;  ///< the last row written (in `rows_`)
};

}  // namespace

std::unique_ptr<record_writer> make_record_writer(const writer_options& o) {
    switch (o.format) {
        case record_format::json_lines:
        case record_format::json_array: break;
        case record_format::raw: return std::make_unique<raw_writer>(o.separator);
        case record_format::csv:
            return std::make_unique<table_record_writer>(effective_schema(o),
                                                         make_csv_writer(effective_schema(o), o.csv));
        case record_format::parquet:
            return std::make_unique<table_record_writer>(effective_schema(o),
                                                         make_parquet_writer(effective_schema(o), o.parquet));
        case record_format::avro:
            return std::make_unique<table_record_writer>(effective_schema(o),
                                                         make_avro_writer(effective_schema(o), o.avro));
    }
    return std::make_unique<json_writer>(o);
}

}  // namespace iss::format
