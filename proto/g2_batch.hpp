// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The G2 message batch (docs/protocol.md §8.6; docs/protocol.md §12.1, §4.6):
/// SendMessages bodies (client encodes, broker decodes) and PollMessages reply bodies (broker
/// encodes, client decodes), sans-io.
///
/// ```
/// BatchHeader (256 B): partition_id u64 | base_offset u64 | base_timestamp u64 |
///   origin_timestamp u64 | batch_length u64 (= 256 + frames) | batch_checksum u64 |
///   message_count u32 | bytes 52..255 reserved (0.9: zero; 0.10: flags at 52 + producer
///   identity, PROVISIONAL)
/// Frame (48 B + payload + user headers): checksum u64 | id u128 | offset_delta u32 |
///   timestamp_delta u32 | user_headers_length u32 | payload_length u32 | reserved u64 |
///   payload | user_headers
/// frame.checksum = XXH3-64(frame[8..end]); batch_checksum = XXH3-64(partition_id,
///   base_offset, base_timestamp, origin_timestamp, batch_length (u64 LE each), message_count
///   (u32 LE), then each frame checksum (u64 LE)).
/// ```
/// SendMessages body: `metadata_length u32 | stream | topic | Partitioning | messages_count u32
/// | batch`. Reply: `count u32 | count × (stream u32, topic u32, partition u32, base_offset u64)`;
/// a status-0 reply with an EMPTY body is a failure.
/// Poll reply: `partition_id u32 | current_offset u64 | messages_count u32 | records`, each
/// record a BatchHeader + frames; offset = base_offset + offset_delta (a sliced record keeps
/// its stored base, so deltas need not start at 0), timestamp = base_timestamp, origin =
/// origin_timestamp + timestamp_delta; step to the next record by batch_length.
///
/// Polled messages come out as `proto::message_view` (shared with G1): `raw` is the G2 frame,
/// so `checksum_ok()` (XXH3 of raw[8..]) is the frame checksum rule.

#include "proto/framing.hpp"
#include "proto/message.hpp"
#include "proto/poll.hpp"
#include "proto/types.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace iss::proto::g2 {

inline constexpr std::size_t batch_header_size = 256;
inline constexpr std::size_t frame_header_size = 48;

/// The fields of a BatchHeader.
struct batch_header {
    std::uint64_t partition_id = 0;      ///< 0 from a client
    std::uint64_t base_offset = 0;       ///< 0 from a client
    std::uint64_t base_timestamp = 0;    ///< 0 from a client; the server's append time on poll
    std::uint64_t origin_timestamp = 0;  ///< the smallest origin in the batch, µs
    std::uint64_t batch_length = 0;      ///< 256 + all frames
    std::uint64_t batch_checksum = 0;
    std::uint32_t message_count = 0;
    friend bool operator==(const batch_header&, const batch_header&) = default;
};

/// The batch checksum of a header's fields and the frames' checksums.
std::uint64_t compute_batch_checksum(const batch_header& h, std::span<const std::uint64_t> frame_checksums) noexcept;

/// SendMessages (101) in G2: the request struct for `g2::append_request`.
struct send_messages_request {
    static constexpr command code = command::send_messages;
    identifier stream;
    identifier topic;
    partitioning part;
    std::span<const message_fields> messages;  ///< offset/timestamp ignored; origin in µs
};
/// Writes the body: metadata, BatchHeader (origin = smallest origin), frames with their
/// checksums and the batch checksum computed. Errors: empty batch (`invalid_value`), a payload
/// or header block over the limits, an origin more than u32::MAX µs after the smallest
/// (`invalid_value`, "send_messages.messages[i].origin_timestamp"), bad identifiers/key.
result<void> encode_body(writer& w, const send_messages_request& req);

/// A decoded SendMessages body (server side): views of the frames as messages (offset =
/// offset_delta, timestamp 0, origin resolved), valid while the body buffer is.
struct send_messages_batch_view {
    identifier stream;
    identifier topic;
    partitioning part;
    batch_header header;
    std::vector<message_view> messages;
    friend bool operator==(const send_messages_batch_view& a, const send_messages_batch_view& b) {
        return a.stream == b.stream && a.topic == b.topic && a.part == b.part && a.header == b.header &&
               a.messages == b.messages;
    }
};
/// Decodes and verifies a SendMessages body as the 0.9 server does: metadata length, counts,
/// batch_length, reserved bytes 52..255 zero, every frame checksum (server error 4027
/// InvalidMessageChecksum) and the batch checksum (4039 InvalidBatchChecksum). Structural
/// errors are in the proto category naming the field.
result<void> decode_send_messages(bytes_view body, send_messages_batch_view& out, const message_limits& limits = {});

/// One SendMessages confirmation.
struct send_confirmation {
    std::uint32_t stream_id = 0;
    std::uint32_t topic_id = 0;
    std::uint32_t partition_id = 0;
    std::uint64_t base_offset = 0;
    friend bool operator==(const send_confirmation&, const send_confirmation&) = default;
};
void append_send_reply(byte_buffer& body, std::span<const send_confirmation> c);
/// An empty body is `inconsistent` ("send_messages_reply: empty body", the Go SDK's rule);
/// count 0 = accepted, offsets unknown.
result<std::vector<send_confirmation>> decode_send_reply(bytes_view body);

// ---- poll replies ---------------------------------------------------------------------------

/// What the poll decoder accepts.
struct poll_options {
    std::size_t max_reply = default_max_poll_reply;
    message_limits message{};
    /// Verify each frame checksum and each record's batch checksum (`checksum_mismatch`).
    bool verify_checksums = false;
    /// 0.10 (protocol 0.12.0, PROVISIONAL): tolerate non-zero bytes 52..255 of a BatchHeader
    /// (flags, producer identity) and skip the batch checksum (its producer-aware rule is not
    /// known); frame checksums are still verified when asked.
    bool producer_fields = false;
};

/// Decodes a poll reply body into `out` (cleared; capacity reused): messages in wire order
/// with resolved offsets and timestamps. Errors name the field ("poll_reply.records[1].frames[3]").
/// The message count must equal the frames found.
result<void> decode_batch_poll_reply(bytes_view body, poll_reply& out, const poll_options& o = {});

/// Builds a poll reply body (server side): `begin`, then `add` per message (consecutive
/// messages with the same timestamp and contiguous offsets share a record), then `finish`.
class batch_poll_writer {
public:
    explicit batch_poll_writer(byte_buffer& out) noexcept : out_{&out} {}
    void begin(std::uint32_t partition_id, std::uint64_t current_offset);
    /// Appends one stored message (offset, timestamp, origin, id, payload, headers).
    result<void> add(const message_fields& m);
    /// Appends one stored message that belongs to a stored batch whose first offset is
    /// `record_base_offset` and smallest origin `record_origin` (µs): consecutive messages of one
    /// stored batch share a record that keeps that base and origin, so the frames carry the
    /// producer's deltas (and so its frame checksums) even when the poll starts inside the
    /// batch; the record's length, count and batch checksum cover the frames written.
    /// `m.offset >= record_base_offset` and `m.origin_timestamp >= record_origin` are required
    /// (`invalid_value` otherwise).
    result<void> add(const message_fields& m, std::uint64_t record_base_offset, std::uint64_t record_origin);
    /// Closes the last record and patches the count; returns the body size.
    std::size_t finish();

private:
    void close_record();
    void open_record(std::uint64_t base_offset, std::uint64_t base_timestamp, std::uint64_t origin);
    result<void> append_frame(const message_fields& m);
    byte_buffer* out_;
    std::size_t start_ = 0;
    std::uint32_t partition_ = 0;
    std::uint32_t count_ = 0;
    bool open_ = false;
    std::size_t rec_ = 0;  // offset of the open record's header
    batch_header h_{};
    std::uint64_t next_offset_ = 0;
    std::vector<std::uint64_t> sums_;
};

}  // namespace iss::proto::g2
