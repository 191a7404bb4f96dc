// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Errors of the Iggy protocol codecs (docs/architecture.md §8.4) and the names of the server's error codes
/// (docs/protocol.md §4).
///
/// Two categories:
/// - `proto` (`iss::proto::errc`): our decoders and encoders refusing input. The `iss::error`
///   detail names the field (`"poll_reply.messages[3].payload_length"`).
/// - `iggy` (`iss::proto::server_category()`): a non-zero G1 reply status, the server's
///   `IggyError` number as the error value; `message()` gives its name and what it means.

#include "common/error.hpp"

#include <cstdint>
#include <string_view>

namespace iss::proto {

/// Why a codec refused its input.
enum class errc {
    truncated = 1,   ///< the input ends before the field does
    unknown_kind,    ///< a kind / discriminant byte has no meaning (identifier, header, strategy...)
    invalid_length,  ///< a length field is outside its allowed range (numeric id len != 4, empty name, fixed-size header value of the wrong size)
    limit_exceeded,  ///< a length is over a protocol or caller limit (10 MiB frame, 64 MB payload, 100 000 B headers, 255 B name)
    invalid_utf8,       ///< a text field is not valid UTF-8
    invalid_value,      ///< a value is outside what the field accepts (bool not 0/1, non-zero reserved index bytes)
    inconsistent,       ///< counts and lengths do not add up (index end positions, messages vs bytes)
    checksum_mismatch,  ///< a message's XXH3-64 does not match its bytes
    unexpected_code,    ///< a command code that is unknown or not the one expected
};

const boost::system::error_category& proto_category() noexcept;
inline error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), proto_category()}; }

/// The category of server error codes: value = the u32 status of a G1 reply.
const boost::system::error_category& server_category() noexcept;

/// Server error codes a sink meets (docs/protocol.md §4). Not exhaustive: any u32 can come back;
/// `server_error_name` names the ones listed here and says "Unknown" otherwise.
enum class server_errc : std::uint32_t {
    error = 1,
    invalid_configuration = 2,
    invalid_command = 3,
    invalid_format = 4,
    feature_unavailable = 5,
    invalid_identifier = 6,
    invalid_version = 7,
    disconnected = 8,
    cannot_establish_connection = 9,
    resource_not_found = 20,
    stale_client = 30,
    unauthenticated = 40,
    unauthorized = 41,
    invalid_credentials = 42,
    invalid_username = 43,
    invalid_password = 44,
    invalid_user_status = 45,
    user_already_exists = 46,
    user_inactive = 47,
    invalid_personal_access_token = 53,
    personal_access_token_expired = 54,
    transient_not_committed = 57,
    transient_not_accepted = 58,
    request_already_applied = 59,
    client_not_found = 100,
    stream_id_not_found = 1009,
    stream_name_not_found = 1010,
    stream_name_already_exists = 1012,
    invalid_stream_name = 1013,
    invalid_topic_size = 1019,
    topic_id_not_found = 2010,
    topic_name_not_found = 2011,
    topic_name_already_exists = 2013,
    invalid_topic_name = 2014,
    too_many_partitions = 2015,
    invalid_partitions_count = 2019,
    partition_not_found = 3007,
    consumer_offset_not_found = 3021,
    not_resolved_consumer = 3022,
    too_many_consumer_offsets = 3024,  ///< G2, server 0.9.0+ (PR #4063)
    invalid_messages_count = 4009,
    too_big_user_headers = 4017,
    too_big_message_payload = 4022,
    invalid_message_checksum = 4027,
    non_zero_offset = 4031,
    non_zero_timestamp = 4032,
    missing_index = 4033,
    invalid_messages_size = 4036,
    invalid_batch_checksum = 4039,
    invalid_offset = 4100,
    consumer_group_id_not_found = 5000,
    consumer_group_name_not_found = 5003,
    consumer_group_name_already_exists = 5004,
    consumer_group_member_not_found = 5006,
    consumer_group_partition_not_owned = 5009,
    already_authenticated = 14000,
    invalid_session = 14001,
    incompatible_protocol_version = 14003,
};
inline error_code make_error_code(server_errc e) noexcept { return {static_cast<int>(e), server_category()}; }
/// The error_code of a G1 reply status (status != 0).
inline error_code server_error(std::uint32_t status) noexcept { return {static_cast<int>(status), server_category()}; }

/// The server's name for an error code ("InvalidCommand", "TopicIdNotFound"), as in
/// core/common/src/error/iggy_error.rs; "Unknown" for a code not in the table.
std::string_view server_error_name(std::uint32_t code) noexcept;

/// The status a 0.8.0 server answers when its request decoder fails with `e`
/// (docs/protocol.md §3): 4 (InvalidFormat) for validation errors (numeric identifier with
/// len != 4, empty name or string identifier), 3 (InvalidCommand) for everything else.
/// An error already in the server category (the SendMessages decoder's) gives its own value.
std::uint32_t server_status_for_decode_error(const iss::error& e) noexcept;

}  // namespace iss::proto

namespace boost::system {
template <>
struct is_error_code_enum<iss::proto::errc> : std::true_type {};
template <>
struct is_error_code_enum<iss::proto::server_errc> : std::true_type {};
}  // namespace boost::system
