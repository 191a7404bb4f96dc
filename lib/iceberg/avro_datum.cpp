// SPDX-License-Identifier: Apache-2.0
#include "iceberg/avro_datum.hpp"

#include "format/avro_container.hpp"

#include <stdexcept>
#include <string>

namespace iss::iceberg::detail {

void check(int rc) {
    if (rc != 0) throw std::runtime_error{std::string{"avro: "} + avro_strerror()};
}

avro_datum::avro_datum(std::string_view schema_json) {
    check(avro_schema_from_json_length(schema_json.data(), schema_json.size(), &schema_));
    iface_ = avro_generic_class_from_schema(schema_);
    if (iface_ == nullptr) check(1);
    check(avro_generic_value_new(iface_, &value_));
}

avro_datum::~avro_datum() {
    avro_value_decref(&value_);
    avro_value_iface_decref(iface_);
    avro_schema_decref(schema_);
}

void avro_datum::reset() { check(avro_value_reset(&value_)); }

void avro_datum::encode(std::string& block) { format::avro_ocf::append_datum(block, value_); }

bool avro_datum::read(avro_reader_t reader) { return avro_value_read(reader, &value_) == 0; }

avro_value_t member(avro_value_t& rec, const char* name) {
    avro_value_t f;
    check(avro_value_get_by_name(&rec, name, &f, nullptr));
    return f;
}

avro_value_t some(avro_value_t& u) {
    avro_value_t b;
    check(avro_value_set_branch(&u, 1, &b));
    return b;
}

void none(avro_value_t& u) {
    avro_value_t b;
    check(avro_value_set_branch(&u, 0, &b));
    check(avro_value_set_null(&b));
}

void set_string(avro_value_t& v, std::string_view s) {
    const std::string z{s};  // avro-c wants a NUL-terminated string; the size counts the NUL
    check(avro_value_set_string_len(&v, z.c_str(), z.size() + 1));
}

void set_bytes(avro_value_t& v, std::string_view s) {
    check(avro_value_set_bytes(&v, const_cast<char*>(s.data()), s.size()));
}

bool find(avro_value_t& rec, const char* name, avro_value_t& out) {
    return avro_value_get_by_name(&rec, name, &out, nullptr) == 0;
}

std::optional<avro_value_t> present(avro_value_t& v) {
    if (avro_value_get_type(&v) != AVRO_UNION) return v;
    avro_value_t b;
    if (avro_value_get_current_branch(&v, &b) != 0) return std::nullopt;
    if (avro_value_get_type(&b) == AVRO_NULL) return std::nullopt;
    return b;
}

std::int64_t get_long(avro_value_t& v) {
    if (avro_value_get_type(&v) == AVRO_INT32) {
        int32_t i = 0;
        check(avro_value_get_int(&v, &i));
        return i;
    }
    int64_t l = 0;
    check(avro_value_get_long(&v, &l));
    return l;
}

std::string get_bytes(avro_value_t& v) {
    const void* p = nullptr;
    std::size_t n = 0;
    if (avro_value_get_type(&v) == AVRO_STRING) {
        const char* s = nullptr;
        check(avro_value_get_string(&v, &s, &n));
        return std::string{s, n > 0 ? n - 1 : 0};  // the size counts the NUL
    }
    check(avro_value_get_bytes(&v, &p, &n));
    return std::string{static_cast<const char*>(p), n};
}

bool get_bool(avro_value_t& v) {
    int b = 0;
    check(avro_value_get_boolean(&v, &b));
    return b != 0;
}

}  // namespace iss::iceberg::detail
