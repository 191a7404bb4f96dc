// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Internal to lib/iceberg: a libavro (avro-c) generic value of one schema, with the setters
/// and getters the manifest code needs (by field name, unions with null as branch 0), and
/// the encoding of one datum into a block. Errors of libavro are bugs here (the schemas are
/// ours) and throw; reading a foreign file returns false instead.

#include <avro.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace iss::iceberg::detail {

/// Owns a parsed schema, its generic class and one value of it.
class avro_datum {
public:
    /// \throws std::runtime_error when the schema does not parse (a bug for our schemas).
    explicit avro_datum(std::string_view schema_json);
    ~avro_datum();
    avro_datum(const avro_datum&) = delete;
    avro_datum& operator=(const avro_datum&) = delete;

    avro_value_t& root() noexcept { return value_; }
    void reset();
    /// Appends the encoded value to `block`.
    void encode(std::string& block);
    /// Reads the next datum of `reader` into the value; false at the end or on bad bytes.
    bool read(avro_reader_t reader);

private:
    avro_schema_t schema_ = nullptr;
    avro_value_iface_t* iface_ = nullptr;
    avro_value_t value_{};
};

/// Throws on a libavro error (our own schemas: a bug).
void check(int rc);
/// The field `name` of record `rec`.
avro_value_t member(avro_value_t& rec, const char* name);
/// Sets a `["null", T]` union to its T branch and returns it; or to null.
avro_value_t some(avro_value_t& u);
void none(avro_value_t& u);
void set_string(avro_value_t& v, std::string_view s);
void set_bytes(avro_value_t& v, std::string_view s);

/// Reading: a field that may be absent (v1 lists), a union that may be null.
bool find(avro_value_t& rec, const char* name, avro_value_t& out);
/// For a union: its current branch, or nullopt when it is the null branch; a non-union is itself.
std::optional<avro_value_t> present(avro_value_t& v);
std::int64_t get_long(avro_value_t& v);  ///< int or long
std::string get_bytes(avro_value_t& v);  ///< bytes or string
bool get_bool(avro_value_t& v);

}  // namespace iss::iceberg::detail
