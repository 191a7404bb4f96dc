// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// G2 request bodies and reply bodies (docs/protocol.md §8.4-8.7), both sides. Bodies that are
/// unchanged from G1 reuse the G1 request structs and `encode_body` (commands.hpp): Ping,
/// GetMe, PollMessages, GetConsumerOffset, Get/Delete stream and topic, CreatePartitions,
/// Get/Create/Delete/Join/Leave consumer group. What differs lives here:
/// - Register login (codes 40/45, operation 1): `ClientVersionInfo` prefix (protocol u32,
///   sdk_name, sdk_version), then username/password or a token, then a u32 context; protocol
///   0.11.1+ (0.12.0, PROVISIONAL, medium confidence) adds a 32-byte bind secret after the prefix;
/// - Store/DeleteConsumerOffset: a trailing `ack u8` (0 NoAck, 1 Quorum, default 1);
/// - CreateStream `name | options`, CreateTopic `stream | partitions_count | name | options`
///   (options = the rest of the body, a user-header TLV block with String keys);
/// - SyncConsumerGroup (606) `stream | topic | group`, reply `generation u64 | count u32 | ids`;
/// - Stream and TopicHeader records carry `u32 len + options` blocks (TopicHeader two, and no
///   replication_factor).
/// SendMessages and poll replies (the G2 batch) are in g2_batch.hpp.
///
/// Client: `append_request(out, header, req)` writes a whole frame (header from
/// `session_state::next(code)`). Server: `decode_request(header, body)` gives a `request`
/// variant; `append_*` write reply bodies (put them in a frame with `append_reply`).

#include "proto/commands.hpp"
#include "proto/g2_batch.hpp"
#include "proto/g2_framing.hpp"

#include <array>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace iss::proto::g2 {

/// `ClientVersionInfo`, the prefix of both Register bodies.
struct client_version_info {
    std::uint32_t protocol_version = protocol_0_11_0;
    std::string sdk_name;     ///< name (1..255)
    std::string sdk_version;  ///< name (1..255)
    friend bool operator==(const client_version_info&, const client_version_info&) = default;
};

/// 32 random bytes a 0.11.1+ client keeps private (PROVISIONAL: the length matches the crate's
/// BIND_SECRET_BYTES (docs.rs iggy_binary_protocol 0.11.1-edge); the position after the prefix is
/// medium, 0.9-0.10 §4.2).
using bind_secret = std::array<std::byte, 32>;
/// Whether a login body at `protocol_version` carries the bind secret (>= 0.11.1).
constexpr bool has_bind_secret(std::uint32_t protocol_version) noexcept {
    return protocol_version >= pack_version(0, 11, 1);
}

/// LoginRegister (40): prefix, [bind secret], username (name), password (u8 len), context (u32 len).
struct register_request {
    static constexpr command code = static_cast<command>(code::login_register);
    client_version_info version;
    bind_secret secret{};  ///< written only when `has_bind_secret(version.protocol_version)`
    std::string username;
    std::string password;  ///< a secret: never log this struct
    std::string context;
    friend bool operator==(const register_request&, const register_request&) = default;
};

/// LoginRegisterWithPat (45): prefix, [bind secret], token (u8 len), context (u32 len).
struct register_pat_request {
    static constexpr command code = static_cast<command>(code::login_register_with_pat);
    client_version_info version;
    bind_secret secret{};
    std::string token;  ///< a secret
    std::string context;
    friend bool operator==(const register_pat_request&, const register_pat_request&) = default;
};

/// Store (121) with the ack byte.
struct store_offset_request {
    static constexpr command code = command::store_consumer_offset;
    proto::consumer consumer;
    identifier stream;
    identifier topic;
    std::optional<std::uint32_t> partition_id;
    std::uint64_t offset = 0;
    std::uint8_t ack = 1;  ///< 0 NoAck, 1 Quorum (0.9.0 replicates whatever the value)
    friend bool operator==(const store_offset_request&, const store_offset_request&) = default;
};

/// Delete (122) with the ack byte.
struct delete_offset_request {
    static constexpr command code = command::delete_consumer_offset;
    proto::consumer consumer;
    identifier stream;
    identifier topic;
    std::optional<std::uint32_t> partition_id;
    std::uint8_t ack = 1;
    friend bool operator==(const delete_offset_request&, const delete_offset_request&) = default;
};

/// CreateStream (202): name, options block (the rest of the body; empty = defaults).
struct create_stream_request {
    static constexpr command code = command::create_stream;
    std::string name;
    std::string options;  ///< raw TLV bytes
    friend bool operator==(const create_stream_request&, const create_stream_request&) = default;
};

/// CreateTopic (302): stream, partitions_count, name, options block.
struct create_topic_request {
    static constexpr command code = command::create_topic;
    identifier stream;
    std::uint32_t partitions_count = 0;
    std::string name;
    std::string options;  ///< raw TLV bytes; empty = never expire, unlimited size
    friend bool operator==(const create_topic_request&, const create_topic_request&) = default;
};

/// SyncConsumerGroup (606, NonReplicated).
struct sync_consumer_group_request {
    static constexpr command code = static_cast<command>(code::sync_consumer_group);
    identifier stream;
    identifier topic;
    identifier group;
    friend bool operator==(const sync_consumer_group_request&, const sync_consumer_group_request&) = default;
};

using proto::encode_body;
result<void> encode_body(writer& w, const register_request&);
result<void> encode_body(writer& w, const register_pat_request&);
result<void> encode_body(writer& w, const store_offset_request&);
result<void> encode_body(writer& w, const delete_offset_request&);
result<void> encode_body(writer& w, const create_stream_request&);
result<void> encode_body(writer& w, const create_topic_request&);
result<void> encode_body(writer& w, const sync_consumer_group_request&);

/// The command code of a request struct.
template <class Request>
constexpr std::uint32_t code_of() noexcept {
    return static_cast<std::uint32_t>(Request::code);
}

/// Appends a whole request frame: `h` (the caller's, from `session_state::next`) and the body.
/// On error nothing is appended. A frame over `max_frame` is `limit_exceeded`.
template <class Request>
result<void> append_request(byte_buffer& out, const request_header& h, const Request& req,
                            std::size_t max_frame = default_max_frame) {
    const std::size_t start = begin_request(out, h);
    writer w{out};
    if (auto r = encode_body(w, req); !r) {
        out.resize(start);
        return r;
    }
    if (out.size() - start > max_frame) {
        out.resize(start);
        return iss::error{errc::limit_exceeded, "request.size (frame over the maximum)"};
    }
    return finish_frame(out, start);
}

/// Every request the server side decodes. The decoders and reply writers of the server side
/// are in target proto_server (proto/server/g2_requests.cpp, g2_replies.cpp).
using request =
    std::variant<ping_request, get_me_request, register_request, register_pat_request, logout_user_request,
                 poll_messages_request, send_messages_batch_view, get_consumer_offset_request, store_offset_request,
                 delete_offset_request, get_stream_request, get_streams_request, create_stream_request,
                 delete_stream_request, get_topic_request, get_topics_request, create_topic_request,
                 delete_topic_request, create_partitions_request, delete_partitions_request, get_consumer_group_request,
                 get_consumer_groups_request, create_consumer_group_request, delete_consumer_group_request,
                 join_consumer_group_request, leave_consumer_group_request, sync_consumer_group_request>;

/// The command code a request header stands for: byte 196 for NonReplicated, else the
/// operation's code (Register gives 40); nullopt for Reserved or an unknown operation.
std::optional<std::uint32_t> request_code(const request_header& h) noexcept;

/// Decodes a request body by its header. Register bodies are read as username/password first
/// and as a token when that fails (what the 0.9 server does); a Register body without a
/// decodable prefix is `invalid_value` "register.version" (the server evicts with reason 15).
/// Errors: unknown operation (`unexpected_code`, evict with 4), unknown NonReplicated code
/// (`unexpected_code`), truncated or malformed bodies (naming the field).
result<request> decode_request(const request_header& h, bytes_view body);

/// Decodes only the `ClientVersionInfo` prefix (the gate runs before credentials).
result<client_version_info> decode_client_version(bytes_view body);
/// Both forms of a Register body: the username form, else the token form.
result<register_request> decode_register_user(bytes_view body);
result<register_pat_request> decode_register_pat(bytes_view body);

// ---- reply bodies ---------------------------------------------------------------------------

/// The Register reply payload (after the result section).
struct register_reply {
    std::uint32_t user_id = 0;
    std::uint64_t session = 0;
    std::uint32_t server_protocol_version = 0;
    std::string server_version;
    friend bool operator==(const register_reply&, const register_reply&) = default;
};
/// Result-framed: `00 00 00 00 | user_id | session | protocol | name version`.
result<void> append_register_reply(byte_buffer& body, const register_reply& r);
/// Decodes a result-framed Register reply body (a non-zero result is the server's error).
result<register_reply> decode_register_reply(bytes_view body);

/// SyncConsumerGroup reply: the caller's pollable, non-revoked partitions. An empty body
/// means "not a member" (nullopt).
struct sync_reply {
    std::uint64_t generation = 0;
    std::vector<std::uint32_t> partitions;
    friend bool operator==(const sync_reply&, const sync_reply&) = default;
};
void append_sync_reply(byte_buffer& body, const sync_reply& r);
result<std::optional<sync_reply>> decode_sync_reply(bytes_view body);

/// G2 Stream record: G1's fields, then `u32 len + options`. Options are skipped on decode
/// (checked for length only) and written empty.
result<void> append_g2_stream_info(writer& w, const stream_info& s);
result<stream_info> read_g2_stream_info(reader& r, std::string_view field = "stream");
/// G2 TopicHeader: no replication_factor; two option blocks (options, derived_options).
/// `replication_factor` is ignored on encode and 1 on decode.
result<void> append_g2_topic_info(writer& w, const topic_info& t);
result<topic_info> read_g2_topic_info(reader& r, std::string_view field = "topic");

/// Get/CreateStream reply (Stream + topic headers); empty = not found.
result<void> append_stream_details(byte_buffer& body, const stream_details& s);
result<std::optional<stream_details>> decode_stream_reply(bytes_view payload);
/// Get/CreateTopic reply (TopicHeader + partitions); empty = not found.
result<void> append_topic_details(byte_buffer& body, const topic_details& t);
result<std::optional<topic_details>> decode_topic_reply(bytes_view payload);
/// GetConsumerGroup reply (as G1); empty = not found.
result<std::optional<consumer_group_details>> decode_consumer_group_reply(bytes_view payload);
/// GetConsumerOffset reply (as G1, 20 bytes); empty = nothing stored.
result<std::optional<consumer_offset_info>> decode_consumer_offset_reply(bytes_view payload);

}  // namespace iss::proto::g2
