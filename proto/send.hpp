// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// SendMessages (101) request (docs/protocol.md §6.2):
/// ```
/// metadata_length u32 (= size of the next four fields)
/// stream Id | topic Id | Partitioning | messages_count u32
/// index: messages_count × [0 u32][end_position u32][0 u64]   (end_position cumulative)
/// messages: each as in §6.1, checksum/offset/timestamp 0
/// ```
/// The client encoder writes the whole frame (header included) into ONE contiguous buffer,
/// sized once. The server decoder follows the 0.8.0 server's checks and order; its errors
/// carry the status the server answers (category `iggy`: 3, 6, 4009, 4017, 4022, 4031, 4032,
/// 4033, 4036, 4100) with a detail naming the field, so a test broker can answer
/// `e.code().value()` directly (`server_status_for_decode_error` does that).

#include "proto/framing.hpp"
#include "proto/message.hpp"
#include "proto/types.hpp"

#include <span>
#include <vector>

namespace iss::proto {

/// Size of one SendMessages index entry.
inline constexpr std::size_t send_index_entry_size = 16;

/// Appends a whole SendMessages request frame ([length][101][payload]) for `messages` to
/// `out`, growing it once. Errors (nothing appended): an empty batch (`invalid_value`,
/// "send_messages.messages"; the SDKs refuse it), a payload or headers block over its limit
/// (`limit_exceeded`, naming the message), a bad identifier or key (`invalid_length`), a frame
/// over 4 GiB (`limit_exceeded`). Message checksum, offset and timestamp are written as 0.
result<void> append_send_messages(byte_buffer& out, const identifier& stream, const identifier& topic,
                                  const partitioning& part, std::span<const message_fields> messages);

/// A decoded SendMessages request (server side): metadata plus views of the messages in the
/// request payload (valid while that buffer is).
struct send_messages_view {
    identifier stream;
    identifier topic;
    partitioning part;
    std::vector<message_view> messages;
    friend bool operator==(const send_messages_view&, const send_messages_view&) = default;
};

/// Decodes and validates a SendMessages payload as the 0.8.0 server does (see the file note
/// for the error codes; server side: target proto_server, proto/server/g1_requests.cpp). `out.messages` is cleared first and its capacity reused.
result<void> decode_send_messages(bytes_view payload, send_messages_view& out);

}  // namespace iss::proto
