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
// (avro_value_write); the container framing is ours (avro_container.cpp) because avro-c's file writer
// writes to a FILE* and draws a random sync marker, while an object must be streamed into
// the pipeline's part buffer and be the same bytes on a replay: the sync marker is derived
// from the schema text (XXH3-128), which any reader accepts (it only has to match between
// the header and the blocks).

#include "format/avro_container.hpp"
#include "format/json.hpp"
#include "format/table.hpp"

#include <avro.h>

#include <stdexcept>

namespace iss::format {

namespace {

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
        sync_ = avro_ocf::make_sync(schema_json_);
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
        avro_ocf::write_header(out, schema_json_, o_.codec, sync_);
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
        avro_ocf::append_datum(block_, value_);
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
        avro_ocf::write_block(out, count_, block_, o_.codec, sync_, zbuf_);
        block_.clear();
        count_ = 0;
    }

    std::vector<column> cols_;
    avro_options o_;
    std::string schema_json_;
    avro_schema_t schema_ = nullptr;
    avro_value_iface_t* iface_ = nullptr;
    avro_value_t value_{};
    avro_ocf::sync_marker sync_{};
    std::string block_, zbuf_, tmp_;
    std::uint64_t count_ = 0;
};

}  // namespace

std::unique_ptr<table_writer> make_avro_writer(std::vector<column> cols, avro_options o) {
    return std::make_unique<avro_writer>(std::move(cols), o);
}

}  // namespace iss::format
