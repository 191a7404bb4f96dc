// SPDX-License-Identifier: Apache-2.0
#include "proto/error.hpp"

namespace iss::proto {

namespace {

const char* proto_message(int ev) noexcept {
    switch (static_cast<errc>(ev)) {
        case errc::truncated: return "input ends before the field does (truncated frame or record)";
        case errc::unknown_kind: return "unknown kind byte (check the protocol generation and the field's table)";
        case errc::invalid_length: return "length field outside its allowed range";
        case errc::limit_exceeded: return "length over the protocol's or the caller's limit";
        case errc::invalid_utf8: return "text field is not valid UTF-8";
        case errc::invalid_value: return "value outside what the field accepts";
        case errc::inconsistent: return "counts and lengths do not add up";
        case errc::checksum_mismatch: return "message checksum (XXH3-64) does not match its bytes";
        case errc::unexpected_code: return "unknown or unexpected command code";
    }
    return nullptr;
}

struct server_entry {
    std::uint32_t code;
    std::string_view name;
    const char* text;
};

// docs/protocol.md §4; names as in core/common/src/error/iggy_error.rs (server-0.8.0, and HEAD
// for the G2-only codes).
constexpr server_entry server_table[] = {
    {1, "Error", "generic server error"},
    {2, "InvalidConfiguration", "invalid server configuration"},
    {3, "InvalidCommand", "invalid command (unknown code, truncated or oversized frame, unknown kind byte)"},
    {4, "InvalidFormat", "invalid format (payload validation failed: numeric id length, empty name)"},
    {5, "FeatureUnavailable", "feature unavailable"},
    {6, "InvalidIdentifier", "invalid identifier in the SendMessages metadata"},
    {7, "InvalidVersion", "invalid version"},
    {8, "Disconnected", "disconnected (server shutting down)"},
    {9, "CannotEstablishConnection", "cannot establish connection"},
    {20, "ResourceNotFound", "resource not found (unknown personal access token)"},
    {30, "StaleClient", "stale client (removed by the heartbeat checker; reconnect)"},
    {40, "Unauthenticated", "unauthenticated (log in first)"},
    {41, "Unauthorized", "unauthorized (the user lacks a permission)"},
    {42, "InvalidCredentials", "invalid credentials (check iggy username and password)"},
    {43, "InvalidUsername", "invalid username (3..50 bytes)"},
    {44, "InvalidPassword", "invalid password (3..100 bytes)"},
    {45, "InvalidUserStatus", "invalid user status"},
    {46, "UserAlreadyExists", "user already exists"},
    {47, "UserInactive", "user inactive"},
    {53, "InvalidPersonalAccessToken", "invalid personal access token"},
    {54, "PersonalAccessTokenExpired", "personal access token expired"},
    {57, "TransientNotCommitted", "transient: not committed (G2, retry)"},
    {58, "TransientNotAccepted", "transient: not accepted (G2, retry)"},
    {59, "RequestAlreadyApplied", "request already applied (G2)"},
    {100, "ClientNotFound", "client not found (the connection will be closed; reconnect)"},
    {1009, "StreamIdNotFound", "stream not found"},
    {1010, "StreamNameNotFound", "stream name not found"},
    {1012, "StreamNameAlreadyExists", "stream name already exists"},
    {1013, "InvalidStreamName", "invalid stream name"},
    {1019, "InvalidTopicSize", "invalid topic size (below the segment size)"},
    {2010, "TopicIdNotFound", "topic not found"},
    {2011, "TopicNameNotFound", "topic name not found"},
    {2013, "TopicNameAlreadyExists", "topic name already exists"},
    {2014, "InvalidTopicName", "invalid topic name"},
    {2015, "TooManyPartitions", "too many partitions (1..1000 per request)"},
    {2019, "InvalidPartitionsCount", "invalid partitions count"},
    {3007, "PartitionNotFound", "partition not found"},
    {3021, "ConsumerOffsetNotFound", "consumer offset not found"},
    {3022, "NotResolvedConsumer", "consumer not resolved (the group member does not own the partition)"},
    {3024, "TooManyConsumerOffsets",
     "too many distinct consumer-offset keys on the partition (Iggy 0.9.0+, PR #4063): reuse a consumer name"},
    {4009, "InvalidMessagesCount", "invalid messages count (empty batch)"},
    {4017, "TooBigUserHeaders", "user headers too big (over 100 000 bytes)"},
    {4022, "TooBigMessagePayload", "message payload too big (over 64 000 000 bytes)"},
    {4027, "InvalidMessageChecksum", "invalid message checksum"},
    {4031, "NonZeroOffset", "non-zero offset in a SendMessages index"},
    {4032, "NonZeroTimestamp", "non-zero timestamp in a SendMessages index"},
    {4033, "MissingIndex", "missing or invalid index entry in SendMessages"},
    {4036, "InvalidMessagesSize", "message sizes do not add up to the frame"},
    {4039, "InvalidBatchChecksum", "invalid batch checksum"},
    {4100, "InvalidOffset", "invalid offset (beyond the partition's current offset, or decreasing)"},
    {5000, "ConsumerGroupIdNotFound", "consumer group not found (create it first)"},
    {5003, "ConsumerGroupNameNotFound", "consumer group name not found"},
    {5004, "ConsumerGroupNameAlreadyExists", "consumer group name already exists"},
    {5006, "ConsumerGroupMemberNotFound", "not a member of the consumer group (join again)"},
    {5009, "ConsumerGroupPartitionNotOwned", "partition not owned by this group member (G2)"},
    {14000, "AlreadyAuthenticated", "already authenticated (G2)"},
    {14001, "InvalidSession", "invalid session (G2)"},
    {14003, "IncompatibleProtocolVersion", "incompatible protocol version (G2)"},
};

const server_entry* find_server(std::uint32_t code) noexcept {
    for (const auto& e : server_table)
        if (e.code == code) return &e;
    return nullptr;
}

class server_category_impl final : public boost::system::error_category {
public:
    const char* name() const noexcept override { return "iggy"; }
    std::string message(int ev) const override {
        const auto code = static_cast<std::uint32_t>(ev);
        if (const auto* e = find_server(code))
            return std::string{e->name} + " (" + std::to_string(code) + "): " + e->text;
        return "Unknown (" + std::to_string(code) + "): server error code not in the table";
    }
};

}  // namespace

const boost::system::error_category& proto_category() noexcept {
    static const simple_category cat{"proto", proto_message};
    return cat;
}

const boost::system::error_category& server_category() noexcept {
    static const server_category_impl cat;
    return cat;
}

std::string_view server_error_name(std::uint32_t code) noexcept {
    if (const auto* e = find_server(code)) return e->name;
    return "Unknown";
}

std::uint32_t server_status_for_decode_error(const iss::error& e) noexcept {
    // The SendMessages decoder reports the server's own codes (send.hpp).
    if (e.code().category() == server_category()) return static_cast<std::uint32_t>(e.code().value());
    if (e.code() == errc::invalid_length) return 4;
    return 3;
}

}  // namespace iss::proto
