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

#include "format/table.hpp"
#include "format/thrift_compact.hpp"

#include <snappy-c.h>
#include <zlib.h>
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

using thrift::compact_writer;
using thrift::ttype;

// parquet.thrift enum values.
enum class ptype : std::int32_t { boolean = 0, int32 = 1, int64 = 2, float32 = 4, float64 = 5, byte_array = 6 };
enum class repetition : std::int32_t { required = 0, optional = 1, repeated = 2 };
constexpr std::int32_t enc_plain = 0, enc_rle = 3, enc_rle_dictionary = 8;
constexpr std::int32_t page_data = 0, page_dictionary = 2;
// ConvertedType
constexpr std::int32_t ct_utf8 = 0, ct_map = 1, ct_date = 6, ct_ts_millis = 9, ct_ts_micros = 10, ct_json = 19;

std::int32_t codec_id(parquet_codec c) {
    switch (c) {
        case parquet_codec::none: return 0;
        case parquet_codec::snappy: return 1;
        case parquet_codec::gzip: return 2;
        case parquet_codec::zstd: return 6;
    }
    return 0;
}

template <class T>
void put_le(std::string& out, T v) {
    char b[sizeof v];
    std::memcpy(b, &v, sizeof v);  // little-endian hosts only (as proto/)
    out.append(b, sizeof v);
}

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

/// The statistics of one column chunk, as encoded min/max values.
struct stats {
    std::int64_t nulls = 0;
    bool any = false;
    std::int64_t imin = 0, imax = 0;
    double dmin = 0, dmax = 0;
    std::string smin, smax;
    bool strings_ok = true;  ///< false once a value is too long to keep as a bound
};

constexpr std::size_t max_stat_bytes = 256;

struct leaf {
    std::vector<std::string> path;  ///< path_in_schema
    ptype type = ptype::byte_array;
    column_type logical = column_type::string;
    unsigned max_def = 0, max_rep = 0;
    std::vector<std::uint8_t> defs, reps;  ///< one per level entry (only when max_* > 0)
    std::size_t entries = 0;               ///< level entries (values + nulls + empty maps)
    std::string fixed;                     ///< PLAIN fixed-width values (booleans: one byte each)
    std::string bytes;                     ///< byte-array values, concatenated
    std::vector<std::uint32_t> ends;       ///< end of each byte-array value in `bytes`
    // Dictionary of a byte-array column while it stays small.
    bool dict_on = true;
    std::unordered_map<std::string, std::uint32_t> dict;
    std::vector<const std::string*> dict_order;
    std::uint64_t dict_bytes = 0;
    std::vector<std::uint32_t> indices;
    stats st;

    [[nodiscard]] std::size_t values() const { return type == ptype::byte_array ? ends.size() : fixed.size() / width(); }
    [[nodiscard]] std::size_t width() const {
        switch (type) {
            case ptype::boolean: return 1;
            case ptype::int32:
            case ptype::float32: return 4;
            default: return 8;
        }
    }
    [[nodiscard]] std::string_view value(std::size_t k) const {
        const std::uint32_t b = k == 0 ? 0 : ends[k - 1];
        return std::string_view{bytes}.substr(b, ends[k] - b);
    }
    void clear() {
        defs.clear();
        reps.clear();
        entries = 0;
        fixed.clear();
        bytes.clear();
        ends.clear();
        dict_on = true;
        dict.clear();
        dict_order.clear();
        dict_bytes = 0;
        indices.clear();
        st = {};
    }
};

/// A finished column chunk's footer metadata.
struct chunk_meta {
    std::int32_t type = 0;
    std::vector<std::int32_t> encodings;
    const std::vector<std::string>* path = nullptr;
    std::int64_t num_values = 0;
    std::int64_t uncompressed = 0;
    std::int64_t compressed = 0;
    std::int64_t data_page_offset = 0;
    std::optional<std::int64_t> dictionary_page_offset;
    stats st;
    ptype pt = ptype::byte_array;
};

struct row_group_meta {
    std::vector<chunk_meta> chunks;
    std::int64_t num_rows = 0;
    std::int64_t total_byte_size = 0;
    std::int64_t total_compressed = 0;
    std::int64_t file_offset = 0;
};

void write_stat_value(compact_writer& w, std::int16_t id, const chunk_meta& c, bool is_max) {
    std::string v;
    switch (c.pt) {
        case ptype::boolean: v += static_cast<char>(is_max ? c.st.imax : c.st.imin); break;
        case ptype::int32: put_le<std::int32_t>(v, static_cast<std::int32_t>(is_max ? c.st.imax : c.st.imin)); break;
        case ptype::int64: put_le<std::int64_t>(v, is_max ? c.st.imax : c.st.imin); break;
        case ptype::float32:
        case ptype::float64: {
            // parquet.thrift ColumnOrder: a zero bound is written as -0.0 (min) and +0.0 (max).
            double d = is_max ? c.st.dmax : c.st.dmin;
            if (d == 0) d = is_max ? 0.0 : -0.0;
            if (c.pt == ptype::float32) put_le<float>(v, static_cast<float>(d));
            else put_le<double>(v, d);
            break;
        }
        case ptype::byte_array: v = is_max ? c.st.smax : c.st.smin; break;
    }
    w.binary(id, v);
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
        write_footer(footer);
        const auto len = static_cast<std::uint32_t>(footer.size());
        put_le<std::uint32_t>(footer, len);
        footer += "PAR1";
        emit(out, footer);
    }

    [[nodiscard]] std::uint64_t buffered_bytes() const noexcept override { return buffered_; }

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
                z_stream z{};
                if (deflateInit2(&z, o_.level > 0 ? o_.level : 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
                    std::abort();
                out.resize(deflateBound(&z, in.size()) + 32);
                z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
                z.avail_in = static_cast<uInt>(in.size());
                z.next_out = reinterpret_cast<Bytef*>(out.data());
                z.avail_out = static_cast<uInt>(out.size());
                if (deflate(&z, Z_FINISH) != Z_STREAM_END) std::abort();
                out.resize(z.total_out);
                deflateEnd(&z);
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
        return {static_cast<std::int64_t>(hdr_.size() + body.size()), static_cast<std::int64_t>(hdr_.size() + zbuf_.size())};
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
            const unsigned iw = use_dict ? std::max(1u, bit_width(static_cast<std::uint32_t>(l.dict_order.size() - 1))) : 0;
            if (use_dict && l.dict_bytes + (nvals * iw + 7) / 8 >= l.bytes.size() + 4 * nvals) use_dict = false;
            const std::int64_t start = static_cast<std::int64_t>(pos_);
            if (use_dict) {
                body_.clear();
                for (const std::string* s : l.dict_order) {
                    put_le<std::uint32_t>(body_, static_cast<std::uint32_t>(s->size()));
                    body_ += *s;
                }
                c.dictionary_page_offset = start;
                const auto [u, z] = put_page(out, page_dictionary, body_, static_cast<std::int32_t>(l.dict_order.size()), enc_plain);
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

    void write_schema_element(compact_writer& w, const column& c) {
        const auto rep = c.nullable ? repetition::optional : repetition::required;
        if (c.type == column_type::map) {
            // LogicalTypes.md "Maps": <rep> group <name> (MAP) { repeated group key_value
            // { required binary key (STRING); optional binary value (STRING); } }
            w.begin_elem_struct();
            w.i32(3, static_cast<std::int32_t>(rep));
            w.binary(4, c.name);
            w.i32(5, 1);
            w.i32(6, ct_map);
            w.begin_struct(10);
            w.begin_struct(2);
            w.end_struct();
            w.end_struct();
            w.end_struct();
            w.begin_elem_struct();
            w.i32(3, static_cast<std::int32_t>(repetition::repeated));
            w.binary(4, "key_value");
            w.i32(5, 2);
            w.end_struct();
            for (int k = 0; k < 2; ++k) {
                w.begin_elem_struct();
                w.i32(1, static_cast<std::int32_t>(ptype::byte_array));
                w.i32(3, static_cast<std::int32_t>(k == 0 ? repetition::required : repetition::optional));
                w.binary(4, k == 0 ? "key" : "value");
                w.i32(6, ct_utf8);
                w.begin_struct(10);
                w.begin_struct(1);
                w.end_struct();
                w.end_struct();
                w.end_struct();
            }
            return;
        }
        const leaf& l = leaves_[leaf_of_[static_cast<std::size_t>(&c - cols_.data())]];
        w.begin_elem_struct();
        w.i32(1, static_cast<std::int32_t>(l.type));
        w.i32(3, static_cast<std::int32_t>(rep));
        w.binary(4, c.name);
        // converted_type (6) and logicalType (10, a union: one field set).
        const auto logical = [&](std::int32_t converted, std::int16_t union_field, auto&& body) {
            w.i32(6, converted);
            w.begin_struct(10);
            w.begin_struct(union_field);
            body();
            w.end_struct();
            w.end_struct();
        };
        switch (c.type) {
            case column_type::string: logical(ct_utf8, 1, [] {}); break;
            case column_type::json: logical(ct_json, 12, [] {}); break;
            case column_type::date: logical(ct_date, 6, [] {}); break;
            case column_type::timestamp_ms:
            case column_type::timestamp_us: {
                const bool ms = c.type == column_type::timestamp_ms;
                logical(ms ? ct_ts_millis : ct_ts_micros, 8, [&] {
                    w.boolean(1, true);  // isAdjustedToUTC
                    w.begin_struct(2);   // TimeUnit union
                    w.begin_struct(ms ? 1 : 2);
                    w.end_struct();
                    w.end_struct();
                });
                break;
            }
            default: break;
        }
        w.end_struct();
    }

    void write_footer(std::string& out) {
        compact_writer w{out};
        w.i32(1, 1);  // version
        std::size_t elements = 1;
        for (const auto& c : cols_) elements += c.type == column_type::map ? 4 : 1;
        w.begin_list(2, ttype::structure, elements);
        w.begin_elem_struct();
        w.binary(4, "schema");
        w.i32(5, static_cast<std::int32_t>(cols_.size()));
        w.end_struct();
        for (const auto& c : cols_) write_schema_element(w, c);
        std::int64_t rows = 0;
        for (const auto& g : groups_) rows += g.num_rows;
        w.i64(3, rows);
        w.begin_list(4, ttype::structure, groups_.size());
        for (std::size_t gi = 0; gi < groups_.size(); ++gi) {
            const row_group_meta& g = groups_[gi];
            w.begin_elem_struct();
            w.begin_list(1, ttype::structure, g.chunks.size());
            for (const chunk_meta& c : g.chunks) {
                w.begin_elem_struct();
                w.i64(2, c.dictionary_page_offset.value_or(c.data_page_offset));  // file_offset
                w.begin_struct(3);
                w.i32(1, c.type);
                w.begin_list(2, ttype::i32, c.encodings.size());
                for (auto e : c.encodings) w.elem_i32(e);
                w.begin_list(3, ttype::binary, c.path->size());
                for (const auto& p : *c.path) w.elem_binary(p);
                w.i32(4, codec_id(o_.codec));
                w.i64(5, c.num_values);
                w.i64(6, c.uncompressed);
                w.i64(7, c.compressed);
                w.i64(9, c.data_page_offset);
                if (c.dictionary_page_offset) w.i64(11, *c.dictionary_page_offset);
                w.begin_struct(12);  // Statistics
                w.i64(3, c.st.nulls);
                if (c.st.any && (c.pt != ptype::byte_array || c.st.strings_ok)) {
                    write_stat_value(w, 5, c, true);   // max_value
                    write_stat_value(w, 6, c, false);  // min_value
                }
                w.end_struct();
                w.end_struct();  // ColumnMetaData
                w.end_struct();  // ColumnChunk
            }
            w.i64(2, g.total_byte_size);
            w.i64(3, g.num_rows);
            w.i64(5, g.file_offset);
            w.i64(6, g.total_compressed);
            if (gi <= 32'767) w.i16(7, static_cast<std::int16_t>(gi));  // ordinal
            w.end_struct();
        }
        w.binary(6, o_.created_by);
        w.begin_list(7, ttype::structure, leaves_.size());
        for (std::size_t i = 0; i < leaves_.size(); ++i) {
            w.begin_elem_struct();
            w.begin_struct(1);  // TYPE_ORDER
            w.end_struct();
            w.end_struct();
        }
        w.end_struct();
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
