// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// A write-only encoder for the Thrift compact protocol, the encoding of Parquet's page
/// headers and file footer (the Parquet format spec's `parquet.thrift`, serialized with
/// TCompactProtocol). Only what those structs use: struct fields (i16 delta headers), bool,
/// i16, i32, i64 (zigzag varints), binary, and lists of i32, binary and structs.
///
/// Compact protocol facts (Thrift's THRIFT-110 spec, "compact protocol"):
/// - field header: one byte `delta << 4 | type` when the field id grows by 1..15 since the
///   previous field of the same struct, else the type byte and the id as a zigzag varint;
/// - types: 1 true, 2 false (a bool is its header), 4 i16, 5 i32, 6 i64, 8 binary, 9 list, 12 struct;
/// - a struct ends with a 0 byte; a list header is `size << 4 | elem` for size < 15, else
///   `0xF0 | elem` and the size as a varint.
///
/// A hand-written encoder rather than Debian's libthrift: Parquet needs about a dozen write-only
/// structs, and libthrift would bring generated code (the thrift compiler at build time), a
/// runtime library with its own transports and exceptions, for less code than this header.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace iss::format::thrift {

enum class ttype : std::uint8_t {
    bool_true = 1,
    bool_false = 2,
    i8 = 3,
    i16 = 4,
    i32 = 5,
    i64 = 6,
    binary = 8,
    list = 9,
    structure = 12
};

/// Appends compact-protocol bytes to a string. Call `end_struct()` for every struct begun,
/// and once more at the end for the top-level struct.
class compact_writer {
public:
    explicit compact_writer(std::string& out) : out_{out} {}

    void i16(std::int16_t id, std::int16_t v) {
        field(id, ttype::i16);
        varint(zigzag(v));
    }
    void i32(std::int16_t id, std::int32_t v) {
        field(id, ttype::i32);
        varint(zigzag(v));
    }
    void i64(std::int16_t id, std::int64_t v) {
        field(id, ttype::i64);
        varint(zigzag(v));
    }
    void boolean(std::int16_t id, bool v) { field(id, v ? ttype::bool_true : ttype::bool_false); }
    void binary(std::int16_t id, std::string_view v) {
        field(id, ttype::binary);
        raw_binary(v);
    }
    /// A nested struct field; its fields follow, then `end_struct()`.
    void begin_struct(std::int16_t id) {
        field(id, ttype::structure);
        last_.push_back(0);
    }
    void end_struct() {
        out_ += '\0';
        if (last_.size() > 1) last_.pop_back();
        else last_.back() = 0;
    }
    /// A list field of `n` elements of `elem`; then write the elements with the `elem_*` calls.
    void begin_list(std::int16_t id, ttype elem, std::size_t n) {
        field(id, ttype::list);
        const auto e = static_cast<std::uint8_t>(elem);
        if (n < 15) {
            out_ += static_cast<char>((n << 4) | e);
        } else {
            out_ += static_cast<char>(0xF0 | e);
            varint(n);
        }
    }
    void elem_i32(std::int32_t v) { varint(zigzag(v)); }
    void elem_binary(std::string_view v) { raw_binary(v); }
    /// A struct element of a list: its fields, then `end_struct()`.
    void begin_elem_struct() { last_.push_back(0); }

private:
    static std::uint64_t zigzag(std::int64_t v) {
        return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
    }
    void varint(std::uint64_t v) {
        while (v >= 0x80) {
            out_ += static_cast<char>((v & 0x7F) | 0x80);
            v >>= 7;
        }
        out_ += static_cast<char>(v);
    }
    void raw_binary(std::string_view v) {
        varint(v.size());
        out_.append(v);
    }
    void field(std::int16_t id, ttype t) {
        const int delta = id - last_.back();
        if (delta > 0 && delta <= 15) {
            out_ += static_cast<char>((delta << 4) | static_cast<int>(t));
        } else {
            out_ += static_cast<char>(t);
            varint(zigzag(id));
        }
        last_.back() = id;
    }

    std::string& out_;
    std::vector<std::int16_t> last_{0};
};

}  // namespace iss::format::thrift
