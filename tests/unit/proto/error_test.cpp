// SPDX-License-Identifier: Apache-2.0
#include "proto/error.hpp"

#include "catch2_compat.hpp"

using namespace iss::proto;

TEST_CASE("server error codes map to the server's names (docs/protocol.md §4)", "[proto][error]") {
    const std::pair<std::uint32_t, std::string_view> table[] = {
        {3, "InvalidCommand"},
        {4, "InvalidFormat"},
        {6, "InvalidIdentifier"},
        {8, "Disconnected"},
        {20, "ResourceNotFound"},
        {30, "StaleClient"},
        {40, "Unauthenticated"},
        {41, "Unauthorized"},
        {42, "InvalidCredentials"},
        {43, "InvalidUsername"},
        {44, "InvalidPassword"},
        {47, "UserInactive"},
        {53, "InvalidPersonalAccessToken"},
        {54, "PersonalAccessTokenExpired"},
        {57, "TransientNotCommitted"},
        {58, "TransientNotAccepted"},
        {59, "RequestAlreadyApplied"},
        {100, "ClientNotFound"},
        {1009, "StreamIdNotFound"},
        {1010, "StreamNameNotFound"},
        {1012, "StreamNameAlreadyExists"},
        {1019, "InvalidTopicSize"},
        {2010, "TopicIdNotFound"},
        {2011, "TopicNameNotFound"},
        {2013, "TopicNameAlreadyExists"},
        {2015, "TooManyPartitions"},
        {2019, "InvalidPartitionsCount"},
        {3007, "PartitionNotFound"},
        {3021, "ConsumerOffsetNotFound"},
        {3022, "NotResolvedConsumer"},
        {4009, "InvalidMessagesCount"},
        {4017, "TooBigUserHeaders"},
        {4022, "TooBigMessagePayload"},
        {4027, "InvalidMessageChecksum"},
        {4031, "NonZeroOffset"},
        {4032, "NonZeroTimestamp"},
        {4033, "MissingIndex"},
        {4036, "InvalidMessagesSize"},
        {4039, "InvalidBatchChecksum"},
        {4100, "InvalidOffset"},
        {5000, "ConsumerGroupIdNotFound"},
        {5003, "ConsumerGroupNameNotFound"},
        {5004, "ConsumerGroupNameAlreadyExists"},
        {5006, "ConsumerGroupMemberNotFound"},
        {5009, "ConsumerGroupPartitionNotOwned"},
        {14000, "AlreadyAuthenticated"},
        {14001, "InvalidSession"},
        {14003, "IncompatibleProtocolVersion"},
    };
    for (auto [code, name] : table) {
        INFO(code);
        CHECK(server_error_name(code) == name);
        const iss::error_code ec = server_error(code);
        CHECK(ec.message().rfind(std::string{name} + " (" + std::to_string(code) + ")", 0) == 0);
    }
    CHECK(server_error_name(77777) == "Unknown");
    CHECK(server_error(77777).message().rfind("Unknown (77777)", 0) == 0);
    CHECK(std::string{server_category().name()} == "iggy");
}

TEST_CASE("server error enum values compare with reply statuses", "[proto][error]") {
    const iss::error e{server_error(3022)};
    CHECK(e == server_errc::not_resolved_consumer);
    CHECK_FALSE(e == server_errc::consumer_group_member_not_found);
    CHECK(iss::error{server_errc::stale_client}.code().value() == 30);
}

TEST_CASE("decode errors map to the statuses a 0.8.0 server answers", "[proto][error]") {
    CHECK(server_status_for_decode_error(iss::error{errc::invalid_length, "stream_id"}) == 4);
    CHECK(server_status_for_decode_error(iss::error{errc::truncated, "stream_id"}) == 3);
    CHECK(server_status_for_decode_error(iss::error{errc::unknown_kind, "consumer.kind"}) == 3);
    CHECK(server_status_for_decode_error(iss::error{errc::invalid_utf8, "name"}) == 3);
    CHECK(std::string{proto_category().name()} == "proto");
    CHECK(iss::error{errc::truncated, "x"}.message().rfind("x: input ends", 0) == 0);
}
