// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The G1 message header (proto/message.hpp, docs/protocol.md §6.1) by field name: its offsets
/// and the one reader of its fields, for every decoder of messages (a message, a poll reply,
/// the test broker's send) and the one writer.

#include "proto/message.hpp"

#include <cstddef>
#include <cstdint>

namespace iss::proto::message_header {

inline constexpr std::size_t checksum = 0;              ///< u64, XXH3-64 of [8, 64+P+H)
inline constexpr std::size_t id = 8;                    ///< u128
inline constexpr std::size_t offset = 24;               ///< u64
inline constexpr std::size_t timestamp = 32;            ///< u64, µs
inline constexpr std::size_t origin_timestamp = 40;     ///< u64
inline constexpr std::size_t user_headers_length = 48;  ///< u32 (H)
inline constexpr std::size_t payload_length = 52;       ///< u32 (P)
inline constexpr std::size_t reserved = 56;             ///< u64
static_assert(reserved + 8 == message_header_size);

/// The two lengths of the message whose header starts at `p`. \pre 64 bytes readable at `p`.
struct lengths {
    std::uint32_t user_headers = 0;
    std::uint32_t payload = 0;
};
[[nodiscard]] inline lengths read_lengths(const std::byte* p) noexcept {
    return {load_le<std::uint32_t>(p + user_headers_length), load_le<std::uint32_t>(p + payload_length)};
}

/// Reads the header at `p` into `m` (checksum, id, offset, timestamps, reserved) and returns
/// the two lengths; `m`'s views are the caller's to set. \pre 64 bytes readable at `p`.
[[nodiscard]] inline lengths read(const std::byte* p, message_view& m) noexcept {
    m.checksum = load_le<std::uint64_t>(p + checksum);
    m.id = load_le<u128>(p + id);
    m.offset = load_le<std::uint64_t>(p + offset);
    m.timestamp = load_le<std::uint64_t>(p + timestamp);
    m.origin_timestamp = load_le<std::uint64_t>(p + origin_timestamp);
    m.reserved = load_le<std::uint64_t>(p + reserved);
    return read_lengths(p);
}

/// Writes the header of `m` at `p`, checksum and reserved 0. \pre 64 bytes writable at `p`.
inline void write(std::byte* p, const message_fields& m) noexcept {
    store_le<std::uint64_t>(p + checksum, 0);
    store_le<u128>(p + id, m.id);
    store_le<std::uint64_t>(p + offset, m.offset);
    store_le<std::uint64_t>(p + timestamp, m.timestamp);
    store_le<std::uint64_t>(p + origin_timestamp, m.origin_timestamp);
    store_le<std::uint32_t>(p + user_headers_length, static_cast<std::uint32_t>(m.user_headers.size()));
    store_le<std::uint32_t>(p + payload_length, static_cast<std::uint32_t>(m.payload.size()));
    store_le<std::uint64_t>(p + reserved, 0);
}

}  // namespace iss::proto::message_header
