// SPDX-License-Identifier: Apache-2.0
// Avro object container files (Avro 1.11 specification, "Object Container Files"):
//   header: "Obj" 0x01, the file metadata as an Avro map<bytes> (`avro.schema`, `avro.codec`),
//           a 16-byte sync marker;
//   blocks: the object count (long), the byte size of the serialized objects after the codec
//           (long), the objects, the sync marker.
// Longs are zigzag varints. Codecs: `null`; `deflate` (raw RFC 1951 deflate, no zlib header);
// `snappy` (each block snappy-compressed, followed by the CRC-32 of the uncompressed data,
// 4 bytes big-endian).
//
// Debian's libavro (avro-c) parses the generated record schema and encodes each datum
// (avro_value_write); the container framing is written here because avro-c's file writer
// writes to a FILE* and draws a random sync marker, while an object must be streamed into
// the pipeline's part buffer and be the same bytes on a replay: the sync marker is derived
// from the schema text (XXH3-128), which any reader accepts (it only has to match between
// the header and the blocks).

#include "format/json.hpp"
#include "format/table.hpp"

#include <avro.h>
#include <snappy-c.h>
#include <xxhash.h>
#include <zlib.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace iss::format {

namespace {

void put_long(std::string& out, std::int64_t v) {
    auto z = (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
    while (z >= 0x80) {
        out += static_cast<char>((z & 0x7F) | 0x80);
        z >>= 7;
    }
    out += static_cast<char>(z);
}

void put_bytes(std::string& out, std::string_view b) {
    put_long(out, static_cast<std::int64_t>(b.size()));
    out.append(b);
}

std::string avro_type(column_type t) {
    switch (t) {
        case column_type::string:
        case column_type::json: return R"("string")";
        case column_type::int32: return R"("int")";
        case column_type::int64: return R"("long")";
        case column_type::float32: return R"("float")";
        case column_type::float64: return R"("double")";
        case column_type::boolean: return R"("boolean")";
        case column_type::timestamp_ms: return R"({"type":"long","logicalType":"timestamp-millis"})";
        case column_type::timestamp_us: return R"({"type":"long","logicalType":"timestamp-micros"})";
        case column_type::date: return R"({"type":"int","logicalType":"date"})";
        case column_type::binary: return R"("bytes")";
        case column_type::map: return R"({"type":"map","values":"string"})";
    }
    return R"("string")";
}

class avro_writer final : public table_writer {
public:
    avro_writer(std::vector<column> cols, avro_options o) : cols_{std::move(cols)}, o_{o} {
        schema_json_ = R"({"type":"record","name":"iggy_record","namespace":"iggy_s3_sink","fields":[)";
        for (std::size_t i = 0; i < cols_.size(); ++i) {
            if (i > 0) schema_json_ += ',';
            schema_json_ += R"({"name":)";
            json::append_string(schema_json_, cols_[i].name);
            schema_json_ += R"(,"type":)";
            if (cols_[i].nullable) schema_json_ += R"(["null",)" + avro_type(cols_[i].type) + "]";
            else schema_json_ += avro_type(cols_[i].type);
            if (cols_[i].nullable) schema_json_ += R"(,"default":null)";
            schema_json_ += '}';
        }
        schema_json_ += "]}";
        // Column names are checked by the configuration (Avro names); a failure here is a bug.
        if (avro_schema_from_json_length(schema_json_.data(), schema_json_.size(), &schema_) != 0)
            throw std::runtime_error{std::string{"avro schema: "} + avro_strerror()};
        iface_ = avro_generic_class_from_schema(schema_);
        if (iface_ == nullptr || avro_generic_value_new(iface_, &value_) != 0)
            throw std::runtime_error{std::string{"avro value: "} + avro_strerror()};
        const XXH128_hash_t h = XXH3_128bits(schema_json_.data(), schema_json_.size());
        std::memcpy(sync_, &h.high64, 8);
        std::memcpy(sync_ + 8, &h.low64, 8);
    }
    ~avro_writer() override {
        avro_value_decref(&value_);
        avro_value_iface_decref(iface_);
        avro_schema_decref(schema_);
    }
    avro_writer(const avro_writer&) = delete;
    avro_writer& operator=(const avro_writer&) = delete;

    void begin(std::string& out) override {
        block_.clear();
        count_ = 0;
        out.append("Obj\x01", 4);
        put_long(out, 2);  // a map block of two entries, then the end (0)
        put_bytes(out, "avro.schema");
        put_bytes(out, schema_json_);
        put_bytes(out, "avro.codec");
        put_bytes(out, o_.codec == avro_codec::deflate  ? "deflate"
                       : o_.codec == avro_codec::snappy ? "snappy"
                                                        : "null");
        put_long(out, 0);
        out.append(sync_, 16);
    }

    void append(std::span<const cell> row, std::string& out) override {
        avro_value_reset(&value_);
        for (std::size_t i = 0; i < cols_.size(); ++i) {
            avro_value_t field;
            check(avro_value_get_by_index(&value_, i, &field, nullptr));
            const cell& c = row[i];
            avro_value_t v = field;
            if (cols_[i].nullable) {
                avro_value_t branch;
                if (c.k == cell::kind::null) {
                    check(avro_value_set_branch(&field, 0, &branch));
                    check(avro_value_set_null(&branch));
                    continue;
                }
                check(avro_value_set_branch(&field, 1, &branch));
                v = branch;
            }
            set(v, cols_[i].type, c);
        }
        std::size_t size = 0;
        check(avro_value_sizeof(&value_, &size));
        const std::size_t at = block_.size();
        block_.resize(at + size);
        avro_writer_t w = avro_writer_memory(block_.data() + at, static_cast<int64_t>(size));
        const int rc = avro_value_write(w, &value_);
        avro_writer_free(w);
        check(rc);
        ++count_;
        if (block_.size() >= o_.block_size) flush(out);
    }

    void finish(std::string& out) override {
        if (count_ > 0) flush(out);
    }

    [[nodiscard]] std::uint64_t buffered_bytes() const noexcept override { return block_.size(); }

private:
    static void check(int rc) {
        if (rc != 0) throw std::runtime_error{std::string{"avro: "} + avro_strerror()};
    }

    void set(avro_value_t& v, column_type t, const cell& c) {
        switch (t) {
            case column_type::string:
            case column_type::json:
                tmp_.assign(c.s);  // avro-c wants a NUL-terminated string; the size counts the NUL
                check(avro_value_set_string_len(&v, tmp_.c_str(), tmp_.size() + 1));
                return;
            case column_type::binary:
                check(avro_value_set_bytes(&v, const_cast<char*>(c.s.data()), c.s.size()));
                return;
            case column_type::int32:
            case column_type::date: check(avro_value_set_int(&v, static_cast<int32_t>(c.i))); return;
            case column_type::int64:
            case column_type::timestamp_ms:
            case column_type::timestamp_us: check(avro_value_set_long(&v, c.i)); return;
            case column_type::float32: check(avro_value_set_float(&v, static_cast<float>(c.d))); return;
            case column_type::float64: check(avro_value_set_double(&v, c.d)); return;
            case column_type::boolean: check(avro_value_set_boolean(&v, c.i != 0 ? 1 : 0)); return;
            case column_type::map:
                for (const auto& [k, val] : c.entries) {
                    avro_value_t e;
                    tmp_.assign(k);
                    check(avro_value_add(&v, tmp_.c_str(), &e, nullptr, nullptr));
                    tmp_.assign(val);
                    check(avro_value_set_string_len(&e, tmp_.c_str(), tmp_.size() + 1));
                }
                return;
        }
    }

    void flush(std::string& out) {
        std::string_view data = block_;
        switch (o_.codec) {
            case avro_codec::null: break;
            case avro_codec::deflate: {
                z_stream z{};
                if (deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) std::abort();
                zbuf_.resize(deflateBound(&z, block_.size()) + 16);
                z.next_in = reinterpret_cast<Bytef*>(block_.data());
                z.avail_in = static_cast<uInt>(block_.size());
                z.next_out = reinterpret_cast<Bytef*>(zbuf_.data());
                z.avail_out = static_cast<uInt>(zbuf_.size());
                if (deflate(&z, Z_FINISH) != Z_STREAM_END) std::abort();
                zbuf_.resize(z.total_out);
                deflateEnd(&z);
                data = zbuf_;
                break;
            }
            case avro_codec::snappy: {
                std::size_t n = snappy_max_compressed_length(block_.size());
                zbuf_.resize(n + 4);
                if (snappy_compress(block_.data(), block_.size(), zbuf_.data(), &n) != SNAPPY_OK) std::abort();
                const auto crc = static_cast<std::uint32_t>(
                    crc32(0, reinterpret_cast<const Bytef*>(block_.data()), static_cast<uInt>(block_.size())));
                for (int b = 0; b < 4; ++b)
                    zbuf_[n + static_cast<std::size_t>(b)] = static_cast<char>(crc >> (24 - 8 * b));
                zbuf_.resize(n + 4);
                data = zbuf_;
                break;
            }
        }
        put_long(out, static_cast<std::int64_t>(count_));
        put_bytes(out, data);
        out.append(sync_, 16);
        block_.clear();
        count_ = 0;
    }

    std::vector<column> cols_;
    avro_options o_;
    std::string schema_json_;
    avro_schema_t schema_ = nullptr;
    avro_value_iface_t* iface_ = nullptr;
    avro_value_t value_{};
    char sync_[16]{};
    std::string block_, zbuf_, tmp_;
    std::uint64_t count_ = 0;
};

}  // namespace

std::unique_ptr<table_writer> make_avro_writer(std::vector<column> cols, avro_options o) {
    return std::make_unique<avro_writer>(std::move(cols), o);
}

}  // namespace iss::format
