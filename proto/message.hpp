// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Iggy messages in G1 (docs/protocol.md §6.1) and their user headers (§2.6), as views into a
/// receive buffer: no copy and no allocation per message.
///
/// Message layout (64-byte header, then the payload, then the user headers):
/// ```
/// 0 checksum u64 | 8 id u128 | 24 offset u64 | 32 timestamp u64 | 40 origin_timestamp u64 |
/// 48 user_headers_length u32 | 52 payload_length u32 | 56 reserved u64 | 64 payload | 64+P headers
/// ```
/// The checksum is XXH3-64 (seed 0) over bytes [8, 64+P+H) (§6.1), computed by the server.
///
/// User headers block: entries back to back, no count prefix:
/// `[key_kind u8][key_len u32][key][value_kind u8][value_len u32][value]`.
///
/// Lifetime: every view here points into the caller's buffer and is valid while it is.

#include "proto/wire.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>
#include <vector>

namespace iss::proto {

/// Size of the G1 message header.
inline constexpr std::size_t message_header_size = 64;
/// Largest payload a message may carry (§10; the server answers 4022 above it).
inline constexpr std::size_t max_payload_size = 64'000'000;
/// Largest user headers block of one message (§10; the server answers 4017 above it).
inline constexpr std::size_t max_user_headers_size = 100'000;
/// Longest header key or value (the SDKs enforce 1..255; the server does not check).
inline constexpr std::size_t max_header_field_size = 255;

/// The kind of a user-header key or value (§2.6). Kind 0 is invalid.
enum class header_kind : std::uint8_t {
    raw = 1,
    string = 2,
    boolean = 3,
    int8 = 4,
    int16 = 5,
    int32 = 6,
    int64 = 7,
    int128 = 8,
    uint8 = 9,
    uint16 = 10,
    uint32 = 11,
    uint64 = 12,
    uint128 = 13,
    float32 = 14,
    float64 = 15,
};

/// True for 1..15.
constexpr bool is_valid_header_kind(std::uint8_t k) noexcept { return k >= 1 && k <= 15; }
/// The fixed size in bytes of a kind's value (bool 1, int32 4, ...), or 0 for raw and string.
std::size_t header_kind_size(header_kind k) noexcept;
/// "raw", "string", "bool", "int8" ... "float64" (lower case, stable: used in JSON output).
std::string_view header_kind_name(header_kind k) noexcept;

/// A typed header key or value. Raw bytes stay a view; strings are views (UTF-8 not checked
/// here: `decode_header_value` checks it).
using header_value = std::variant<bytes_view,        // raw
                                  std::string_view,  // string
                                  bool, std::int8_t, std::int16_t, std::int32_t, std::int64_t, i128, std::uint8_t,
                                  std::uint16_t, std::uint32_t, std::uint64_t, u128, float, double>;

/// Decodes one key or value by its kind: `invalid_length` if a fixed-size kind has the wrong
/// size, `invalid_value` for a bool that is not 0 or 1, `invalid_utf8` for a bad string.
result<header_value> decode_header_value(header_kind kind, bytes_view bytes);

/// One user header entry, as views into the block.
struct header_view {
    header_kind key_kind;
    bytes_view key;
    header_kind value_kind;
    bytes_view value;

    /// The key as text (meaningful when key_kind is string).
    [[nodiscard]] std::string_view key_text() const noexcept { return as_text(key); }
    /// The value as text (meaningful when value_kind is string).
    [[nodiscard]] std::string_view value_text() const noexcept { return as_text(value); }
};

/// Reads a user headers block entry by entry. Each entry is checked: both kinds 1..15
/// (`unknown_kind`), lengths inside the block (`truncated`), fixed-size kinds of their size
/// (`invalid_length`). Key and value lengths of 0 or over 255 are accepted: the server does
/// not reject them (§2.6), so a consumer must not either. Errors name the entry and field
/// (`"user_headers[2].value_kind"`).
class header_reader {
public:
    explicit header_reader(bytes_view block) noexcept : rest_{block} {}
    /// The next entry; nullopt at the end of the block.
    result<std::optional<header_view>> next();

private:
    bytes_view rest_;
    std::size_t index_ = 0;
};

/// Decodes a whole block into `out` (cleared first; its capacity is reused).
result<void> decode_user_headers(bytes_view block, std::vector<header_view>& out);
/// Checks a whole block; returns the number of entries.
result<std::size_t> validate_user_headers(bytes_view block);

/// Appends one header entry to a block being built. Enforces the SDK rules: key and value
/// 1..255 bytes (`invalid_length`), fixed sizes per kind, kinds 1..15.
result<void> append_user_header(byte_buffer& block, header_kind key_kind, bytes_view key, header_kind value_kind,
                                bytes_view value);
/// Appends the bytes of a typed value (for building headers): the value's natural kind.
header_kind header_value_kind(const header_value& v) noexcept;
/// The little-endian bytes of a typed value, appended to `out`.
void append_header_value_bytes(byte_buffer& out, const header_value& v);

/// One message as polled (§6.1): the header's fields plus views of its payload, its user
/// headers block and the whole message (`raw`, 64 + P + H bytes, for checksums and copying).
struct message_view {
    std::uint64_t checksum = 0;
    u128 id = 0;
    std::uint64_t offset = 0;
    std::uint64_t timestamp = 0;         ///< server append time, µs since the Unix epoch
    std::uint64_t origin_timestamp = 0;  ///< producer clock as sent (µs for Rust/Go, ms for Node 0.8.0)
    std::uint64_t reserved = 0;
    bytes_view payload;
    bytes_view user_headers;  ///< the §2.6 block, not parsed: use header_reader
    bytes_view raw;           ///< the whole message, header included

    /// XXH3-64 (seed 0) over raw[8 .. end): what the server stores in `checksum`.
    [[nodiscard]] std::uint64_t compute_checksum() const noexcept;
    /// True if `checksum` matches the bytes.
    [[nodiscard]] bool checksum_ok() const noexcept { return compute_checksum() == checksum; }
    /// Same bytes (the whole message), wherever they are.
    friend bool operator==(const message_view& a, const message_view& b) noexcept {
        return a.raw.size() == b.raw.size() &&
               (a.raw.empty() || std::memcmp(a.raw.data(), b.raw.data(), a.raw.size()) == 0);
    }
};

/// XXH3-64 (seed 0) of a message's bytes from offset 8 to its end (`message` is 64+P+H bytes).
std::uint64_t message_checksum(bytes_view message) noexcept;

/// Limits a message decoder applies.
struct message_limits {
    std::size_t max_payload = max_payload_size;            ///< bytes; `limit_exceeded` above
    std::size_t max_user_headers = max_user_headers_size;  ///< bytes; `limit_exceeded` above
};

/// Decodes the message at the start of `in` (header, payload, headers); `field` prefixes
/// error details (e.g. "poll_reply.messages[3]"). Does not parse the user headers block.
result<message_view> decode_message(bytes_view in, std::string_view field = "message",
                                    const message_limits& limits = {});

/// A message to send or to serve: the fields a producer (or the test broker) sets.
struct message_fields {
    u128 id = 0;
    std::uint64_t offset = 0;            ///< 0 on send
    std::uint64_t timestamp = 0;         ///< 0 on send
    std::uint64_t origin_timestamp = 0;  ///< µs
    bytes_view payload;
    bytes_view user_headers;  ///< an already built §2.6 block (may be empty)
};

/// Appends a message (64-byte header + payload + headers) to `out`. When `with_checksum`, the
/// checksum field is XXH3-64 of the bytes (what a server sends); otherwise 0 (what a client
/// sends). Errors: payload or headers over the limits (`limit_exceeded`).
result<void> append_message(byte_buffer& out, const message_fields& m, bool with_checksum,
                            const message_limits& limits = {});

}  // namespace iss::proto
