// SPDX-License-Identifier: Apache-2.0
#include "proto/g2_framing.hpp"

#include "proto/g2_codec.hpp"

#include <fmt/format.h>

namespace iss::proto::g2 {

using framing_codec::checked_size;
using framing_codec::short_input;

namespace {

struct op_entry {
    std::uint32_t code;
    operation op;
};

// The replicated and session operations with their command codes
// (core/binary_protocol/src/dispatch.rs COMMAND_TABLE at HEAD 2026-08-21; consumer subset
// plus the admin commands the test fixtures use).
constexpr op_entry op_table[] = {
    {code::login_register, operation::register_client},
    {code::login_register_with_pat, operation::register_client},
    {code::logout_user, operation::logout},
    {code::create_stream, operation::create_stream},
    {code::delete_stream, operation::delete_stream},
    {code::create_topic, operation::create_topic},
    {code::delete_topic, operation::delete_topic},
    {code::create_partitions, operation::create_partitions},
    {code::delete_partitions, operation::delete_partitions},
    {code::create_consumer_group, operation::create_consumer_group},
    {code::delete_consumer_group, operation::delete_consumer_group},
    {code::create_user, operation::create_user},
    {code::join_consumer_group, operation::join_consumer_group},
    {code::leave_consumer_group, operation::leave_consumer_group},
    {code::send_messages, operation::send_messages},
    {code::store_consumer_offset, operation::store_consumer_offset},
    {code::delete_consumer_offset, operation::delete_consumer_offset},
};

void put_u128(std::byte* p, u128 v) noexcept { store_le(p, v); }

}  // namespace

operation operation_for(std::uint32_t c) noexcept {
    if (c == code::legacy_login_user || c == code::legacy_login_pat) return operation::reserved;
    for (const auto& e : op_table)
        if (e.code == c) return e.op;
    return operation::non_replicated;
}

std::optional<std::uint32_t> code_for(operation op) noexcept {
    for (const auto& e : op_table)
        if (e.op == op) return e.code;
    return std::nullopt;
}

std::string_view operation_name(operation op) noexcept {
    switch (op) {
        case operation::reserved: return "Reserved";
        case operation::register_client: return "Register";
        case operation::non_replicated: return "NonReplicated";
        case operation::logout: return "Logout";
        case operation::create_stream: return "CreateStream";
        case operation::update_stream: return "UpdateStream";
        case operation::delete_stream: return "DeleteStream";
        case operation::purge_stream: return "PurgeStream";
        case operation::create_topic: return "CreateTopic";
        case operation::update_topic: return "UpdateTopic";
        case operation::delete_topic: return "DeleteTopic";
        case operation::purge_topic: return "PurgeTopic";
        case operation::create_partitions: return "CreatePartitions";
        case operation::delete_partitions: return "DeletePartitions";
        case operation::delete_segments: return "DeleteSegments";
        case operation::create_consumer_group: return "CreateConsumerGroup";
        case operation::delete_consumer_group: return "DeleteConsumerGroup";
        case operation::create_user: return "CreateUser";
        case operation::join_consumer_group: return "JoinConsumerGroup";
        case operation::leave_consumer_group: return "LeaveConsumerGroup";
        case operation::send_messages: return "SendMessages";
        case operation::store_consumer_offset: return "StoreConsumerOffset";
        case operation::delete_consumer_offset: return "DeleteConsumerOffset";
    }
    return "Unknown";
}

bool is_known_operation(std::uint8_t op) noexcept { return operation_name(static_cast<operation>(op)) != "Unknown"; }

bool reply_is_result_framed(operation op) noexcept {
    return op == operation::register_client || is_metadata(op) || op == operation::store_consumer_offset ||
           op == operation::delete_consumer_offset;
}

std::ostream& operator<<(std::ostream& os, operation op) {
    return os << operation_name(op) << '(' << static_cast<unsigned>(op) << ')';
}

std::string version_text(std::uint32_t v) { return fmt::format("{}.{}.{}", v >> 20, (v >> 10) & 0x3ff, v & 0x3ff); }

bool version_accepted(std::uint32_t client, std::uint32_t server) noexcept {
    const std::uint32_t min = server & ~std::uint32_t{0x3ff};
    return client >= min && (client >> 10) <= (server >> 10);
}

std::string_view eviction_reason_name(eviction_reason r) noexcept {
    switch (r) {
        case eviction_reason::reserved: return "Reserved";
        case eviction_reason::no_session: return "NoSession";
        case eviction_reason::client_release_too_low: return "ClientReleaseTooLow";
        case eviction_reason::client_release_too_high: return "ClientReleaseTooHigh";
        case eviction_reason::invalid_request_operation: return "InvalidRequestOperation";
        case eviction_reason::invalid_request_body: return "InvalidRequestBody";
        case eviction_reason::invalid_request_body_size: return "InvalidRequestBodySize";
        case eviction_reason::session_too_low: return "SessionTooLow";
        case eviction_reason::session_release_mismatch: return "SessionReleaseMismatch";
        case eviction_reason::invalid_credentials: return "InvalidCredentials";
        case eviction_reason::invalid_token: return "InvalidToken";
        case eviction_reason::user_inactive: return "UserInactive";
        case eviction_reason::session_error: return "SessionError";
        case eviction_reason::stale_client: return "StaleClient";
        case eviction_reason::incompatible_protocol: return "IncompatibleProtocol";
        case eviction_reason::malformed_login: return "MalformedLogin";
    }
    return "Unknown";
}

std::string_view eviction_reason_hint(eviction_reason r) noexcept {
    switch (r) {
        case eviction_reason::invalid_credentials: return "check iggy.username and iggy.password";
        case eviction_reason::invalid_token: return "check iggy.token (personal access token)";
        case eviction_reason::user_inactive: return "the Iggy user is inactive";
        case eviction_reason::incompatible_protocol:
            return "the server speaks another binary protocol version: check iggy.protocol";
        case eviction_reason::malformed_login: return "the server did not understand the login (wrong iggy.protocol?)";
        case eviction_reason::stale_client: return "no request for too long while in a group: heartbeat missed";
        case eviction_reason::no_session:
        case eviction_reason::session_too_low:
        case eviction_reason::session_release_mismatch:
        case eviction_reason::session_error: return "the session is gone: reconnect and log in again";
        default: return "protocol error: a request the server refused";
    }
}

std::ostream& operator<<(std::ostream& os, eviction_reason r) {
    return os << eviction_reason_name(r) << '(' << static_cast<unsigned>(r) << ')';
}

// ---- headers --------------------------------------------------------------------------------

std::size_t begin_request(byte_buffer& out, const request_header& h) {
    const std::size_t start = out.size();
    out.resize(start + header_size);  // zeroed
    std::byte* p = out.data() + start;
    store_le<std::uint32_t>(p + off::size, static_cast<std::uint32_t>(header_size));
    p[off::command] = static_cast<std::byte>(frame_kind::request);
    put_u128(p + off::rq_client, h.client);
    put_u128(p + off::rq_request_checksum, h.request_checksum);
    store_le(p + off::rq_timestamp, h.timestamp);
    store_le(p + off::rq_request, h.request);
    p[off::rq_operation] = static_cast<std::byte>(h.op);
    store_le(p + off::rq_session, h.session);
    store_le(p + off::rq_user_id, h.user_id);
    store_le(p + off::rq_code, h.code);
    return start;
}

result<void> finish_frame(byte_buffer& out, std::size_t start) {
    const std::size_t n = out.size() - start;
    if (n > 0xffff'ffffu) {
        out.resize(start);
        return iss::error{errc::limit_exceeded, "frame.size (over 4 GiB)"};
    }
    store_le<std::uint32_t>(out.data() + start + off::size, static_cast<std::uint32_t>(n));
    return {};
}

void append_request(byte_buffer& out, const request_header& h, bytes_view body) {
    const std::size_t start = begin_request(out, h);
    out.insert(out.end(), body.begin(), body.end());
    (void)finish_frame(out, start);
}

result<reply_header> decode_reply_header(bytes_view frame) {
    auto size = checked_size(frame, frame_kind::reply, "reply");
    if (!size) return size.error();
    const std::byte* p = frame.data();
    reply_header h;
    h.size = *size;
    h.request_checksum = load_le<u128>(p + off::rp_request_checksum);
    h.context = load_le<u128>(p + off::rp_context);
    h.client = load_le<u128>(p + off::rp_client);
    h.op = load_le<std::uint64_t>(p + off::rp_op);
    h.commit = load_le<std::uint64_t>(p + off::rp_commit);
    h.timestamp = load_le<std::uint64_t>(p + off::rp_timestamp);
    h.request = load_le<std::uint64_t>(p + off::rp_request);
    h.operation_ = static_cast<operation>(p[off::rp_operation]);
    h.status = load_le<std::uint32_t>(p + off::rp_status);
    return h;
}

result<eviction_header> decode_eviction_header(bytes_view frame) {
    auto size = checked_size(frame, frame_kind::eviction, "eviction");
    if (!size) return size.error();
    const std::byte* p = frame.data();
    eviction_header h;
    h.client = load_le<u128>(p + off::ev_client);
    h.server_protocol_version = load_le<std::uint32_t>(p + off::ev_version);
    h.server_protocol_version_min = load_le<std::uint32_t>(p + off::ev_version_min);
    h.reason = static_cast<eviction_reason>(p[off::ev_reason]);
    return h;
}

result<server_frame> decode_server_frame(bytes_view frame) {
    if (frame.size() < header_size) return short_input("frame.header");
    const auto cmd = static_cast<std::uint8_t>(frame[off::command]);
    const auto size = load_le<std::uint32_t>(frame.data() + off::size);
    if (size != frame.size())
        return iss::error{errc::inconsistent, fmt::format("frame.size ({} for {} bytes)", size, frame.size())};
    if (cmd == static_cast<std::uint8_t>(frame_kind::reply)) {
        auto h = decode_reply_header(frame);
        if (!h) return h.error();
        if (h->status != 0 && size != header_size)
            return iss::error{errc::inconsistent, "reply.size (a denied request has an empty body)"};
        return server_frame{*h, frame.subspan(header_size)};
    }
    if (cmd == static_cast<std::uint8_t>(frame_kind::eviction)) {
        if (size != header_size) return iss::error{errc::inconsistent, "eviction.size (an eviction has no body)"};
        auto h = decode_eviction_header(frame);
        if (!h) return h.error();
        return server_frame{*h, {}};
    }
    return iss::error{errc::unexpected_code, fmt::format("frame.command ({}: not a Reply or Eviction)", cmd)};
}

// ---- assembler ------------------------------------------------------------------------------

std::size_t frame_assembler::bytes_wanted() const noexcept {
    const bytes_view b = buf_.pending();
    if (b.size() < header_size) return header_size - b.size();
    const auto size = load_le<std::uint32_t>(b.data() + off::size);
    if (size < header_size) return 1;
    return b.size() >= size ? 0 : size - b.size();
}

result<std::optional<bytes_view>> frame_assembler::next() {
    const bytes_view b = buf_.advance();
    if (buf_.failure()) return *buf_.failure();
    if (b.size() < header_size) return std::optional<bytes_view>{};
    const std::size_t size = load_le<std::uint32_t>(b.data() + off::size);
    if (size < header_size)
        return buf_.fail(iss::error{errc::invalid_length, fmt::format("frame.size ({} < 256)", size)});
    if (size > max_frame_)
        return buf_.fail(iss::error{errc::limit_exceeded, fmt::format("frame.size ({} over {})", size, max_frame_)});
    if (b.size() < size) return std::optional<bytes_view>{};
    return std::optional<bytes_view>{buf_.take(size)};
}

std::optional<wire_generation> detect_generation(bytes_view b) noexcept {
    // G1 starts with `length u32` >= 4, so one of its first 4 bytes is non-zero; a G2 client
    // sends bytes 0..47 (checksums, cluster) as zero. Four bytes decide (a G1 Ping is 8 bytes:
    // waiting for more could wait for ever).
    if (b.size() < 4) return std::nullopt;
    for (std::size_t i = 0; i < 4; ++i)
        if (b[i] != std::byte{0}) return wire_generation::g1;
    return wire_generation::g2;
}

// ---- sessions --------------------------------------------------------------------------------

request_header session_state::next(std::uint32_t c) noexcept {
    request_header h;
    h.client = client_;
    h.op = operation_for(c);
    if (h.op == operation::register_client) {
        h.request = 0;
        h.session = 0;
        return h;
    }
    h.session = session_;
    if (h.op == operation::non_replicated) h.code = c;
    h.request = counter_;
    if (is_metadata(h.op) || h.op == operation::logout) ++counter_;
    return h;
}

retry_rule retry_rule_for(std::uint32_t status) noexcept {
    switch (status) {
        case 57: return retry_rule::replay_same_request;
        case 58: return retry_rule::retry;
        case 59: return retry_rule::already_applied;
        default: return retry_rule::none;
    }
}

// ---- result framing -------------------------------------------------------------------------

result<bytes_view> decode_result_framed(bytes_view body) {
    reader r{body};
    auto count = r.u32("result.count");
    if (!count) return count.error();
    if (*count == 0) return r.rest();
    if (r.remaining() / 8 < *count) return reader::truncated("result.entries");
    (void)r.u32("result.entries[0].index");
    auto code = r.u32("result.entries[0].result");
    if (*code == 0) return iss::error{errc::invalid_value, "result.entries[0].result (0 in a failure)"};
    return iss::error{server_error(*code)};
}

}  // namespace iss::proto::g2
