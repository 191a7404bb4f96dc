// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Users, permissions and personal access tokens of the Iggy test broker: a TEST DOUBLE of
/// server 0.8.0's user model (core/server/src/shard/system/users.rs, personal_access_tokens.rs,
/// core/server/src/metadata/reader.rs `perm_*`), without I/O. `broker_state` owns one and
/// persists it with the rest of its metadata.
///
/// What it models:
/// - user IDs from a slab (root is 0, a create takes the most recently freed ID, else the next);
///   usernames unique; status 1 active, 2 inactive; permissions optional (none = no rights);
/// - root (ID 0) is created from the broker options with every global permission, cannot be
///   deleted (48) nor have its permissions changed (49);
/// - passwords and tokens kept in clear (a test double: nothing here is a secret store);
/// - tokens: per-user unique names (51), at most 100 per user (52), expiry in µs since the epoch
///   (0 = never), a random 50-character value returned once by Create;
/// - the permission checks of 0.8.0's metadata reader, with its inheritance rules, answering
///   41 (Unauthorized).
///
/// Thread safety: none; used on the broker's one thread.

#include "iggy_broker/broker_state.hpp"

#include <boost/json/value.hpp>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace iss::broker {

/// Global permissions (wire order of `WireGlobalPermissions`).
struct global_permissions {
    bool manage_servers = false;
    bool read_servers = false;
    bool manage_users = false;
    bool read_users = false;
    bool manage_streams = false;
    bool read_streams = false;
    bool manage_topics = false;
    bool read_topics = false;
    bool poll_messages = false;
    bool send_messages = false;
    friend bool operator==(const global_permissions&, const global_permissions&) = default;
};
/// Per-topic permissions of a stream entry.
struct topic_permissions {
    std::uint32_t topic_id = 0;
    bool manage_topic = false;
    bool read_topic = false;
    bool poll_messages = false;
    bool send_messages = false;
    friend bool operator==(const topic_permissions&, const topic_permissions&) = default;
};
/// Per-stream permissions.
struct stream_permissions {
    std::uint32_t stream_id = 0;
    bool manage_stream = false;
    bool read_stream = false;
    bool manage_topics = false;
    bool read_topics = false;
    bool poll_messages = false;
    bool send_messages = false;
    std::vector<topic_permissions> topics;
    friend bool operator==(const stream_permissions&, const stream_permissions&) = default;
};
/// A user's permissions.
struct permissions {
    global_permissions global;
    std::vector<stream_permissions> streams;
    friend bool operator==(const permissions&, const permissions&) = default;
    /// Every global right (root's).
    static permissions all();
};

/// What a request needs, named after 0.8.0's `perm_*` checks.
enum class action {
    get_stats,      ///< also GetClient(s): manage_servers | read_servers
    read_users,     ///< GetUser(s)
    manage_users,   ///< Create/Delete/UpdateUser, UpdatePermissions, ChangePassword (of another user)
    get_streams,    ///< GetStreams
    get_stream,     ///< GetStream (stream)
    create_stream,  ///< CreateStream
    manage_stream,  ///< Update/Delete/PurgeStream (stream)
    get_topics,     ///< GetTopics (stream)
    get_topic,      ///< GetTopic and the consumer-group commands (stream, topic)
    create_topic,   ///< CreateTopic (stream)
    manage_topic,   ///< Update/Delete/PurgeTopic, Create/DeletePartitions (stream, topic)
    poll_messages,  ///< PollMessages and the consumer-offset commands (stream, topic)
    send_messages,  ///< SendMessages (stream, topic)
};

/// One user as GetUser shows it.
struct user_info {
    std::uint32_t id = 0;
    std::uint64_t created_at = 0;  ///< µs since the epoch
    std::uint8_t status = 1;       ///< 1 active, 2 inactive
    std::string username;
    std::optional<permissions> perms;
};

/// A token as GetPersonalAccessTokens lists it.
struct token_info {
    std::string name;
    std::uint64_t expiry_at = 0;  ///< µs since the epoch; 0 = never
};

/// The users, their permissions and their tokens.
class user_store {
public:
    /// Creates root (ID 0) from `root_name` / `root_password`, and the `tokens` of the broker
    /// options as root's tokens that never expire.
    user_store(std::string root_name, std::string root_password,
               const std::vector<std::pair<std::string, std::string>>& tokens, std::uint64_t seed);

    /// LoginUser: the user ID, or 43/44 (lengths), 42 (unknown user or wrong password), 47
    /// (inactive), in 0.8.0's order.
    res<std::uint32_t> login(std::string_view username, std::string_view password) const;
    /// LoginWithPersonalAccessToken: the token's user ID, or 20 (unknown), 54 (expired), 47.
    res<std::uint32_t> login_token(std::string_view token, std::uint64_t now_us) const;

    /// Whether `user` may do `a` on (stream, topic); 41 when not. Unknown users have no rights.
    [[nodiscard]] status authorize(std::uint32_t user, action a, std::uint32_t stream = 0,
                                   std::uint32_t topic = 0) const;

    [[nodiscard]] std::optional<user_info> get(const ident& user) const;
    [[nodiscard]] std::vector<user_info> list() const;
    [[nodiscard]] std::size_t size() const noexcept { return users_.size(); }
    /// CreateUser (the caller checked `manage_users`): 43/44 lengths, 45 status, 46 name taken.
    res<user_info> create(std::string_view username, std::string_view password, std::uint8_t status,
                          std::optional<permissions> perms, std::uint64_t now_us);
    /// DeleteUser: 20 unknown, 48 root.
    res<none> remove(const ident& user);
    /// UpdateUser: 43 username length, 45 status, 20 unknown, 46 name taken.
    res<none> update(const ident& user, std::optional<std::string> username, std::optional<std::uint8_t> status);
    /// UpdatePermissions: 20 unknown, 49 root.
    res<none> set_permissions(const ident& user, std::optional<permissions> perms);
    /// ChangePassword by `caller`: 44 lengths, 20 unknown, 41 another user without
    /// manage_users, 42 wrong current password.
    res<none> change_password(std::uint32_t caller, const ident& user, std::string_view current, std::string_view next);

    /// CreatePersonalAccessToken for `user`: 50 name length, 52 too many, 51 name taken; the
    /// token value. `expiry_us` 0 = never (u64 max is read as never too, like IggyExpiry).
    res<std::string> create_token(std::uint32_t user, std::string_view name, std::uint64_t expiry_us,
                                  std::uint64_t now_us);
    /// DeletePersonalAccessToken: 20 when `user` has no token of that name.
    res<none> delete_token(std::uint32_t user, std::string_view name);
    [[nodiscard]] std::vector<token_info> tokens(std::uint32_t user) const;

    /// The persisted form (a JSON array of users with their tokens).
    [[nodiscard]] boost::json::value to_json() const;
    /// Replaces every user with the persisted form; an error text, empty on success.
    std::string from_json(const boost::json::value& v);

private:
    struct token {
        std::string name;
        std::string value;
        std::uint64_t expiry_at = 0;
    };
    struct user {
        user_info info;
        std::string password;
        std::vector<token> tokens;
    };
    user* find(const ident& id);
    const user* find(const ident& id) const;

    slab<user> users_;
    mutable std::mt19937_64 rng_;
};

}  // namespace iss::broker
