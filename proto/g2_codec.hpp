// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// What the G2 codecs' two halves share, the client's (`g2_commands.cpp`, `g2_framing.cpp`,
/// `g2_batch.cpp`, target proto) and the server's (`proto/server/g2_*.cpp`, target
/// proto_server): names and option blocks as G2 writes them, the trailing-bytes check, the
/// header checks of a frame, and the batch and frame layouts with their one reader and writer.
/// Included by those .cpp files only.

#include "proto/error.hpp"
#include "proto/g2_batch.hpp"
#include "proto/g2_framing.hpp"
#include "proto/message.hpp"
#include "proto/wire.hpp"

#include <fmt/format.h>
#include <xxhash.h>

#include <cstring>
#include <string>
#include <string_view>

namespace iss::proto::g2::detail {

/// A u8-length name of 1..255 bytes.
inline result<void> put_name(writer& w, const std::string& s, std::string_view field) {
    if (s.empty() || s.size() > 255) return iss::error{errc::invalid_length, fmt::format("{} (1..255 bytes)", field)};
    w.u8(static_cast<std::uint8_t>(s.size()));
    w.text(s);
    return {};
}

/// An options block (u32 length, text); the sink sends none.
inline result<void> put_options(writer& w, std::string_view options) {
    w.u32(static_cast<std::uint32_t>(options.size()));
    w.text(options);
    return {};
}

/// `what (trailing bytes)` when `r` has bytes left.
inline result<void> no_trailing(const reader& r, std::string_view what) {
    if (!r.empty()) return iss::error{errc::inconsistent, fmt::format("{} (trailing bytes)", what)};
    return {};
}

}  // namespace iss::proto::g2::detail

namespace iss::proto::g2::framing_codec {

/// A `truncated` error naming `what`.
inline iss::error short_input(std::string_view what) { return iss::error{errc::truncated, std::string{what}}; }

/// The size of a frame of kind `want` after checking its header's command and size fields.
inline result<std::uint32_t> checked_size(bytes_view frame, frame_kind want, std::string_view what) {
    if (frame.size() < header_size) return short_input(fmt::format("{}.header", what));
    const auto cmd = static_cast<std::uint8_t>(frame[off::command]);
    if (cmd != static_cast<std::uint8_t>(want))
        return iss::error{errc::unexpected_code,
                          fmt::format("{}.command ({}, expected {})", what, cmd, static_cast<unsigned>(want))};
    const auto size = load_le<std::uint32_t>(frame.data() + off::size);
    if (size < header_size) return iss::error{errc::invalid_length, fmt::format("{}.size ({} < 256)", what, size)};
    return size;
}

}  // namespace iss::proto::g2::framing_codec

namespace iss::proto::g2::batch_codec {

// BatchHeader field offsets.
inline constexpr std::size_t bh_partition = 0, bh_base_offset = 8, bh_base_ts = 16, bh_origin = 24, bh_length = 32,
                             bh_checksum = 40, bh_count = 48, bh_reserved = 52;
// Frame field offsets.
inline constexpr std::size_t fr_checksum = 0, fr_id = 8, fr_offset_delta = 24, fr_ts_delta = 28, fr_uh_len = 32,
                             fr_p_len = 36, fr_reserved = 40;

inline void write_batch_header(std::byte* p, const batch_header& h) noexcept {
    std::memset(p, 0, batch_header_size);
    store_le(p + bh_partition, h.partition_id);
    store_le(p + bh_base_offset, h.base_offset);
    store_le(p + bh_base_ts, h.base_timestamp);
    store_le(p + bh_origin, h.origin_timestamp);
    store_le(p + bh_length, h.batch_length);
    store_le(p + bh_checksum, h.batch_checksum);
    store_le(p + bh_count, h.message_count);
}

inline batch_header read_batch_header(const std::byte* p) noexcept {
    batch_header h;
    h.partition_id = load_le<std::uint64_t>(p + bh_partition);
    h.base_offset = load_le<std::uint64_t>(p + bh_base_offset);
    h.base_timestamp = load_le<std::uint64_t>(p + bh_base_ts);
    h.origin_timestamp = load_le<std::uint64_t>(p + bh_origin);
    h.batch_length = load_le<std::uint64_t>(p + bh_length);
    h.batch_checksum = load_le<std::uint64_t>(p + bh_checksum);
    h.message_count = load_le<std::uint32_t>(p + bh_count);
    return h;
}

inline bool reserved_zero(const std::byte* p) noexcept {
    for (std::size_t i = bh_reserved; i < batch_header_size; ++i)
        if (p[i] != std::byte{0}) return false;
    return true;
}

inline std::uint64_t frame_checksum(const std::byte* frame, std::size_t size) noexcept {
    return XXH3_64bits(frame + 8, size - 8);
}

/// Writes one frame at `p` (room checked by the caller); returns its checksum.
inline std::uint64_t write_frame(std::byte* p, const message_fields& m, std::uint32_t offset_delta,
                                 std::uint32_t ts_delta) noexcept {
    store_le<u128>(p + fr_id, m.id);
    store_le(p + fr_offset_delta, offset_delta);
    store_le(p + fr_ts_delta, ts_delta);
    store_le(p + fr_uh_len, static_cast<std::uint32_t>(m.user_headers.size()));
    store_le(p + fr_p_len, static_cast<std::uint32_t>(m.payload.size()));
    store_le<std::uint64_t>(p + fr_reserved, 0);
    if (!m.payload.empty()) std::memcpy(p + frame_header_size, m.payload.data(), m.payload.size());
    if (!m.user_headers.empty())
        std::memcpy(p + frame_header_size + m.payload.size(), m.user_headers.data(), m.user_headers.size());
    const std::size_t size = frame_header_size + m.payload.size() + m.user_headers.size();
    const std::uint64_t sum = frame_checksum(p, size);
    store_le(p + fr_checksum, sum);
    return sum;
}

inline iss::error server(server_errc e, std::string detail) {
    return iss::error{make_error_code(e), std::move(detail)};
}

/// A frame's name in error messages, `<prefix>[<index>]<suffix>`: built only when an error is
/// reported (formatting it for every frame cost more than reading the frame).
struct frame_name {
    std::string_view prefix;
    std::uint32_t index = 0;
    [[nodiscard]] std::string operator()(std::string_view suffix) const {
        return fmt::format("{}[{}]{}", prefix, index, suffix);
    }
};

/// One frame at the start of `in` decoded into a message_view (offset/timestamps resolved
/// against `h`). `field` names it in errors.
inline result<message_view> read_frame(bytes_view in, const batch_header& h, const message_limits& limits,
                                       const frame_name& field) {
    if (in.size() < frame_header_size) return iss::error{errc::truncated, field(".header")};
    const std::byte* p = in.data();
    const auto uh_len = load_le<std::uint32_t>(p + fr_uh_len);
    const auto p_len = load_le<std::uint32_t>(p + fr_p_len);
    if (p_len > limits.max_payload) return iss::error{errc::limit_exceeded, field(".payload_length")};
    if (uh_len > limits.max_user_headers) return iss::error{errc::limit_exceeded, field(".user_headers_length")};
    const std::size_t size = frame_header_size + std::size_t{p_len} + uh_len;
    if (in.size() < size) return iss::error{errc::truncated, field(".payload")};
    message_view m;
    m.checksum = load_le<std::uint64_t>(p + fr_checksum);
    m.id = load_le<u128>(p + fr_id);
    m.offset = h.base_offset + load_le<std::uint32_t>(p + fr_offset_delta);
    m.timestamp = h.base_timestamp;
    m.origin_timestamp = h.origin_timestamp + load_le<std::uint32_t>(p + fr_ts_delta);
    m.reserved = load_le<std::uint64_t>(p + fr_reserved);
    m.payload = in.subspan(frame_header_size, p_len);
    m.user_headers = in.subspan(frame_header_size + p_len, uh_len);
    m.raw = in.first(size);
    return m;
}

}  // namespace iss::proto::g2::batch_codec
