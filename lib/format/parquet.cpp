// SPDX-License-Identifier: Apache-2.0
// Parquet writer, written from the Parquet format specification (apache/parquet-format:
// README.md "File format", Encodings.md, LogicalTypes.md, src/main/thrift/parquet.thrift).
//
// File layout: "PAR1", then per row group one column chunk per leaf column (an optional
// dictionary page, then data pages, v1 "DATA_PAGE"), then the FileMetaData (Thrift compact),
// its length as 4 bytes little-endian, and "PAR1".
//
// A data page (v1) is: repetition levels (when the column repeats), definition levels (when
// it is optional or inside a repeated group), each as a 4-byte little-endian length and the
// RLE/bit-packing hybrid, then the values: PLAIN, or for dictionary pages' columns
// RLE_DICTIONARY (one byte of bit width, then the indices in the hybrid encoding). The whole
// page body is compressed with the column's codec; the page header is not.
//
// Memory: values are buffered for the current row group only (plain values, and for string
// columns the dictionary while it stays small); a full row group is encoded and appended to
// the output, then its buffers are cleared. The footer keeps per row group only the column
// chunks' metadata.

#include "format/compressor.hpp"
#include "format/parquet_internal.hpp"
#include "format/thrift_compact.hpp"

#include <snappy-c.h>
#include <zstd.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <unordered_map>

namespace iss::format {

namespace {

using namespace parquet_detail;
using thrift::compact_writer;
using thrift::ttype;

unsigned bit_width(std::uint32_t max_value) {
    unsigned w = 0;
    while (max_value > 0) ++w, max_value >>= 1;
    return w;
}

void uleb(std::string& out, std::uint64_t v) {
    while (v >= 0x80) {
        out += static_cast<char>((v & 0x7F) | 0x80);
        v >>= 7;
    }
    out += static_cast<char>(v);
}

/// Encodings.md "Run Length Encoding / Bit-Packing Hybrid": runs of 8 or more equal values
/// as RLE runs (`count << 1`, the value in ceil(width/8) bytes), the rest bit-packed in
/// groups of 8 (`groups << 1 | 1`, LSB first). The last group is padded with zeros.
template <class Get>
void rle_hybrid(std::string& out, std::size_t n, unsigned width, Get get) {
    const std::size_t value_bytes = (width + 7) / 8;
    std::size_t i = 0;
    while (i < n) {
        std::size_t run = 1;
        const std::uint32_t v = get(i);
        while (i + run < n && get(i + run) == v) ++run;
        if (run >= 8 || width == 0) {
            uleb(out, static_cast<std::uint64_t>(run) << 1);
            for (std::size_t b = 0; b < value_bytes; ++b) out += static_cast<char>((v >> (8 * b)) & 0xFF);
            i += run;
            continue;
        }
        // Bit-pack groups of 8 until a run of 8 or more starts at a group boundary.
        std::size_t end = i;
        for (;;) {
            end = std::min(end + 8, n);
            if (end >= n) break;
            std::size_t r = 1;
            const std::uint32_t w = get(end);
            while (end + r < n && r < 8 && get(end + r) == w) ++r;
            if (r >= 8) break;
        }
        const std::size_t groups = (end - i + 7) / 8;
        uleb(out, (static_cast<std::uint64_t>(groups) << 1) | 1);
        std::uint64_t acc = 0;
        unsigned bits = 0;
        for (std::size_t k = 0; k < groups * 8; ++k) {
            const std::uint64_t val = i + k < end ? get(i + k) : 0;
            acc |= val << bits;
            bits += width;
            while (bits >= 8) {
                out += static_cast<char>(acc & 0xFF);
                acc >>= 8;
                bits -= 8;
            }
        }
        i = end;
    }
}

/// Appends levels as a length-prefixed hybrid run (v1 data pages).
void put_levels(std::string& out, const std::uint8_t* levels, std::size_t n, unsigned width) {
    const std::size_t at = out.size();
    put_le<std::uint32_t>(out, 0);
    rle_hybrid(out, n, width, [&](std::size_t k) { return static_cast<std::uint32_t>(levels[k]); });
    const auto len = static_cast<std::uint32_t>(out.size() - at - 4);
    std::memcpy(out.data() + at, &len, 4);
}

class parquet_writer final : public table_writer {
public:
    parquet_writer(std::vector<column> cols, parquet_options o) : cols_{std::move(cols)}, o_{std::move(o)} {
        for (std::size_t i = 0; i < cols_.size(); ++i) {
            const column& c = cols_[i];
            if (c.type == column_type::map) {
                leaf k;
                k.path = {c.name, "key_value", "key"};
                k.type = ptype::byte_array;
                k.logical = column_type::string;
                k.max_rep = 1;
                k.max_def = c.nullable ? 2 : 1;
                leaf v = k;
                v.path[2] = "value";
                v.max_def = k.max_def + 1;
                leaf_of_.push_back(leaves_.size());
                leaves_.push_back(std::move(k));
                leaves_.push_back(std::move(v));
                continue;
            }
            leaf l;
            l.path = {c.name};
            l.logical = c.type;
            l.max_def = c.nullable ? 1 : 0;
            switch (c.type) {
                case column_type::int32:
                case column_type::date: l.type = ptype::int32; break;
                case column_type::int64:
                case column_type::timestamp_ms:
                case column_type::timestamp_us: l.type = ptype::int64; break;
                case column_type::float32: l.type = ptype::float32; break;
                case column_type::float64: l.type = ptype::float64; break;
                case column_type::boolean: l.type = ptype::boolean; break;
                default: l.type = ptype::byte_array; break;
            }
            leaf_of_.push_back(leaves_.size());
            leaves_.push_back(std::move(l));
        }
    }

    void begin(std::string& out) override {
        for (auto& l : leaves_) l.clear();
        groups_.clear();
        rows_ = 0;
        buffered_ = 0;
        pos_ = 0;
        emit(out, "PAR1");
    }

    void append(std::span<const cell> row, std::string& out) override {
        for (std::size_t i = 0; i < cols_.size(); ++i) {
            const column& c = cols_[i];
            const cell& v = row[i];
            if (c.type == column_type::map) {
                append_map(leaves_[leaf_of_[i]], leaves_[leaf_of_[i] + 1], v);
                continue;
            }
            leaf& l = leaves_[leaf_of_[i]];
            if (l.max_def > 0) {
                l.defs.push_back(v.k == cell::kind::null ? 0 : 1);
                buffered_ += 1;
            }
            ++l.entries;
            if (v.k == cell::kind::null) {
                ++l.st.nulls;
                continue;
            }
            add_value(l, v);
        }
        ++rows_;
        if (buffered_ >= o_.row_group_size) flush_row_group(out);
    }

    void finish(std::string& out) override {
        if (rows_ > 0) flush_row_group(out);
        std::string footer;
        write_file_metadata(footer, cols_, leaves_, leaf_of_, groups_, o_);
        const auto len = static_cast<std::uint32_t>(footer.size());
        put_le<std::uint32_t>(footer, len);
        footer += "PAR1";
        emit(out, footer);
    }

    [[nodiscard]] std::uint64_t buffered_bytes() const noexcept override { return buffered_; }

    [[nodiscard]] std::vector<std::int64_t> column_bytes() const override {
        std::vector<std::int64_t> out(leaves_.size(), 0);
        for (const auto& g : groups_)
            for (std::size_t k = 0; k < g.chunks.size() && k < out.size(); ++k) out[k] += g.chunks[k].compressed;
        return out;
    }

private:
    void emit(std::string& out, std::string_view b) {
        out.append(b);
        pos_ += b.size();
    }

    void append_map(leaf& k, leaf& v, const cell& c) {
        const auto base = static_cast<std::uint8_t>(k.max_def - 1);  // def level of "map present, no entry"
        if (c.k == cell::kind::null || c.entries.empty()) {
            const std::uint8_t d = c.k == cell::kind::null ? 0 : base;
            for (leaf* l : {&k, &v}) {
                l->defs.push_back(d);
                l->reps.push_back(0);
                ++l->entries;
                ++l->st.nulls;
            }
            buffered_ += 4;
            return;
        }
        bool first = true;
        for (const auto& [key, val] : c.entries) {
            for (leaf* l : {&k, &v}) {
                l->defs.push_back(static_cast<std::uint8_t>(l->max_def));
                l->reps.push_back(first ? 0 : 1);
                ++l->entries;
            }
            buffered_ += 4;
            first = false;
            cell kc;
            kc.k = cell::kind::bytes;
            kc.s = key;
            add_value(k, kc);
            cell vc = kc;
            vc.s = val;
            add_value(v, vc);
        }
    }

    void add_value(leaf& l, const cell& v) {
        stats& s = l.st;
        switch (l.type) {
            case ptype::boolean:
            case ptype::int32:
            case ptype::int64: {
                const std::int64_t x = v.i;
                if (l.type == ptype::boolean) l.fixed += static_cast<char>(x != 0);
                else if (l.type == ptype::int32) put_le<std::int32_t>(l.fixed, static_cast<std::int32_t>(x));
                else put_le<std::int64_t>(l.fixed, x);
                if (!s.any) s.imin = s.imax = x, s.any = true;
                else s.imin = std::min(s.imin, x), s.imax = std::max(s.imax, x);
                buffered_ += l.width();
                return;
            }
            case ptype::float32:
            case ptype::float64: {
                const double x = v.d;
                if (l.type == ptype::float32) put_le<float>(l.fixed, static_cast<float>(x));
                else put_le<double>(l.fixed, x);
                buffered_ += l.width();
                if (std::isnan(x)) return;  // NaN is left out of min/max (parquet.thrift, ColumnOrder)
                if (!s.any) s.dmin = s.dmax = x, s.any = true;
                else s.dmin = std::min(s.dmin, x), s.dmax = std::max(s.dmax, x);
                return;
            }
            case ptype::byte_array: break;
        }
        const std::string_view b = v.s;
        l.bytes.append(b);
        l.ends.push_back(static_cast<std::uint32_t>(l.bytes.size()));
        buffered_ += b.size() + 4;
        if (s.strings_ok) {
            if (b.size() > max_stat_bytes) {
                s.strings_ok = false;
                s.smin.clear();
                s.smax.clear();
            } else if (!s.any) {
                s.smin = s.smax = std::string{b};
                s.any = true;
            } else {
                // Unsigned byte-wise order (ColumnOrder TYPE_ORDER for BYTE_ARRAY / UTF8):
                // std::string_view compares chars through char_traits<char>::compare = memcmp.
                if (b < std::string_view{s.smin}) s.smin.assign(b);
                if (b > std::string_view{s.smax}) s.smax.assign(b);
            }
        }
        if (!l.dict_on) return;
        auto [it, inserted] = l.dict.try_emplace(std::string{b}, static_cast<std::uint32_t>(l.dict_order.size()));
        if (inserted) {
            l.dict_order.push_back(&it->first);
            l.dict_bytes += b.size() + 4;
            buffered_ += b.size() + 4;
            if (l.dict_bytes > o_.dictionary_max_bytes || l.dict_order.size() > o_.dictionary_max_values) {
                // Fallback: too many distinct values for a dictionary; this chunk is PLAIN.
                buffered_ -= l.dict_bytes;
                l.dict_on = false;
                l.dict.clear();
                l.dict_order.clear();
                l.indices.clear();
                l.dict_bytes = 0;
                return;
            }
        }
        l.indices.push_back(it->second);
        buffered_ += 4;
    }

    void compress(std::string_view in, std::string& out) {
        switch (o_.codec) {
            case parquet_codec::none: out.assign(in); return;
            case parquet_codec::snappy: {
                std::size_t n = snappy_max_compressed_length(in.size());
                out.resize(n);
                if (snappy_compress(in.data(), in.size(), out.data(), &n) != SNAPPY_OK) std::abort();
                out.resize(n);
                return;
            }
            case parquet_codec::zstd: {
                std::size_t n = ZSTD_compressBound(in.size());
                out.resize(n);
                n = ZSTD_compress(out.data(), n, in.data(), in.size(), o_.level > 0 ? o_.level : 3);
                if (ZSTD_isError(n)) std::abort();
                out.resize(n);
                return;
            }
            case parquet_codec::gzip: {
                // GZIP codec: a gzip member (RFC 1952), deflate with the gzip wrapper (windowBits 16+15).
                zlib_deflate(in, out, o_.level > 0 ? o_.level : 6, 31);
                return;
            }
        }
    }

    /// Appends one page (header + compressed body); returns {uncompressed, compressed} sizes
    /// including the header.
    std::pair<std::int64_t, std::int64_t> put_page(std::string& out, std::int32_t type, std::string_view body,
                                                   std::int32_t num_values, std::int32_t encoding) {
        compress(body, zbuf_);
        hdr_.clear();
        compact_writer w{hdr_};
        w.i32(1, type);
        w.i32(2, static_cast<std::int32_t>(body.size()));
        w.i32(3, static_cast<std::int32_t>(zbuf_.size()));
        if (type == page_dictionary) {
            w.begin_struct(7);
            w.i32(1, num_values);
            w.i32(2, encoding);
            w.end_struct();
        } else {
            w.begin_struct(5);
            w.i32(1, num_values);
            w.i32(2, encoding);
            w.i32(3, enc_rle);
            w.i32(4, enc_rle);
            w.end_struct();
        }
        w.end_struct();
        emit(out, hdr_);
        emit(out, zbuf_);
        return {static_cast<std::int64_t>(hdr_.size() + body.size()),
                static_cast<std::int64_t>(hdr_.size() + zbuf_.size())};
    }

    void flush_row_group(std::string& out) {
        row_group_meta g;
        g.num_rows = static_cast<std::int64_t>(rows_);
        g.file_offset = static_cast<std::int64_t>(pos_);
        for (leaf& l : leaves_) {
            chunk_meta c;
            c.pt = l.type;
            c.type = static_cast<std::int32_t>(l.type);
            c.path = &l.path;
            c.num_values = static_cast<std::int64_t>(l.entries);
            c.st = l.st;
            const std::size_t nvals = l.values();
            // Dictionary only when it is smaller than the plain values.
            bool use_dict = l.type == ptype::byte_array && l.dict_on && !l.dict_order.empty();
            const unsigned iw =
                use_dict ? std::max(1u, bit_width(static_cast<std::uint32_t>(l.dict_order.size() - 1))) : 0;
            if (use_dict && l.dict_bytes + (nvals * iw + 7) / 8 >= l.bytes.size() + 4 * nvals) use_dict = false;
            const std::int64_t start = static_cast<std::int64_t>(pos_);
            if (use_dict) {
                body_.clear();
                for (const std::string* s : l.dict_order) {
                    put_le<std::uint32_t>(body_, static_cast<std::uint32_t>(s->size()));
                    body_ += *s;
                }
                c.dictionary_page_offset = start;
                const auto [u, z] =
                    put_page(out, page_dictionary, body_, static_cast<std::int32_t>(l.dict_order.size()), enc_plain);
                c.uncompressed += u;
                c.compressed += z;
                c.encodings = {enc_plain, enc_rle, enc_rle_dictionary};
            } else {
                c.encodings = {enc_plain, enc_rle};
            }
            c.data_page_offset = static_cast<std::int64_t>(pos_);
            // Data pages: cut at about page_size bytes of values, only where a record starts.
            std::size_t e = 0;  // level entry
            std::size_t v = 0;  // value
            while (e < l.entries) {
                const std::size_t e0 = e, v0 = v;
                std::uint64_t page_bytes = 0;
                while (e < l.entries) {
                    if (e > e0 && page_bytes >= o_.page_size && (l.max_rep == 0 || l.reps[e] == 0)) break;
                    const bool present = l.max_def == 0 || l.defs[e] == l.max_def;
                    if (present) {
                        page_bytes += l.type == ptype::byte_array ? 4 + l.value(v).size() : l.width();
                        ++v;
                    }
                    ++e;
                }
                body_.clear();
                if (l.max_rep > 0) put_levels(body_, l.reps.data() + e0, e - e0, bit_width(l.max_rep));
                if (l.max_def > 0) put_levels(body_, l.defs.data() + e0, e - e0, bit_width(l.max_def));
                if (use_dict) {
                    body_ += static_cast<char>(iw);
                    rle_hybrid(body_, v - v0, iw, [&](std::size_t k) { return l.indices[v0 + k]; });
                } else if (l.type == ptype::boolean) {
                    // PLAIN booleans: bit-packed, LSB first.
                    for (std::size_t k = v0; k < v; k += 8) {
                        unsigned char byte = 0;
                        for (std::size_t b = 0; b < 8 && k + b < v; ++b)
                            if (l.fixed[k + b] != 0) byte |= static_cast<unsigned char>(1u << b);
                        body_ += static_cast<char>(byte);
                    }
                } else if (l.type == ptype::byte_array) {
                    for (std::size_t k = v0; k < v; ++k) {
                        const std::string_view s = l.value(k);
                        put_le<std::uint32_t>(body_, static_cast<std::uint32_t>(s.size()));
                        body_ += s;
                    }
                } else {
                    body_.append(l.fixed, v0 * l.width(), (v - v0) * l.width());
                }
                const auto [u, z] = put_page(out, page_data, body_, static_cast<std::int32_t>(e - e0),
                                             use_dict ? enc_rle_dictionary : enc_plain);
                c.uncompressed += u;
                c.compressed += z;
            }
            g.total_byte_size += c.uncompressed;
            g.total_compressed += c.compressed;
            g.chunks.push_back(std::move(c));
            l.clear();
        }
        groups_.push_back(std::move(g));
        rows_ = 0;
        buffered_ = 0;
    }

    std::vector<column> cols_;
    parquet_options o_;
    std::vector<leaf> leaves_;
    std::vector<std::size_t> leaf_of_;  ///< column -> its first leaf
    std::vector<row_group_meta> groups_;
    std::uint64_t rows_ = 0;
    std::uint64_t buffered_ = 0;
    std::uint64_t pos_ = 0;  ///< bytes of the object so far (for the footer's offsets)
    std::string body_, zbuf_, hdr_;
};

}  // namespace

std::unique_ptr<table_writer> make_parquet_writer(std::vector<column> cols, parquet_options o) {
    return std::make_unique<parquet_writer>(std::move(cols), std::move(o));
}

}  // namespace iss::format
