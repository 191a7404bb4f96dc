// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// G2: the consensus (VSR) framing of Iggy 0.9+ (docs/protocol.md §8.1-8.5;
/// docs/protocol.md §12.1-4), sans-io, both sides.
///
/// Every frame in both directions is a 256-byte header followed by a body; `size u32` at byte
/// 48 is the whole frame (header + body), `command u8` at byte 60 is 5 (Request), 8 (Reply) or
/// 13 (Eviction). Bytes 0..47 (checksums, cluster) are sent as zero by clients and not checked
/// by the server on requests.
///
/// ```
/// Request  @128 client u128 | @144 request_checksum u128 | @160 timestamp u64 | @168 request u64
///          @176 operation u8 | @184 session u64 | @192 user_id u32 | @196 command code u32
///          (NonReplicated only)
/// Reply    @128 request_checksum u128 | @144 context u128 | @160 client u128 | @176 op u64
///          @184 commit u64 | @192 timestamp u64 | @200 request u64 | @208 operation u8 | @216 status u32
/// Eviction @128 client u128 | @144 server_protocol_version u32 | @148 server_protocol_version_min u32
///          @255 reason u8 (body always empty; the session is dead)
/// ```
///
/// Also here: the operation of each command code (§8.2), the session and request numbering
/// (§8.3), the protocol version gate (§8.4), the retry rules of statuses 57/58/59 (§8.5 and
/// 0.9-0.10 §3.6), result-framed reply bodies, and the incremental frame assembler.
///
/// Confidence (from the fact sheets): layouts high (pinned by Rust/Go/Node tests at HEAD
/// 2026-08-21 and by the captures); behaviour (retry, numbering) medium.

#include "proto/frame_buffer.hpp"
#include "proto/wire.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <span>
#include <string_view>
#include <utility>
#include <variant>

namespace iss::proto::g2 {

/// Size of every G2 header.
inline constexpr std::size_t header_size = 256;
/// The server's default frame cap (`message_bus.max_message_size`, 64 MiB), polls included.
inline constexpr std::size_t default_max_frame = 64u * 1024 * 1024;

/// Header byte offsets (§8.1).
namespace off {
inline constexpr std::size_t size = 48;
inline constexpr std::size_t command = 60;
// request
inline constexpr std::size_t rq_client = 128;
inline constexpr std::size_t rq_request_checksum = 144;
inline constexpr std::size_t rq_timestamp = 160;
inline constexpr std::size_t rq_request = 168;
inline constexpr std::size_t rq_operation = 176;
inline constexpr std::size_t rq_session = 184;
inline constexpr std::size_t rq_user_id = 192;
inline constexpr std::size_t rq_code = 196;
// reply
inline constexpr std::size_t rp_request_checksum = 128;
inline constexpr std::size_t rp_context = 144;
inline constexpr std::size_t rp_client = 160;
inline constexpr std::size_t rp_op = 176;
inline constexpr std::size_t rp_commit = 184;
inline constexpr std::size_t rp_timestamp = 192;
inline constexpr std::size_t rp_request = 200;
inline constexpr std::size_t rp_operation = 208;
inline constexpr std::size_t rp_status = 216;
// eviction
inline constexpr std::size_t ev_client = 128;
inline constexpr std::size_t ev_version = 144;
inline constexpr std::size_t ev_version_min = 148;
inline constexpr std::size_t ev_reason = 255;
}  // namespace off

/// `command` byte of a header.
enum class frame_kind : std::uint8_t { request = 5, reply = 8, eviction = 13 };

/// The consensus operation (byte 176 of a request, 208 of a reply), §8.2.
enum class operation : std::uint8_t {
    reserved = 0,
    register_client = 1,  ///< LoginRegister 40, LoginRegisterWithPat 45
    non_replicated = 2,   ///< reads, Ping, Poll, SyncConsumerGroup, unknown codes (code at byte 196)
    logout = 3,
    create_stream = 128,
    update_stream = 129,
    delete_stream = 130,
    purge_stream = 131,
    create_topic = 132,
    update_topic = 133,
    delete_topic = 134,
    purge_topic = 135,
    create_partitions = 136,
    delete_partitions = 137,
    delete_segments = 138,
    create_consumer_group = 139,
    delete_consumer_group = 140,
    create_user = 141,  ///< CreateUser 33 (admin; the sink never sends it)
    join_consumer_group = 148,
    leave_consumer_group = 149,
    send_messages = 160,
    store_consumer_offset = 161,
    delete_consumer_offset = 162,
};

/// G2 command codes that G1 does not have (the rest are `proto::command`).
namespace code {
inline constexpr std::uint32_t ping = 1;
inline constexpr std::uint32_t get_me = 20;
inline constexpr std::uint32_t logout_user = 39;
inline constexpr std::uint32_t login_register = 40;
inline constexpr std::uint32_t login_register_with_pat = 45;
inline constexpr std::uint32_t legacy_login_user = 38;  ///< G1 login: evicted with reason 15
inline constexpr std::uint32_t legacy_login_pat = 44;   ///< G1 PAT login: evicted with reason 15
inline constexpr std::uint32_t create_user = 33;        ///< operation 141
inline constexpr std::uint32_t poll_messages = 100;
inline constexpr std::uint32_t send_messages = 101;
inline constexpr std::uint32_t get_consumer_offset = 120;
inline constexpr std::uint32_t store_consumer_offset = 121;
inline constexpr std::uint32_t delete_consumer_offset = 122;
inline constexpr std::uint32_t get_stream = 200;
inline constexpr std::uint32_t get_streams = 201;
inline constexpr std::uint32_t create_stream = 202;
inline constexpr std::uint32_t delete_stream = 203;
inline constexpr std::uint32_t get_topic = 300;
inline constexpr std::uint32_t get_topics = 301;
inline constexpr std::uint32_t create_topic = 302;
inline constexpr std::uint32_t delete_topic = 303;
inline constexpr std::uint32_t create_partitions = 402;
inline constexpr std::uint32_t delete_partitions = 403;
inline constexpr std::uint32_t get_consumer_group = 600;
inline constexpr std::uint32_t get_consumer_groups = 601;
inline constexpr std::uint32_t create_consumer_group = 602;
inline constexpr std::uint32_t delete_consumer_group = 603;
inline constexpr std::uint32_t join_consumer_group = 604;
inline constexpr std::uint32_t leave_consumer_group = 605;
inline constexpr std::uint32_t sync_consumer_group = 606;
}  // namespace code

/// The operation a request with command `code` rides (§8.2). Codes 38 and 44 (the G1 logins)
/// give `reserved`: the server answers them with an Eviction (reason 15), never send them.
/// Any code not in the table is NonReplicated.
operation operation_for(std::uint32_t code) noexcept;
/// The command code of a replicated, Register or Logout operation (its header carries no code),
/// nullopt for `non_replicated`, `reserved` and unknown values. Register maps to 40: a server
/// tells 40 from 45 by the body (see `decode_register_request`).
std::optional<std::uint32_t> code_for(operation op) noexcept;
/// "Register", "NonReplicated", "CreateStream"...; "Unknown" otherwise.
std::string_view operation_name(operation op) noexcept;
/// True for the values listed in `operation`.
bool is_known_operation(std::uint8_t op) noexcept;
/// True for metadata (replicated, 128..) operations.
constexpr bool is_metadata(operation op) noexcept {
    return static_cast<std::uint8_t>(op) >= 128 && static_cast<std::uint8_t>(op) < 160;
}
/// True for the partition plane (160..): SendMessages, Store/DeleteConsumerOffset.
constexpr bool is_partition_plane(operation op) noexcept { return static_cast<std::uint8_t>(op) >= 160; }
/// Whether a reply body of this operation is result-framed (§8.5): Register, metadata ops and
/// Store/DeleteConsumerOffset. NonReplicated, SendMessages and Logout carry the raw payload.
bool reply_is_result_framed(operation op) noexcept;
std::ostream& operator<<(std::ostream& os, operation op);

// ---- protocol versions (§8.4, 0.9-0.10 §3.2, §4.1) -----------------------------------------

/// `major << 20 | minor << 10 | patch`.
constexpr std::uint32_t pack_version(std::uint32_t major, std::uint32_t minor, std::uint32_t patch) noexcept {
    return (major << 20) | (minor << 10) | patch;
}
/// Protocol 0.11.0 (Iggy server 0.9.x): 0x00002C00. Confidence high.
inline constexpr std::uint32_t protocol_0_11_0 = pack_version(0, 11, 0);
/// Protocol 0.12.0 (Iggy server 0.10.x): 0x00003000 (docs/0.10/binary-protocol/connection-lifecycle,
/// high). PROVISIONAL: the value is high confidence,
/// the 0.10 login body (bind secret) only medium.
inline constexpr std::uint32_t protocol_0_12_0 = pack_version(0, 12, 0);
/// "0.11.0".
std::string version_text(std::uint32_t packed);
/// The 0.9.0 gate (minor-scoped): accepted when `client >= min` and client major.minor is at
/// most the server's. `min` is the server's version with the patch zeroed.
bool version_accepted(std::uint32_t client, std::uint32_t server) noexcept;

// ---- headers --------------------------------------------------------------------------------

/// A request header's fields (all other bytes are zero on the wire).
struct request_header {
    u128 client = 0;            ///< random non-zero id, fixed for the session
    u128 request_checksum = 0;  ///< 0, or XXH3-64(body) (the server denies a mismatch with 4)
    std::uint64_t timestamp = 0;
    std::uint64_t request = 0;  ///< request number (§8.3)
    operation op = operation::reserved;
    std::uint64_t session = 0;         ///< 0 until login
    std::uint32_t user_id = 0;         ///< 0 (the server fills it in)
    std::uint32_t code = 0;            ///< the command code when op = NonReplicated, otherwise 0
    std::uint32_t size = header_size;  ///< decoded: the whole frame's size; ignored on encode
    friend bool operator==(const request_header&, const request_header&) = default;
};

/// A reply header's fields.
struct reply_header {
    u128 request_checksum = 0;  ///< echo
    u128 context = 0;
    u128 client = 0;
    std::uint64_t op = 0;
    std::uint64_t commit = 0;
    std::uint64_t timestamp = 0;
    std::uint64_t request = 0;  ///< echo of the request number
    operation operation_ = operation::reserved;
    std::uint32_t status = 0;  ///< 0 = OK; otherwise an IggyError code and an empty body
    std::uint32_t size = header_size;
    friend bool operator==(const reply_header&, const reply_header&) = default;
};

/// Why the server evicted a session (byte 255 of an Eviction).
enum class eviction_reason : std::uint8_t {
    reserved = 0,
    no_session = 1,
    client_release_too_low = 2,
    client_release_too_high = 3,
    invalid_request_operation = 4,
    invalid_request_body = 5,
    invalid_request_body_size = 6,
    session_too_low = 7,
    session_release_mismatch = 8,
    invalid_credentials = 9,
    invalid_token = 10,
    user_inactive = 11,
    session_error = 12,
    stale_client = 13,
    incompatible_protocol = 14,
    malformed_login = 15,
};
/// "NoSession" ... "MalformedLogin"; "Unknown" for other values.
std::string_view eviction_reason_name(eviction_reason r) noexcept;
/// What an operator should do about it (one sentence).
std::string_view eviction_reason_hint(eviction_reason r) noexcept;
std::ostream& operator<<(std::ostream& os, eviction_reason r);

/// An Eviction header's fields.
struct eviction_header {
    u128 client = 0;
    std::uint32_t server_protocol_version = 0;      ///< set for reason 14
    std::uint32_t server_protocol_version_min = 0;  ///< set for reason 14
    eviction_reason reason = eviction_reason::reserved;
    friend bool operator==(const eviction_header&, const eviction_header&) = default;
};

/// Appends a request frame: header (size = 256 + body) then `body`.
void append_request(byte_buffer& out, const request_header& h, bytes_view body);
/// Starts a request frame whose body the caller appends; `finish_frame` patches the size.
std::size_t begin_request(byte_buffer& out, const request_header& h);
/// Starts a reply frame (status in `h`); `finish_frame` patches the size.
std::size_t begin_reply(byte_buffer& out, const reply_header& h);
/// Patches the size of the frame started at `start`. Errors: a frame over 4 GiB.
result<void> finish_frame(byte_buffer& out, std::size_t start);
/// Appends a whole reply frame.
void append_reply(byte_buffer& out, const reply_header& h, bytes_view body);
/// Appends an Eviction frame (header only).
void append_eviction(byte_buffer& out, const eviction_header& h);

/// Decodes the header of a request frame (`frame` = at least the 256 header bytes). Errors:
/// short input (`truncated`), command != 5 (`unexpected_code`), size < 256 (`invalid_length`).
result<request_header> decode_request_header(bytes_view frame);
/// The server's field checks (`validate_request_fields`): client != 0; operation not Reserved;
/// Register with session 0 and request 0; any op but NonReplicated with session and request
/// > 0. Errors are `invalid_value` naming the field.
result<void> validate_request_header(const request_header& h);
result<reply_header> decode_reply_header(bytes_view frame);
result<eviction_header> decode_eviction_header(bytes_view frame);

/// A frame from the server: a reply (header + body view) or an eviction.
struct server_frame {
    std::variant<reply_header, eviction_header> header;
    bytes_view body;  ///< empty for evictions
    [[nodiscard]] bool is_eviction() const noexcept { return header.index() == 1; }
    [[nodiscard]] const reply_header& reply() const { return std::get<0>(header); }
    [[nodiscard]] const eviction_header& eviction() const { return std::get<1>(header); }
};
/// Decodes a whole server frame. Errors: a request command byte or unknown command
/// (`unexpected_code`), size not matching the input (`inconsistent`), an eviction with a body.
result<server_frame> decode_server_frame(bytes_view frame);

/// A request frame as received: its header and a view of its body.
struct request_frame {
    request_header header;
    bytes_view body;
};
/// Decodes a whole request frame (size must equal the input).
result<request_frame> decode_request_frame(bytes_view frame);

// ---- the frame assembler -------------------------------------------------------------------

/// Incremental reader of whole G2 frames (either direction): reads the 256-byte header, takes
/// the size from byte 48, checks it (>= 256, <= max_frame, `limit_exceeded` / `invalid_length`,
/// "frame.size"), then buffers the body. After an error it stays failed (close the connection).
/// A frame view is valid until the next call to `feed`, `prepare` or `next`.
class frame_assembler : public frame_input {
public:
    explicit frame_assembler(std::size_t max_frame = default_max_frame) : max_frame_{max_frame} {}
    /// Bytes still needed to complete the current frame (the header's 256 when nothing is known).
    [[nodiscard]] std::size_t bytes_wanted() const noexcept;
    /// The next whole frame (header included), or nullopt when more bytes are needed.
    result<std::optional<bytes_view>> next();

private:
    std::size_t max_frame_;
};

/// The first bytes of a connection: G1 or G2? (for a broker serving both on one port). A G1
/// request starts with `length u32` >= 4, so one of bytes 0..3 is non-zero; a G2 client sends
/// bytes 0..47 (checksums, cluster) as zero. nullopt: fewer than 4 bytes.
enum class wire_generation { g1, g2 };
std::optional<wire_generation> detect_generation(bytes_view first_bytes) noexcept;

// ---- sessions and request numbers (§8.3) ---------------------------------------------------

/// The client side of a G2 session: the client id, the session from the login reply and the
/// request counter. Rules (core/sdk/src/session.rs at HEAD, medium confidence):
/// - the counter starts at 1;
/// - Register sends request 0 and session 0;
/// - metadata ops and Logout send the counter, then increment it;
/// - partition-plane and NonReplicated ops send the current value without incrementing it;
/// - after the login reply, every header carries its session.
/// A replay of a TransientNotCommitted request reuses the header it was sent with
/// (`retry_rule::replay_same_request`): never ask this object for a new one.
class session_state {
public:
    explicit session_state(u128 client_id) noexcept : client_{client_id} {}
    [[nodiscard]] u128 client_id() const noexcept { return client_; }
    [[nodiscard]] std::uint64_t session() const noexcept { return session_; }
    [[nodiscard]] std::uint64_t counter() const noexcept { return counter_; }
    [[nodiscard]] bool logged_in() const noexcept { return session_ != 0; }
    /// Binds the session of a login reply (and keeps the counter).
    void bind(std::uint64_t session) noexcept { session_ = session; }
    /// Forgets the session (a new connection logs in again; the counter restarts at 1).
    void reset() noexcept {
        session_ = 0;
        counter_ = 1;
    }
    /// The header for the next request with command `code` (advances the counter per the rules).
    request_header next(std::uint32_t code) noexcept;

private:
    u128 client_;
    std::uint64_t session_ = 0;
    std::uint64_t counter_ = 1;
};

// ---- statuses and retries (§8.5, 0.9-0.10 §3.6) ----------------------------------------------

/// What a client may do after a non-zero reply status.
enum class retry_rule {
    none,                 ///< a final answer
    replay_same_request,  ///< 57 TransientNotCommitted: outcome unknown; resend the IDENTICAL frame
                          ///< (same session, same request number) and only that: a new request
                          ///< number could apply it twice
    retry,                ///< 58 TransientNotAccepted: never admitted; may be retried (same frame,
                          ///< or a new one on another connection/node)
    already_applied,      ///< 59 RequestAlreadyApplied: a replay found the first attempt applied: success
};
retry_rule retry_rule_for(std::uint32_t status) noexcept;
inline constexpr std::uint32_t status_too_many_consumer_offsets = 3024;  ///< PR #4063 (0.9.0); SDK docs name 3024

// ---- result-framed bodies (§8.5) -------------------------------------------------------------

/// `count u32 | count × (index u32, result u32) | payload`: count 0 = success. Returns the
/// payload, or the first result as a server error (category `iggy`).
result<bytes_view> decode_result_framed(bytes_view body);
/// Appends `00 00 00 00` (success, no entries); the payload follows.
void append_result_ok(byte_buffer& out);
/// Appends a failure: count 1, (index 0, code).
void append_result_error(byte_buffer& out, std::uint32_t code);

}  // namespace iss::proto::g2
