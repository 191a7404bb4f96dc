// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The shared encodings of G1 request bodies (docs/protocol.md §2.1-2.5): Identifier,
/// Consumer, the 5-byte optional partition, the polling strategy and Partitioning.
///
/// Each type has `append_*(writer&, value)` (client and server encoders; checks the value and
/// returns an error naming the field) and `read_*(reader&, field)` (decoders: never read past
/// the input; errors name the field and follow the 0.8.0 server's classification, see
/// `server_status_for_decode_error`).

#include "proto/wire.hpp"

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <variant>

namespace iss::proto {

/// Identifier kind byte (§2.1).
enum class identifier_kind : std::uint8_t { numeric = 1, string = 2 };

/// A stream, topic, consumer-group or consumer identifier: a u32 or a name (1..255 bytes,
/// exact match, case-sensitive).
class identifier {
public:
    identifier() = default;
    /// Numeric identifier (0 is valid).
    static identifier numeric(std::uint32_t id) {
        identifier i;
        i.value_ = id;
        return i;
    }
    /// String identifier; `append_identifier` refuses an empty or over-255-byte name.
    static identifier named(std::string name) {
        identifier i;
        i.value_ = std::move(name);
        return i;
    }

    [[nodiscard]] identifier_kind kind() const noexcept {
        return value_.index() == 0 ? identifier_kind::numeric : identifier_kind::string;
    }
    [[nodiscard]] bool is_numeric() const noexcept { return value_.index() == 0; }
    /// The number (\pre is_numeric()).
    [[nodiscard]] std::uint32_t number() const noexcept { return std::get<0>(value_); }
    /// The name (\pre !is_numeric()).
    [[nodiscard]] const std::string& name() const noexcept { return std::get<1>(value_); }
    /// Encoded size in bytes (6 for numeric, 2 + name length for string).
    [[nodiscard]] std::size_t wire_size() const noexcept { return is_numeric() ? 6 : 2 + name().size(); }

    friend bool operator==(const identifier&, const identifier&) = default;
    /// "7" or "\"name\"".
    friend std::ostream& operator<<(std::ostream& os, const identifier& id);

private:
    std::variant<std::uint32_t, std::string> value_{std::uint32_t{0}};
};

/// Text form for logs and errors: `7` or `"orders"`.
std::string to_string(const identifier& id);
/// Text form for a structured log field, which the log writer quotes itself: `7` or `orders`.
std::string field_text(const identifier& id);

result<void> append_identifier(writer& w, const identifier& id, std::string_view field = "identifier");
/// Errors: unknown kind (`unknown_kind`, server 3), numeric with len != 4 or empty string
/// (`invalid_length`, server 4), truncated (server 3), bad UTF-8 (server 3).
result<identifier> read_identifier(reader& r, std::string_view field = "identifier");

/// Consumer kind (§2.2).
enum class consumer_kind : std::uint8_t { consumer = 1, group = 2 };

/// A consumer: a single consumer (kind 1) or a consumer group (kind 2), and its identifier.
struct consumer {
    consumer_kind kind = consumer_kind::consumer;
    identifier id;

    static consumer single(identifier id) { return {consumer_kind::consumer, std::move(id)}; }
    static consumer group(identifier id) { return {consumer_kind::group, std::move(id)}; }
    friend bool operator==(const consumer&, const consumer&) = default;
};

result<void> append_consumer(writer& w, const consumer& c, std::string_view field = "consumer");
result<consumer> read_consumer(reader& r, std::string_view field = "consumer");

/// The 5-byte optional partition id (§2.3): flag 1 + u32, or flag 0 + u32 0.
void append_optional_partition(writer& w, std::optional<std::uint32_t> partition_id);
/// Any flag other than 1 means absent (as the 0.8.0 server reads it).
result<std::optional<std::uint32_t>> read_optional_partition(reader& r, std::string_view field = "partition_id");

/// Polling strategy kind (§2.4).
enum class polling_kind : std::uint8_t { offset = 1, timestamp = 2, first = 3, last = 4, next = 5 };

/// Where a poll starts (§2.4). `value` is an offset (offset), µs (timestamp), else 0.
struct polling_strategy {
    polling_kind kind = polling_kind::next;
    std::uint64_t value = 0;

    static polling_strategy at_offset(std::uint64_t o) { return {polling_kind::offset, o}; }
    static polling_strategy at_timestamp(std::uint64_t us) { return {polling_kind::timestamp, us}; }
    static polling_strategy first() { return {polling_kind::first, 0}; }
    static polling_strategy last() { return {polling_kind::last, 0}; }
    static polling_strategy next() { return {polling_kind::next, 0}; }
    friend bool operator==(const polling_strategy&, const polling_strategy&) = default;
};

void append_polling_strategy(writer& w, const polling_strategy& s);
result<polling_strategy> read_polling_strategy(reader& r, std::string_view field = "strategy");

/// Partitioning kind (§2.5).
enum class partitioning_kind : std::uint8_t { balanced = 1, partition_id = 2, messages_key = 3 };

/// How SendMessages picks the partition (§2.5).
struct partitioning {
    partitioning_kind kind = partitioning_kind::balanced;
    std::uint32_t partition_id = 0;  ///< kind partition_id
    std::string key;                 ///< kind messages_key: raw bytes, 1..255 on encode

    static partitioning balanced() { return {}; }
    static partitioning to_partition(std::uint32_t id) { return {partitioning_kind::partition_id, id, {}}; }
    static partitioning by_key(std::string key) { return {partitioning_kind::messages_key, 0, std::move(key)}; }
    [[nodiscard]] std::size_t wire_size() const noexcept {
        return kind == partitioning_kind::balanced ? 2 : kind == partitioning_kind::partition_id ? 6 : 2 + key.size();
    }
    friend bool operator==(const partitioning&, const partitioning&) = default;
};

/// Encodes; a messages key outside 1..255 bytes is `invalid_length` (the SDKs' rule).
result<void> append_partitioning(writer& w, const partitioning& p);
/// Decodes as 0.8.0 does: balanced with len != 0, partition id with len != 4, or an unknown
/// kind is an error (server 3); a messages key of length 0 is accepted.
result<partitioning> read_partitioning(reader& r, std::string_view field = "partitioning");

}  // namespace iss::proto
