// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Little-endian primitives of the Iggy wire format (docs/protocol.md, "Conventions"): a
/// bounds-checked `reader` over a byte span and a `writer` that appends to a byte buffer.
///
/// Every `reader` method checks the remaining length first and returns an error naming the
/// field (`errc::truncated`, detail = the field name given by the caller); it never reads past
/// its input. The host must be little-endian (checked at compile time), so loads are memcpy.

#include "proto/error.hpp"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace iss::proto {

static_assert(std::endian::native == std::endian::little, "proto assumes a little-endian host");

/// A view of bytes (into a receive buffer, a request being built...). Never owns.
using bytes_view = std::span<const std::byte>;
/// An owned, growable byte buffer (frames being built, receive buffers).
using byte_buffer = std::vector<std::byte>;

/// Unsigned 128-bit integer (message ids, Uint128 header values), little-endian on the wire.
__extension__ typedef unsigned __int128 u128;
/// Signed 128-bit integer (Int128 header values).
__extension__ typedef __int128 i128;

/// The bytes of a string, as a byte view.
inline bytes_view as_bytes(std::string_view s) noexcept {
    return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}
/// The bytes of a view, as text (no UTF-8 check).
inline std::string_view as_text(bytes_view b) noexcept { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

/// Loads a little-endian T from `p` (the caller has checked the bounds).
template <class T>
inline T load_le(const std::byte* p) noexcept {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
}

/// Stores a little-endian T at `p` (the caller has checked the bounds).
template <class T>
inline void store_le(std::byte* p, T v) noexcept {
    std::memcpy(p, &v, sizeof(T));
}

/// True if `s` is well-formed UTF-8 (no overlongs, no surrogates, at most U+10FFFF).
bool is_valid_utf8(std::string_view s) noexcept;

/// A bounds-checked cursor over a byte span. Each read names its field for the error detail.
class reader {
public:
    explicit reader(bytes_view data) noexcept : data_{data} {}

    [[nodiscard]] std::size_t position() const noexcept { return pos_; }
    [[nodiscard]] std::size_t remaining() const noexcept { return data_.size() - pos_; }
    [[nodiscard]] bool empty() const noexcept { return pos_ == data_.size(); }
    /// The bytes not read yet.
    [[nodiscard]] bytes_view rest() const noexcept { return data_.subspan(pos_); }

    result<std::uint8_t> u8(std::string_view field) noexcept { return scalar<std::uint8_t>(field); }
    result<std::uint16_t> u16(std::string_view field) noexcept { return scalar<std::uint16_t>(field); }
    result<std::uint32_t> u32(std::string_view field) noexcept { return scalar<std::uint32_t>(field); }
    result<std::uint64_t> u64(std::string_view field) noexcept { return scalar<std::uint64_t>(field); }
    result<u128> u128le(std::string_view field) noexcept { return scalar<u128>(field); }

    /// The next `n` bytes as a view into the input.
    result<bytes_view> bytes(std::size_t n, std::string_view field) noexcept {
        if (remaining() < n) return truncated(field);
        bytes_view v = data_.subspan(pos_, n);
        pos_ += n;
        return v;
    }

    /// A `name` (u8 length 1..255, then UTF-8 bytes): an empty name is `invalid_length`,
    /// bad UTF-8 is `invalid_utf8`.
    result<std::string_view> name(std::string_view field) noexcept;
    /// u8 length then bytes (0..255), UTF-8 checked.
    result<std::string_view> u8_text(std::string_view field) noexcept;
    /// u32 length then bytes (at most `max_len`, else `limit_exceeded`), UTF-8 checked.
    result<std::string_view> u32_text(std::string_view field, std::size_t max_len) noexcept;

    /// The error for a field the input ends inside.
    static iss::error truncated(std::string_view field) { return iss::error{errc::truncated, std::string{field}}; }

private:
    template <class T>
    result<T> scalar(std::string_view field) noexcept {
        if (remaining() < sizeof(T)) return truncated(field);
        T v = load_le<T>(data_.data() + pos_);
        pos_ += sizeof(T);
        return v;
    }

    bytes_view data_;
    std::size_t pos_ = 0;
};

/// Appends little-endian values to a byte buffer (it grows as needed).
class writer {
public:
    explicit writer(byte_buffer& out) noexcept : out_{&out} {}

    void u8(std::uint8_t v) { out_->push_back(static_cast<std::byte>(v)); }
    void u16(std::uint16_t v) { scalar(v); }
    void u32(std::uint32_t v) { scalar(v); }
    void u64(std::uint64_t v) { scalar(v); }
    void u128le(u128 v) { scalar(v); }
    void bytes(bytes_view b) { out_->insert(out_->end(), b.begin(), b.end()); }
    void text(std::string_view s) { bytes(as_bytes(s)); }
    /// Reserves `n` bytes (zeroed) and returns their offset, to be patched later.
    std::size_t skip(std::size_t n) {
        const std::size_t at = out_->size();
        out_->resize(at + n);
        return at;
    }
    /// Overwrites a u32 at `at` (a length patched after the body was written).
    void patch_u32(std::size_t at, std::uint32_t v) noexcept { store_le(out_->data() + at, v); }
    [[nodiscard]] std::size_t size() const noexcept { return out_->size(); }
    [[nodiscard]] byte_buffer& buffer() noexcept { return *out_; }

private:
    template <class T>
    void scalar(T v) {
        const std::size_t at = out_->size();
        out_->resize(at + sizeof(T));
        store_le(out_->data() + at, v);
    }
    byte_buffer* out_;
};

}  // namespace iss::proto
