// SPDX-License-Identifier: Apache-2.0
#include "format/writer.hpp"

namespace iss::format {

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
    if (compresses_inside(o.format)) return 0;
    if (o.compression == compression::gzip) return gzip_compressor_memory(level_or_default(o));
    if (o.compression == compression::zstd) return zstd_compressor_memory(level_or_default(o));
    return 0;
}

writer::writer(writer_options o) : o_{std::move(o)}, format_{make_record_writer(o_)} {
    // Parquet and Avro compress inside; an outer compressor would break the file.
    if (compresses_inside(o_.format)) o_.compression = compression::none;
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
    records_ = 0;
    bytes_in_ = 0;
    bytes_out_ = 0;
    if (compressor_) compressor_->reset();
    scratch_.clear();
    format_->begin(scratch_);
    if (!scratch_.empty()) emit(scratch_, out);
}

void writer::finish(std::string& out) {
    scratch_.clear();
    format_->finish(scratch_);
    if (!scratch_.empty()) emit(scratch_, out);
    if (compressor_) {
        const std::size_t before = out.size();
        compressor_->finish(out);
        bytes_out_ += out.size() - before;
    }
}

result<void> writer::append(const proto::message_view& m, const record_source& src, std::string& out) {
    // Where the record is formatted: straight into `out` without compression; into the
    // compressor's input block (no copy through scratch_) when the format writes whole
    // records; else into scratch_, then through compressor::write.
    std::string* stage = compressor_ && format_->formats_in_place() ? compressor_->staging() : nullptr;
    std::string& buf = !compressor_ ? out : stage != nullptr ? *stage : scratch_;
    if (&buf == &scratch_) scratch_.clear();
    const std::size_t before = buf.size();
    if (auto r = format_->append(m, src, buf); !r) {
        buf.resize(before);  // a bad message leaves nothing behind
        return r;
    }
    ++records_;
    if (&buf == &scratch_) {
        emit(scratch_, out);
        return {};
    }
    const std::size_t added = buf.size() - before;
    bytes_in_ += added;
    if (!compressor_) {
        bytes_out_ += added;
        return {};
    }
    const std::size_t out_before = out.size();
    compressor_->staged(out);
    bytes_out_ += out.size() - out_before;
    return {};
}

}  // namespace iss::format
