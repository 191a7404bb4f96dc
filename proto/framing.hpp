// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// G1 framing (docs/protocol.md §3) and the incremental frame assembler.
///
/// ```
/// request : [length u32][code u32][payload]    length = 4 + payload size (counts the code)
/// reply   : [status u32][length u32][payload]  length = payload size; status 0 = OK
/// ```
/// An error reply is `[code][0]` with no payload. Control frames (every code but
/// SendMessages) carry at most 10 MiB of payload; a longer frame makes the connection unusable
/// (the server does not skip it), so the assembler stops at the first bad header.
///
/// `frame_assembler` is sans-io: the driver either copies received bytes in with `feed`, or
/// reads straight into the assembler with `prepare(n)` + `commit(n)`; then it calls `next()`
/// until it returns no frame. A frame view is valid until the next call to `feed`, `prepare`
/// or `next`. Bytes may arrive split at any boundary.

#include "proto/frame_buffer.hpp"
#include "proto/wire.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <span>
#include <string_view>
#include <utility>

namespace iss::proto {

/// G1 command codes (§5).
enum class command : std::uint32_t {
    ping = 1,
    get_me = 20,
    login_user = 38,
    logout_user = 39,
    login_with_personal_access_token = 44,
    poll_messages = 100,
    send_messages = 101,
    get_consumer_offset = 120,
    store_consumer_offset = 121,
    delete_consumer_offset = 122,
    get_stream = 200,
    get_streams = 201,
    create_stream = 202,
    delete_stream = 203,
    get_topic = 300,
    get_topics = 301,
    create_topic = 302,
    delete_topic = 303,
    create_partitions = 402,
    delete_partitions = 403,
    get_consumer_group = 600,
    get_consumer_groups = 601,
    create_consumer_group = 602,
    delete_consumer_group = 603,
    join_consumer_group = 604,
    leave_consumer_group = 605,
};

/// "PollMessages" etc. for the codes of either wire line: those of `command` (G1) and the
/// ones only G2 has (`g2::code`: LoginRegister 40, LoginRegisterWithPat 45, SyncConsumerGroup
/// 606, CreateUser 33); "Unknown" for any other code. The `command` label of
/// `iggy_s3_sink_iggy_requests_total` (lib/iggy/transport.hpp).
std::string_view command_name(std::uint32_t code) noexcept;
inline std::string_view command_name(command c) noexcept { return command_name(static_cast<std::uint32_t>(c)); }
/// True for the codes of `command` (G1: a 0.8 server answers 3 to SyncConsumerGroup 606).
bool is_known_command(std::uint32_t code) noexcept;
std::ostream& operator<<(std::ostream& os, command c);

inline constexpr std::size_t request_header_size = 8;
inline constexpr std::size_t reply_header_size = 8;
/// Payload cap of every request but SendMessages (`MAX_CONTROL_FRAME_PAYLOAD`, 10 MiB).
inline constexpr std::size_t max_control_payload = 10u * 1024 * 1024;
/// Our cap on a SendMessages payload (the server has none beyond the u32 length).
inline constexpr std::size_t default_max_send_payload = 256u * 1024 * 1024;

/// Starts a request frame in `out` (length patched by `finish_request`); returns its start.
std::size_t begin_request(byte_buffer& out, command code);
/// Patches the length of the request started at `start`.
void finish_request(byte_buffer& out, std::size_t start) noexcept;
// The reply writers below are the server side (target proto_server, proto/server/g1_replies.cpp).
/// Starts an OK reply frame (status 0); returns its start.
std::size_t begin_reply(byte_buffer& out);
/// Patches the length of the reply started at `start`.
void finish_reply(byte_buffer& out, std::size_t start) noexcept;
/// Appends a whole OK reply with the given payload.
void append_ok_reply(byte_buffer& out, bytes_view payload);
/// Appends an error reply `[status][0]` (status != 0).
void append_error_reply(byte_buffer& out, std::uint32_t status);

/// A received request: the raw code and a view of its payload.
struct request_frame {
    std::uint32_t code = 0;
    bytes_view payload;
};

/// A received reply: the status and a view of its payload.
struct reply_frame {
    std::uint32_t status = 0;
    bytes_view payload;
    [[nodiscard]] bool ok() const noexcept { return status == 0; }
};

/// The payload of an OK reply, or the server error (category `iggy`, value = status) otherwise.
result<bytes_view> ok_payload(const reply_frame& f);

/// Limits the assembler applies to each frame's header before buffering its payload.
struct frame_limits {
    std::size_t max_control_payload = proto::max_control_payload;  ///< requests except SendMessages
    std::size_t max_send_payload = default_max_send_payload;       ///< SendMessages requests
    std::size_t max_reply_payload = 64u * 1024 * 1024;             ///< replies (poll replies are the largest)
};

/// Which side of the connection an assembler reads.
enum class frame_direction { request, reply };

/// Incremental frame reader for one direction of one connection. After an error it stays
/// failed (the byte stream is out of step: close the connection).
class frame_assembler : public frame_input {
public:
    explicit frame_assembler(frame_direction dir, frame_limits limits = {}) : dir_{dir}, limits_{limits} {}

    /// How many more bytes complete the frame being received (at least 1 when no frame is
    /// ready; the header's 8 bytes when nothing is known yet). For sized reads.
    [[nodiscard]] std::size_t bytes_wanted() const noexcept;

    /// The next complete request (request direction only). nullopt: need more bytes. Errors:
    /// `length < 4` (`invalid_length`, "request.length"), payload over its limit
    /// (`limit_exceeded`, "request.length").
    result<std::optional<request_frame>> next_request();
    /// The next complete reply (reply direction only). Errors: payload over the limit.
    result<std::optional<reply_frame>> next_reply();

private:
    result<std::optional<std::size_t>> header_payload_size();

    frame_direction dir_;
    frame_limits limits_;
};

}  // namespace iss::proto
