// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// G1 command requests and replies (docs/protocol.md §5), both sides:
/// - client: `append_request(out, req)` writes a whole frame; `decode_*_reply(payload)` reads
///   the OK payload of the matching reply (get the payload with `ok_payload(frame)`, which
///   turns a non-zero status into the server's error).
/// - server (test broker): `decode_request(code, payload)` gives a `request` variant;
///   `append_*_reply(out, ...)` write whole reply frames.
///
/// "Not found" on a Get* command is an OK reply with an empty payload (§3): the Get* decoders
/// return `std::optional` (nullopt = not found, distinct from an error); list replies return
/// an empty vector. Other replies must be exactly as long as their records (`inconsistent`
/// for trailing bytes).

#include "proto/framing.hpp"
#include "proto/records.hpp"
#include "proto/send.hpp"
#include "proto/types.hpp"

#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace iss::proto {

// ---- requests ------------------------------------------------------------------------------

struct ping_request {
    static constexpr command code = command::ping;
    friend bool operator==(const ping_request&, const ping_request&) = default;
};
struct get_me_request {
    static constexpr command code = command::get_me;
    friend bool operator==(const get_me_request&, const get_me_request&) = default;
};
/// LoginUser (§5.1): username 1..255 (u8 length), password 0..255 (u8 length), version and
/// context with u32 lengths (both always sent; either may be empty). The server checks
/// username 3..50 and password 3..100 bytes after decoding (43 / 44).
struct login_user_request {
    static constexpr command code = command::login_user;
    std::string username;
    std::string password;  ///< a secret: never log this struct
    std::string version;
    std::string context;
    friend bool operator==(const login_user_request&, const login_user_request&) = default;
};
struct logout_user_request {
    static constexpr command code = command::logout_user;
    friend bool operator==(const logout_user_request&, const logout_user_request&) = default;
};
/// LoginWithPersonalAccessToken (§5.2): token as a name (1..255 bytes).
struct login_with_token_request {
    static constexpr command code = command::login_with_personal_access_token;
    std::string token;  ///< a secret
    friend bool operator==(const login_with_token_request&, const login_with_token_request&) = default;
};
/// PollMessages (§5.6).
struct poll_messages_request {
    static constexpr command code = command::poll_messages;
    proto::consumer consumer;
    identifier stream;
    identifier topic;
    std::optional<std::uint32_t> partition_id;
    polling_strategy strategy;
    std::uint32_t count = 0;
    bool auto_commit = false;  ///< the server reads any non-zero byte as true
    friend bool operator==(const poll_messages_request&, const poll_messages_request&) = default;
};
/// GetConsumerOffset (120) / DeleteConsumerOffset (122) body.
struct get_consumer_offset_request {
    static constexpr command code = command::get_consumer_offset;
    proto::consumer consumer;
    identifier stream;
    identifier topic;
    std::optional<std::uint32_t> partition_id;
    friend bool operator==(const get_consumer_offset_request&, const get_consumer_offset_request&) = default;
};
struct store_consumer_offset_request {
    static constexpr command code = command::store_consumer_offset;
    proto::consumer consumer;
    identifier stream;
    identifier topic;
    std::optional<std::uint32_t> partition_id;
    std::uint64_t offset = 0;  ///< the last processed offset
    friend bool operator==(const store_consumer_offset_request&, const store_consumer_offset_request&) = default;
};
struct delete_consumer_offset_request {
    static constexpr command code = command::delete_consumer_offset;
    proto::consumer consumer;
    identifier stream;
    identifier topic;
    std::optional<std::uint32_t> partition_id;
    friend bool operator==(const delete_consumer_offset_request&, const delete_consumer_offset_request&) = default;
};
struct get_stream_request {
    static constexpr command code = command::get_stream;
    identifier stream;
    friend bool operator==(const get_stream_request&, const get_stream_request&) = default;
};
struct get_streams_request {
    static constexpr command code = command::get_streams;
    friend bool operator==(const get_streams_request&, const get_streams_request&) = default;
};
struct create_stream_request {
    static constexpr command code = command::create_stream;
    std::string name;
    friend bool operator==(const create_stream_request&, const create_stream_request&) = default;
};
struct delete_stream_request {
    static constexpr command code = command::delete_stream;
    identifier stream;
    friend bool operator==(const delete_stream_request&, const delete_stream_request&) = default;
};
struct get_topic_request {
    static constexpr command code = command::get_topic;
    identifier stream;
    identifier topic;
    friend bool operator==(const get_topic_request&, const get_topic_request&) = default;
};
struct get_topics_request {
    static constexpr command code = command::get_topics;
    identifier stream;
    friend bool operator==(const get_topics_request&, const get_topics_request&) = default;
};
/// CreateTopic (§5.4).
struct create_topic_request {
    static constexpr command code = command::create_topic;
    identifier stream;
    std::uint32_t partitions_count = 0;   ///< 0..1000
    std::uint8_t compression = 1;         ///< 1 none, 2 gzip
    std::uint64_t message_expiry = 0;     ///< µs; 0 = server default, u64 max = never
    std::uint64_t max_topic_size = 0;     ///< bytes; 0 = server default, u64 max = unlimited
    std::uint8_t replication_factor = 0;  ///< 0 = unset (stored as 1)
    std::string name;
    friend bool operator==(const create_topic_request&, const create_topic_request&) = default;
};
struct delete_topic_request {
    static constexpr command code = command::delete_topic;
    identifier stream;
    identifier topic;
    friend bool operator==(const delete_topic_request&, const delete_topic_request&) = default;
};
struct create_partitions_request {
    static constexpr command code = command::create_partitions;
    identifier stream;
    identifier topic;
    std::uint32_t partitions_count = 0;  ///< 1..1000
    friend bool operator==(const create_partitions_request&, const create_partitions_request&) = default;
};
struct delete_partitions_request {
    static constexpr command code = command::delete_partitions;
    identifier stream;
    identifier topic;
    std::uint32_t partitions_count = 0;
    friend bool operator==(const delete_partitions_request&, const delete_partitions_request&) = default;
};
/// Get/Delete/Join/Leave consumer group: stream, topic, group.
struct get_consumer_group_request {
    static constexpr command code = command::get_consumer_group;
    identifier stream;
    identifier topic;
    identifier group;
    friend bool operator==(const get_consumer_group_request&, const get_consumer_group_request&) = default;
};
struct get_consumer_groups_request {
    static constexpr command code = command::get_consumer_groups;
    identifier stream;
    identifier topic;
    friend bool operator==(const get_consumer_groups_request&, const get_consumer_groups_request&) = default;
};
struct create_consumer_group_request {
    static constexpr command code = command::create_consumer_group;
    identifier stream;
    identifier topic;
    std::string name;
    friend bool operator==(const create_consumer_group_request&, const create_consumer_group_request&) = default;
};
struct delete_consumer_group_request {
    static constexpr command code = command::delete_consumer_group;
    identifier stream;
    identifier topic;
    identifier group;
    friend bool operator==(const delete_consumer_group_request&, const delete_consumer_group_request&) = default;
};
struct join_consumer_group_request {
    static constexpr command code = command::join_consumer_group;
    identifier stream;
    identifier topic;
    identifier group;
    friend bool operator==(const join_consumer_group_request&, const join_consumer_group_request&) = default;
};
struct leave_consumer_group_request {
    static constexpr command code = command::leave_consumer_group;
    identifier stream;
    identifier topic;
    identifier group;
    friend bool operator==(const leave_consumer_group_request&, const leave_consumer_group_request&) = default;
};

// Body encoders (the payload only). Errors name the field (empty or long names, bad ids).
result<void> encode_body(writer& w, const ping_request&);
result<void> encode_body(writer& w, const get_me_request&);
result<void> encode_body(writer& w, const login_user_request&);
result<void> encode_body(writer& w, const logout_user_request&);
result<void> encode_body(writer& w, const login_with_token_request&);
result<void> encode_body(writer& w, const poll_messages_request&);
result<void> encode_body(writer& w, const get_consumer_offset_request&);
result<void> encode_body(writer& w, const store_consumer_offset_request&);
result<void> encode_body(writer& w, const delete_consumer_offset_request&);
result<void> encode_body(writer& w, const get_stream_request&);
result<void> encode_body(writer& w, const get_streams_request&);
result<void> encode_body(writer& w, const create_stream_request&);
result<void> encode_body(writer& w, const delete_stream_request&);
result<void> encode_body(writer& w, const get_topic_request&);
result<void> encode_body(writer& w, const get_topics_request&);
result<void> encode_body(writer& w, const create_topic_request&);
result<void> encode_body(writer& w, const delete_topic_request&);
result<void> encode_body(writer& w, const create_partitions_request&);
result<void> encode_body(writer& w, const delete_partitions_request&);
result<void> encode_body(writer& w, const get_consumer_group_request&);
result<void> encode_body(writer& w, const get_consumer_groups_request&);
result<void> encode_body(writer& w, const create_consumer_group_request&);
result<void> encode_body(writer& w, const delete_consumer_group_request&);
result<void> encode_body(writer& w, const join_consumer_group_request&);
result<void> encode_body(writer& w, const leave_consumer_group_request&);

/// Appends a whole request frame `[length][code][body]` to `out`; on error nothing is appended.
/// A body over the 10 MiB control limit is `limit_exceeded` ("request.length").
/// (SendMessages: `append_send_messages` in send.hpp.)
template <class Request>
result<void> append_request(byte_buffer& out, const Request& req) {
    const std::size_t start = begin_request(out, Request::code);
    writer w{out};
    if (auto r = encode_body(w, req); !r) {
        out.resize(start);
        return r;
    }
    if (out.size() - start - request_header_size > max_control_payload) {
        out.resize(start);
        return iss::error{errc::limit_exceeded, "request.length (control frame payload over 10 MiB)"};
    }
    finish_request(out, start);
    return {};
}

/// Every request the server side decodes. `send_messages_view` holds views into the payload.
using request =
    std::variant<ping_request, get_me_request, login_user_request, logout_user_request, login_with_token_request,
                 poll_messages_request, send_messages_view, get_consumer_offset_request, store_consumer_offset_request,
                 delete_consumer_offset_request, get_stream_request, get_streams_request, create_stream_request,
                 delete_stream_request, get_topic_request, get_topics_request, create_topic_request,
                 delete_topic_request, create_partitions_request, delete_partitions_request, get_consumer_group_request,
                 get_consumer_groups_request, create_consumer_group_request, delete_consumer_group_request,
                 join_consumer_group_request, leave_consumer_group_request>;

/// Decodes a request payload as the 0.8.0 server does (server side: target proto_server,
/// proto/server/g1_requests.cpp). An unknown code is `unexpected_code`
/// (server 3). Trailing bytes after the body are ignored (the server only logs them). Map an
/// error to the status to answer with `server_status_for_decode_error`.
result<request> decode_request(std::uint32_t code, bytes_view payload);
/// The command code of a decoded request.
command request_code(const request& r) noexcept;

// ---- replies: client-side decoders (payload of an OK reply) ----------------------------------

/// Ping, LogoutUser, SendMessages, StoreConsumerOffset, DeleteConsumerOffset, CreatePartitions,
/// Delete*, Join/LeaveConsumerGroup: an empty payload.
result<void> decode_empty_reply(bytes_view payload);
/// LoginUser, LoginWithPersonalAccessToken: user_id.
result<std::uint32_t> decode_user_id_reply(bytes_view payload);
result<client_details> decode_get_me_reply(bytes_view payload);
result<std::optional<stream_details>> decode_get_stream_reply(bytes_view payload);
result<std::vector<stream_info>> decode_get_streams_reply(bytes_view payload);
result<stream_details> decode_create_stream_reply(bytes_view payload);
result<std::optional<topic_details>> decode_get_topic_reply(bytes_view payload);
result<std::vector<topic_info>> decode_get_topics_reply(bytes_view payload);
result<topic_details> decode_create_topic_reply(bytes_view payload);
result<std::optional<consumer_group_details>> decode_get_consumer_group_reply(bytes_view payload);
result<std::vector<consumer_group_info>> decode_get_consumer_groups_reply(bytes_view payload);
result<consumer_group_details> decode_create_consumer_group_reply(bytes_view payload);
result<std::optional<consumer_offset_info>> decode_get_consumer_offset_reply(bytes_view payload);
// PollMessages: decode_poll_reply in poll.hpp.

// ---- replies: server-side encoders (whole frames; target proto_server, proto/server/) ------

/// An OK reply with an empty payload (also "not found" for Get* commands).
void append_empty_reply(byte_buffer& out);
void append_user_id_reply(byte_buffer& out, std::uint32_t user_id);
void append_get_me_reply(byte_buffer& out, const client_details& c);
result<void> append_stream_reply(byte_buffer& out, const stream_details& s);
result<void> append_streams_reply(byte_buffer& out, std::span<const stream_info> streams);
result<void> append_topic_reply(byte_buffer& out, const topic_details& t);
result<void> append_topics_reply(byte_buffer& out, std::span<const topic_info> topics);
result<void> append_consumer_group_reply(byte_buffer& out, const consumer_group_details& g);
result<void> append_consumer_groups_reply(byte_buffer& out, std::span<const consumer_group_info> groups);
/// nullopt writes the empty (not found) reply.
void append_consumer_offset_reply(byte_buffer& out, const std::optional<consumer_offset_info>& o);
// PollMessages: begin_reply, poll_reply_writer, finish_reply (poll.hpp / framing.hpp).

}  // namespace iss::proto
