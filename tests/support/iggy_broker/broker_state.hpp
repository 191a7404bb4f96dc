// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The semantic core of the Iggy test broker: a TEST DOUBLE of Apache Iggy server 0.8.0's
/// behaviour (docs/protocol.md §3-7), without any I/O but its optional `--data` files.
///
/// What it models, each as server 0.8.0 does it (read from apache/iggy at tag server-0.8.0):
/// - streams, topics and consumer groups with slab IDs (a create takes the most recently freed
///   ID, else the next unused one, so the first is 0); partitions with IDs 0..N-1;
/// - an in-memory append log per partition holding messages in their G1 poll layout
///   (64-byte header, payload, user headers), so a poll is a copy of contiguous byte ranges and
///   allocates nothing per message;
/// - server-assigned offsets, ids (random UUIDv4 when 0), timestamps and XXH3-64 checksums;
/// - balanced partitioning: one partition per SendMessages request from a per-topic counter;
/// - consumer offsets: stored = last consumed, Next = stored + 1; auto_commit in the poll;
/// - consumer groups: membership per connection ("client"), cooperative rebalance on join
///   (one partition per idle member per join, pending revocations that complete when the
///   group's stored offset reaches the last polled offset or after the rebalance timeout),
///   full rebalance on leave, disconnect, heartbeat expiry and partition changes;
/// - the error codes the server sends, at the same checks, in the same order.
///
/// Thread safety: none. The broker runs it on one thread (its io_context). Time comes from an
/// injected `iss::clock`; `tick()` runs the periodic checkers (revocation timeout, heartbeat).

#include "common/clock.hpp"
#include "proto/error.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace iss::broker {

/// A G1 reply status: 0 = OK, otherwise an IggyError code (docs/protocol.md §4).
using status = std::uint32_t;

/// The codes the broker sends: the values of `proto::server_errc`, the one spelling of Iggy's
/// codes (docs/protocol.md §4), as statuses.
namespace code {
inline constexpr status ok = 0;
inline constexpr status invalid_command = static_cast<status>(proto::server_errc::invalid_command);
inline constexpr status invalid_format = static_cast<status>(proto::server_errc::invalid_format);
inline constexpr status invalid_identifier = static_cast<status>(proto::server_errc::invalid_identifier);
inline constexpr status disconnected = static_cast<status>(proto::server_errc::disconnected);
inline constexpr status resource_not_found = static_cast<status>(proto::server_errc::resource_not_found);
inline constexpr status stale_client = static_cast<status>(proto::server_errc::stale_client);
inline constexpr status unauthenticated = static_cast<status>(proto::server_errc::unauthenticated);
inline constexpr status invalid_credentials = static_cast<status>(proto::server_errc::invalid_credentials);
inline constexpr status invalid_username = static_cast<status>(proto::server_errc::invalid_username);
inline constexpr status invalid_password = static_cast<status>(proto::server_errc::invalid_password);
inline constexpr status client_not_found = static_cast<status>(proto::server_errc::client_not_found);
inline constexpr status stream_id_not_found = static_cast<status>(proto::server_errc::stream_id_not_found);
inline constexpr status stream_name_already_exists =
    static_cast<status>(proto::server_errc::stream_name_already_exists);
inline constexpr status invalid_topic_size = static_cast<status>(proto::server_errc::invalid_topic_size);
inline constexpr status topic_id_not_found = static_cast<status>(proto::server_errc::topic_id_not_found);
inline constexpr status topic_name_already_exists = static_cast<status>(proto::server_errc::topic_name_already_exists);
inline constexpr status too_many_partitions = static_cast<status>(proto::server_errc::too_many_partitions);
inline constexpr status invalid_partitions_count = static_cast<status>(proto::server_errc::invalid_partitions_count);
inline constexpr status partition_not_found = static_cast<status>(proto::server_errc::partition_not_found);
inline constexpr status consumer_offset_not_found = static_cast<status>(proto::server_errc::consumer_offset_not_found);
inline constexpr status not_resolved_consumer = static_cast<status>(proto::server_errc::not_resolved_consumer);
inline constexpr status invalid_messages_count = static_cast<status>(proto::server_errc::invalid_messages_count);
inline constexpr status too_big_user_headers = static_cast<status>(proto::server_errc::too_big_user_headers);
inline constexpr status too_big_message_payload = static_cast<status>(proto::server_errc::too_big_message_payload);
inline constexpr status invalid_offset = static_cast<status>(proto::server_errc::invalid_offset);
inline constexpr status consumer_group_id_not_found =
    static_cast<status>(proto::server_errc::consumer_group_id_not_found);
inline constexpr status consumer_group_name_already_exists =
    static_cast<status>(proto::server_errc::consumer_group_name_already_exists);
inline constexpr status consumer_group_member_not_found =
    static_cast<status>(proto::server_errc::consumer_group_member_not_found);
}  // namespace code

/// A value or a non-zero status.
template <class T>
struct res {
    status code = 0;
    T value{};
    [[nodiscard]] bool ok() const noexcept { return code == 0; }
};
/// Success without a value.
struct none {};

/// A stream, topic or group identifier: numeric ID or exact name.
struct ident {
    bool numeric = true;
    std::uint32_t id = 0;
    std::string name;
    static ident num(std::uint32_t v) { return {true, v, {}}; }
    static ident str(std::string n) { return {false, 0, std::move(n)}; }
};

/// Consumer kind 1 (single consumer, needs no registration) or 2 (consumer group).
struct consumer {
    std::uint8_t kind = 1;
    ident id;
};

enum class partitioning_kind : std::uint8_t { balanced = 1, partition_id = 2, messages_key = 3 };
struct partitioning {
    partitioning_kind kind = partitioning_kind::balanced;
    std::uint32_t partition_id = 0;
    std::string key;
};

enum class strategy_kind : std::uint8_t { offset = 1, timestamp = 2, first = 3, last = 4, next = 5 };
struct strategy {
    strategy_kind kind = strategy_kind::next;
    std::uint64_t value = 0;
};

/// One message of a SendMessages request (fields the server keeps; the rest it assigns).
struct message_in {
    std::uint64_t id_lo = 0;  ///< low 64 bits of the u128 id (0 and id_hi 0: server assigns)
    std::uint64_t id_hi = 0;
    std::uint64_t offset = 0;  ///< as sent; only checked not to decrease within the batch
    std::uint64_t origin_timestamp = 0;
    std::span<const std::uint8_t> payload;
    std::span<const std::uint8_t> headers;  ///< the user_headers block, never parsed
};

struct partition_info {
    std::uint32_t id = 0;
    std::uint64_t created_at = 0;
    std::uint32_t segments_count = 0;
    std::uint64_t current_offset = 0;
    std::uint64_t size_bytes = 0;
    std::uint64_t messages_count = 0;
};
struct topic_info {
    std::uint32_t id = 0;
    std::uint64_t created_at = 0;
    std::uint32_t partitions_count = 0;
    std::uint64_t message_expiry = 0;
    std::uint8_t compression = 1;
    std::uint64_t max_topic_size = 0;
    std::uint8_t replication_factor = 1;
    std::uint64_t size_bytes = 0;
    std::uint64_t messages_count = 0;
    std::string name;
    std::vector<partition_info> partitions;  ///< filled by get_topic / create_topic only
};
struct stream_info {
    std::uint32_t id = 0;
    std::uint64_t created_at = 0;
    std::uint32_t topics_count = 0;
    std::uint64_t size_bytes = 0;
    std::uint64_t messages_count = 0;
    std::string name;
    std::vector<topic_info> topics;  ///< filled by get_stream only (headers, no partitions)
};
struct member_info {
    std::uint32_t id = 0;
    std::vector<std::uint32_t> partitions;  ///< in assignment order
};
struct group_info {
    std::uint32_t id = 0;
    std::uint32_t partitions_count = 0;
    std::uint32_t members_count = 0;
    std::string name;
    std::vector<member_info> members;  ///< in slot order
};
struct offset_info {
    std::uint32_t partition_id = 0;
    std::uint64_t current_offset = 0;
    std::uint64_t stored_offset = 0;
};
struct client_info {
    std::uint32_t client_id = 0;
    std::uint32_t user_id = 0;  ///< u32 max while not logged in (0.8.0's `user_id.unwrap_or(u32::MAX)`)
    std::string address;
    std::vector<std::array<std::uint32_t, 3>> groups;  ///< (stream, topic, group), join order
};

class partition_log;
class user_store;

/// Totals for GetStats.
struct state_counts {
    std::uint32_t streams = 0, topics = 0, partitions = 0, segments = 0, clients = 0, groups = 0;
    std::uint64_t messages = 0, bytes = 0;
};

/// A poll's answer: the messages are `chunks`, contiguous G1-layout bytes ready to send, valid
/// as long as this object lives (it keeps the log alive).
struct poll_result {
    std::uint32_t partition_id = 0;
    std::uint64_t current_offset = 0;
    std::uint32_t count = 0;
    std::vector<std::span<const std::uint8_t>> chunks;
    std::shared_ptr<const partition_log> keep_alive;
    [[nodiscard]] std::size_t bytes() const noexcept;
};

/// The append log of one partition: messages in G1 layout in large segments that never move.
class partition_log {
public:
    struct entry {
        std::uint32_t segment;
        std::uint32_t pos;
        std::uint32_t len;
        std::uint64_t timestamp;
    };
    /// Room for one message of `len` bytes at the end; `commit` makes it visible.
    std::uint8_t* reserve(std::size_t len);
    void commit(std::size_t len, std::uint64_t timestamp);
    [[nodiscard]] std::uint64_t count() const noexcept { return index_.size(); }
    [[nodiscard]] std::uint64_t bytes() const noexcept { return bytes_; }
    [[nodiscard]] const entry& at(std::uint64_t offset) const { return index_[offset]; }
    [[nodiscard]] const std::uint8_t* data(const entry& e) const { return segments_[e.segment].get() + e.pos; }
    /// The first offset whose timestamp is >= ts, or count().
    [[nodiscard]] std::uint64_t first_at_or_after(std::uint64_t ts) const;
    /// Appends the byte ranges of messages [first, last] to `out`.
    void ranges(std::uint64_t first, std::uint64_t last, std::vector<std::span<const std::uint8_t>>& out) const;

    /// One SendMessages batch as appended: its first offset and smallest origin timestamp (µs).
    struct batch_mark {
        std::uint64_t first_offset = 0;
        std::uint64_t origin_timestamp = 0;
    };
    /// Records that the next messages appended from `first_offset` on form one batch.
    void mark_batch(std::uint64_t first_offset, std::uint64_t origin_timestamp);
    /// The batch `offset` was appended with; nullopt for messages loaded from `--data` (batch
    /// boundaries are not persisted) or before any mark.
    [[nodiscard]] std::optional<batch_mark> batch_of(std::uint64_t offset) const;

private:
    std::vector<std::unique_ptr<std::uint8_t[]>> segments_;
    std::vector<std::size_t> seg_cap_;
    std::size_t tail_used_ = 0;
    std::vector<entry> index_;
    std::vector<batch_mark> batches_;  // ascending first_offset
    std::uint64_t bytes_ = 0;
    std::size_t pending_seg_ = 0;
};

/// A slab of T: insert takes the most recently freed key, else appends; iteration is by key.
template <class T>
class slab {
public:
    std::size_t insert(T v) {
        if (!free_.empty()) {
            auto k = free_.back();
            free_.pop_back();
            items_[k] = std::move(v);
            ++size_;
            return k;
        }
        items_.emplace_back(std::move(v));
        ++size_;
        return items_.size() - 1;
    }
    /// Places `v` at key `k` (used when loading persisted state).
    void insert_at(std::size_t k, T v) {
        if (items_.size() <= k) items_.resize(k + 1);
        items_[k] = std::move(v);
        ++size_;
        rebuild_free();
    }
    void remove(std::size_t k) {
        if (k < items_.size() && items_[k]) {
            items_[k].reset();
            free_.push_back(k);
            --size_;
        }
    }
    [[nodiscard]] T* get(std::size_t k) { return k < items_.size() && items_[k] ? &*items_[k] : nullptr; }
    [[nodiscard]] const T* get(std::size_t k) const { return k < items_.size() && items_[k] ? &*items_[k] : nullptr; }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] std::size_t capacity() const noexcept { return items_.size(); }
    template <class F>
    void for_each(F&& f) {
        for (std::size_t k = 0; k < items_.size(); ++k)
            if (items_[k]) f(k, *items_[k]);
    }
    template <class F>
    void for_each(F&& f) const {
        for (std::size_t k = 0; k < items_.size(); ++k)
            if (items_[k]) f(k, *items_[k]);
    }

private:
    void rebuild_free() {
        free_.clear();
        for (std::size_t k = items_.size(); k-- > 0;)
            if (!items_[k]) free_.push_back(k);
    }
    std::vector<std::optional<T>> items_;
    std::vector<std::size_t> free_;
    std::size_t size_ = 0;
};

/// Broker settings.
struct broker_options {
    std::string username = "iggy";
    std::string password = "iggy";
    /// Personal access tokens: (name, value); LoginWithPersonalAccessToken sends the value.
    std::vector<std::pair<std::string, std::string>> tokens;
    /// `[consumer_group] rebalancing_timeout` (server default 30 s).
    std::chrono::microseconds rebalance_timeout{std::chrono::seconds{30}};
    /// `[heartbeat] interval` when enabled; zero = disabled (the server default).
    std::chrono::microseconds heartbeat{0};
    /// Directory for persistent state; empty = memory only.
    std::filesystem::path data_dir;
    /// The clock (not owned); nullptr = real clock.
    const iss::clock* clock = nullptr;
    /// Seed for server-assigned message ids.
    std::uint64_t seed = 0x1995'0909;
    /// Called with one line for every consumer-group membership change (a member joined, or
    /// left: LeaveConsumerGroup, its connection gone or expired): each is a rebalance the
    /// group's other members see. Null: not reported.
    std::function<void(const std::string&)> on_membership;
};

/// The broker's state machine. Every request names the calling connection's `client_id`.
class broker_state {
public:
    explicit broker_state(broker_options opts);
    ~broker_state();
    broker_state(const broker_state&) = delete;
    broker_state& operator=(const broker_state&) = delete;

    /// Loads `data_dir` if set (streams, topics, groups, messages, offsets). Returns an error
    /// text, empty on success.
    std::string load();

    // ---- connections ("clients") and sessions
    /// A new connection: `client_id` = XXH32 of `address` in 0.8.0 (see `client_id_for`).
    void add_client(std::uint32_t client_id, std::string address);
    /// The connection closed: leaves all its groups (full rebalance) and forgets it.
    void remove_client(std::uint32_t client_id);
    /// The heartbeat checker dropped the client: it leaves its groups (full rebalance) and is no
    /// longer in the client table (group commands get 30, GetMe 100), but the connection stays
    /// open and logged in for everything else.
    void expire_client(std::uint32_t client_id);
    [[nodiscard]] bool client_exists(std::uint32_t client_id) const;
    /// 0.8.0's client id: XXH32(address text, seed 0).
    static std::uint32_t client_id_for(std::string_view address);

    /// LoginUser against the user store (root from the options, users from CreateUser).
    res<std::uint32_t> login_user(std::uint32_t client_id, std::string_view username, std::string_view password);
    /// LoginWithPersonalAccessToken: the token's owner.
    res<std::uint32_t> login_token(std::uint32_t client_id, std::string_view token);
    /// The logged-in user of a connection; nullopt before login or after logout.
    [[nodiscard]] std::optional<std::uint32_t> session_user(std::uint32_t client_id) const;
    /// The users, permissions and tokens (users.hpp). Call `users_changed()` after a change.
    user_store& users();
    const user_store& users() const;
    /// Persists the user store (with the rest of the metadata under `--data`).
    void users_changed();
    /// DeleteUser's side effect in 0.8.0: the user's connections are logged out.
    void logout_user_everywhere(std::uint32_t user_id);
    /// GetClient: nullopt = unknown (the empty reply).
    [[nodiscard]] std::optional<client_info> get_client(std::uint32_t client_id) const;
    /// GetClients: every client in the table, by id.
    [[nodiscard]] std::vector<client_info> get_clients() const;
    /// GetStats counters.
    [[nodiscard]] state_counts counts() const;
    /// When the broker started (µs since the epoch, from the injected clock).
    [[nodiscard]] std::uint64_t start_time_us() const;
    /// The injected clock's wall time (µs since the epoch).
    [[nodiscard]] std::uint64_t now_us() const;
    /// The numeric ID of a stream / topic, for permission checks; nullopt = unknown.
    [[nodiscard]] std::optional<std::uint32_t> stream_id_of(const ident& stream) const;
    [[nodiscard]] std::optional<std::pair<std::uint32_t, std::uint32_t>> topic_id_of(const ident& stream,
                                                                                     const ident& topic) const;
    res<none> logout(std::uint32_t client_id);
    /// Whether the connection is logged in (an expired client keeps its login).
    [[nodiscard]] bool logged_in(std::uint32_t client_id) const;
    /// Ping: refreshes the heartbeat.
    void ping(std::uint32_t client_id);
    /// GetMe: 100 once the client was removed (the caller then closes the connection).
    res<client_info> get_me(std::uint32_t client_id) const;

    // ---- streams and topics
    res<stream_info> create_stream(std::string_view name);
    res<std::optional<stream_info>> get_stream(const ident& stream) const;
    std::vector<stream_info> get_streams() const;
    res<none> delete_stream(const ident& stream);
    /// UpdateStream: 1009 unknown, 1012 another stream has the name.
    res<none> update_stream(const ident& stream, std::string_view name);
    /// PurgeStream: every topic of the stream loses its messages and consumer offsets.
    res<none> purge_stream(const ident& stream);
    res<topic_info> create_topic(const ident& stream, std::uint32_t partitions, std::uint8_t compression,
                                 std::uint64_t message_expiry, std::uint64_t max_topic_size,
                                 std::uint8_t replication_factor, std::string_view name);
    std::optional<topic_info> get_topic(const ident& stream, const ident& topic) const;
    std::vector<topic_info> get_topics(const ident& stream) const;
    res<none> delete_topic(const ident& stream, const ident& topic);
    /// UpdateTopic: the checks of CreateTopic (compression, size), 2013 another topic has the name.
    res<none> update_topic(const ident& stream, const ident& topic, std::uint8_t compression,
                           std::uint64_t message_expiry, std::uint64_t max_topic_size, std::uint8_t replication_factor,
                           std::string_view name);
    /// PurgeTopic: messages and consumer (group) offsets of every partition are dropped; the
    /// next message gets offset 0 again.
    res<none> purge_topic(const ident& stream, const ident& topic);
    res<none> create_partitions(const ident& stream, const ident& topic, std::uint32_t count);
    res<none> delete_partitions(const ident& stream, const ident& topic, std::uint32_t count);

    // ---- messages
    /// Where a SendMessages batch went (the G2 reply confirms it).
    struct appended {
        std::uint32_t stream_id = 0;
        std::uint32_t topic_id = 0;
        std::uint32_t partition_id = 0;
        std::uint64_t base_offset = 0;
    };
    res<appended> send_messages(const ident& stream, const ident& topic, const partitioning& p,
                                std::span<const message_in> messages);
    res<poll_result> poll_messages(std::uint32_t client_id, const consumer& c, const ident& stream, const ident& topic,
                                   std::optional<std::uint32_t> partition, strategy s, std::uint32_t count,
                                   bool auto_commit);

    // ---- offsets
    res<none> store_offset(std::uint32_t client_id, const consumer& c, const ident& stream, const ident& topic,
                           std::optional<std::uint32_t> partition, std::uint64_t offset);
    std::optional<offset_info> get_offset(const consumer& c, const ident& stream, const ident& topic,
                                          std::optional<std::uint32_t> partition) const;
    res<none> delete_offset(std::uint32_t client_id, const consumer& c, const ident& stream, const ident& topic,
                            std::optional<std::uint32_t> partition);

    // ---- consumer groups
    res<group_info> create_group(const ident& stream, const ident& topic, std::string_view name);
    std::optional<group_info> get_group(const ident& stream, const ident& topic, const ident& group) const;
    std::vector<group_info> get_groups(const ident& stream, const ident& topic) const;
    res<none> delete_group(const ident& stream, const ident& topic, const ident& group);
    /// G2 SyncConsumerGroup (docs/protocol.md §8.7): the member's pollable partitions, pending
    /// revocations left out; nullopt = unknown group or not a member.
    std::optional<std::vector<std::uint32_t>> member_partitions(std::uint32_t client_id, const ident& s, const ident& t,
                                                                const ident& g) const;
    res<none> join_group(std::uint32_t client_id, const ident& stream, const ident& topic, const ident& group);
    res<none> leave_group(std::uint32_t client_id, const ident& stream, const ident& topic, const ident& group);

    /// Runs the periodic checkers at the clock's current time: forces pending revocations
    /// older than the rebalance timeout; removes clients whose last Ping is older than
    /// 1.2 × heartbeat (when enabled). Returns the ids of the clients it removed.
    std::vector<std::uint32_t> tick();

    // ---- test controls (the broker's SIGUSR1 / SIGUSR2, see main.cpp)
    /// Heartbeat expiry now for every client that is a member of a consumer group, whatever its
    /// last Ping: the same as `expire_client` for each (they leave their groups). Returns them.
    std::vector<std::uint32_t> expire_group_members();
    /// Every member leaves every group it is in (a full rebalance of each), while the clients
    /// stay in the client table, logged in: membership lost without a session loss. Returns
    /// how many memberships were dropped.
    std::size_t drop_group_memberships();

    /// Total messages stored (all partitions). For tests and the banner.
    [[nodiscard]] std::uint64_t total_messages() const;

    struct state;  // internal

private:
    std::unique_ptr<state> s_;
};

}  // namespace iss::broker
