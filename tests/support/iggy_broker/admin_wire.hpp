// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Wire codecs of the Iggy test broker's administrative commands (the G1 layouts of server
/// 0.8.0, core/binary_protocol/src/{requests,responses}/{users,personal_access_tokens,system,
/// clients} and streams/topics update/purge at tag server-0.8.0). Sans-io, server side only:
/// requests are decoded, replies encoded. `proto/` keeps the commands the sink itself sends.
///
/// Codes: GetStats 10, GetClusterMetadata 12, GetClient 21, GetClients 22, GetUser 31,
/// GetUsers 32, CreateUser 33, DeleteUser 34, UpdateUser 35, UpdatePermissions 36,
/// ChangePassword 37, GetPersonalAccessTokens 41, CreatePersonalAccessToken 42,
/// DeletePersonalAccessToken 43, UpdateStream 204, PurgeStream 205, UpdateTopic 304,
/// PurgeTopic 305.

#include "iggy_broker/users.hpp"
#include "proto/records.hpp"
#include "proto/types.hpp"
#include "proto/wire.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace iss::broker::admin {

/// Command codes handled here.
namespace code {
inline constexpr std::uint32_t get_stats = 10;
inline constexpr std::uint32_t get_cluster_metadata = 12;
inline constexpr std::uint32_t get_client = 21;
inline constexpr std::uint32_t get_clients = 22;
inline constexpr std::uint32_t get_user = 31;
inline constexpr std::uint32_t get_users = 32;
inline constexpr std::uint32_t create_user = 33;
inline constexpr std::uint32_t delete_user = 34;
inline constexpr std::uint32_t update_user = 35;
inline constexpr std::uint32_t update_permissions = 36;
inline constexpr std::uint32_t change_password = 37;
inline constexpr std::uint32_t get_tokens = 41;
inline constexpr std::uint32_t create_token = 42;
inline constexpr std::uint32_t delete_token = 43;
inline constexpr std::uint32_t update_stream = 204;
inline constexpr std::uint32_t purge_stream = 205;
inline constexpr std::uint32_t update_topic = 304;
inline constexpr std::uint32_t purge_topic = 305;
}  // namespace code

/// True for the codes above.
bool is_admin_code(std::uint32_t c) noexcept;

struct get_stats_request {};
struct get_cluster_metadata_request {};
struct get_client_request {
    std::uint32_t client_id = 0;
};
struct get_clients_request {};
struct get_user_request {
    proto::identifier user;
};
struct get_users_request {};
/// `name username | u8 len, password | u8 status | u8 has_permissions [u32 len | permissions]`.
struct create_user_request {
    std::string username;
    std::string password;
    std::uint8_t status = 1;
    std::optional<permissions> perms;
};
struct delete_user_request {
    proto::identifier user;
};
/// `user Id | u8 has_username [name] | u8 has_status [u8]`.
struct update_user_request {
    proto::identifier user;
    std::optional<std::string> username;
    std::optional<std::uint8_t> status;
};
/// `user Id | u8 has_permissions [u32 len | permissions]`.
struct update_permissions_request {
    proto::identifier user;
    std::optional<permissions> perms;
};
/// `user Id | u8 len, current | u8 len, new`.
struct change_password_request {
    proto::identifier user;
    std::string current_password;
    std::string new_password;
};
struct get_tokens_request {};
/// `name | u64 expiry (µs; 0 = server default, u64 max = never)`.
struct create_token_request {
    std::string name;
    std::uint64_t expiry = 0;
};
struct delete_token_request {
    std::string name;
};
struct update_stream_request {
    proto::identifier stream;
    std::string name;
};
struct purge_stream_request {
    proto::identifier stream;
};
/// `stream | topic | u8 compression | u64 message_expiry | u64 max_topic_size | u8 replication | name`.
struct update_topic_request {
    proto::identifier stream;
    proto::identifier topic;
    std::uint8_t compression = 1;
    std::uint64_t message_expiry = 0;
    std::uint64_t max_topic_size = 0;
    std::uint8_t replication_factor = 1;
    std::string name;
};
struct purge_topic_request {
    proto::identifier stream;
    proto::identifier topic;
};

using request = std::variant<get_stats_request, get_cluster_metadata_request, get_client_request, get_clients_request,
                             get_user_request, get_users_request, create_user_request, delete_user_request,
                             update_user_request, update_permissions_request, change_password_request,
                             get_tokens_request, create_token_request, delete_token_request, update_stream_request,
                             purge_stream_request, update_topic_request, purge_topic_request>;

/// Decodes the payload of an admin command (`is_admin_code(code)`); errors name the field, and
/// `proto::server_status_for_decode_error` maps them to 3/4 as 0.8.0 does.
result<request> decode_request(std::uint32_t code, proto::bytes_view payload);
/// CreateUser's body; `options_tail` (G2, operation 141): the rest of the body is an options
/// block (user-header TLV), checked and ignored (0.9 has no user option keys yet).
result<create_user_request> decode_create_user(proto::bytes_view payload, bool options_tail);

/// The permissions block (`WirePermissions`): 10 global flags, then `u8 has_next` chained
/// stream entries (`stream_id u32 | 6 flags | u8 has_topics | (topic_id u32 | 4 flags | u8
/// has_next)*`).
void append_permissions(proto::writer& w, const permissions& p);
result<permissions> read_permissions(proto::reader& r);

/// GetUser / CreateUser reply: `id u32 | created_at u64 | status u8 | name username`, then
/// `u8 1 | u32 len | permissions` or `u32 0` when the user has none.
/// `g2_options`: the 0.9 layout, where the user header ends with an (empty) `u32 len + options`.
void append_user_details(proto::writer& w, const user_info& u, bool g2_options = false);
/// GetUsers reply: the user headers, back to back.
void append_users(proto::writer& w, const std::vector<user_info>& users);
/// CreatePersonalAccessToken reply: `name token`.
void append_raw_token(proto::writer& w, std::string_view token);
/// GetPersonalAccessTokens reply: `(name | expiry_at u64)*`.
void append_tokens(proto::writer& w, const std::vector<token_info>& tokens);
/// GetClients reply: `(client_id u32 | user_id u32 | transport u8 | u32 len, address |
/// groups_count u32)*` (GetClient adds the group entries: `proto::append_client_details`).
void append_clients(proto::writer& w, const std::vector<proto::client_details>& clients);

/// GetStats reply fields (`StatsResponse`).
struct stats {
    std::uint32_t process_id = 0;
    float cpu_usage = 0, total_cpu_usage = 0;
    std::uint64_t memory_usage = 0, total_memory = 0, available_memory = 0;
    std::uint64_t run_time = 0, start_time = 0;  ///< µs
    std::uint64_t read_bytes = 0, written_bytes = 0, messages_size_bytes = 0;
    std::uint32_t streams_count = 0, topics_count = 0, partitions_count = 0, segments_count = 0;
    std::uint64_t messages_count = 0;
    std::uint32_t clients_count = 0, consumer_groups_count = 0;
    std::string hostname, os_name, os_version, kernel_version;
    std::string server_version = "0.8.0";
    std::uint32_t server_semver = 8000;  ///< major*1e6 + minor*1e3 + patch
    std::uint32_t threads_count = 1;
    std::uint64_t free_disk_space = 0, total_disk_space = 0;
};
void append_stats(proto::writer& w, const stats& s);

/// One node of GetClusterMetadata.
struct cluster_node {
    std::string name;
    std::string ip;
    std::uint16_t tcp = 0, quic = 0, http = 0, websocket = 0;
    std::uint8_t role = 0;    ///< 0 Leader, 1 Follower
    std::uint8_t status = 0;  ///< 0 Healthy
};
/// GetClusterMetadata reply: `u32 len, name | u32 count | (u32 len, name | u32 len, ip |
/// tcp u16 | quic u16 | http u16 | websocket u16 | role u8 | status u8)*`.
void append_cluster_metadata(proto::writer& w, std::string_view name, const std::vector<cluster_node>& nodes);

}  // namespace iss::broker::admin
