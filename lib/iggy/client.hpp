// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The awaitable Iggy client (G1 = server 0.8.x, G2 = 0.9.x/0.10.x): one TCP or TLS connection
/// driven by C++20 coroutines on Asio. See lib/iggy/README.md for the contract in short.
///
/// Why it is shaped like this:
/// - The server answers strictly in order and reads the next request only after answering
///   (docs/protocol.md §3), so every call takes the connection's lock, writes one request,
///   reads one reply, and releases the lock: one request in flight, whoever calls.
/// - A broken connection is never repaired behind the caller's back mid-request: the call in
///   flight fails with `errc::connection_lost` (its effect on the server is unknown), and the
///   *next* call reconnects (full-jitter backoff, `client_options::reconnect_backoff`), logs in,
///   re-joins the groups this client joined, and only then sends its own request. Group
///   membership belongs to the connection, so after a reconnect the member is new:
///   `generation()` changes and the caller drops buffered group work (docs/architecture.md §3).
/// - Authentication failures (40-47, 53, 54; 20 on a token login) end the reconnect loop at
///   once: they are returned, never retried.
/// - Every network step has a deadline (`connect_timeout`, `request_timeout`); a deadline that
///   passes closes the connection (the byte stream is out of step).
/// - Pings go out every `ping_interval` from a background task (the only refresh of the
///   server's heartbeat, §3), taking the same lock.
///
/// - Under it, by job: `session.hpp` (lock, reconnect, re-join, pings, generation, negotiation),
///   `connection.hpp` (TCP/TLS byte stream), `transport.hpp` with `g1_transport.hpp` and
///   `g2_transport.hpp` (framing, login, what differs per wire generation), `g2_groups.hpp`
///   (G2 partition assignment); the protocol choice is `proto/negotiation.hpp`.
///
/// Lifecycle and threading: construct on an executor (a single-threaded io_context or a
/// strand); every call must run on that executor; the object must outlive the calls. Not
/// thread-safe. `close()` (or the destructor) stops the ping task and closes the socket.

#include "common/backoff.hpp"
#include "common/clock.hpp"
#include "common/error.hpp"
#include "common/net/sleeper.hpp"
#include "common/types.hpp"
#include "iggy/error.hpp"
#include "proto/message.hpp"
#include "proto/negotiation.hpp"
#include "proto/records.hpp"
#include "proto/types.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>

namespace iss::iggy {

namespace net = boost::asio;

using proto::consumer;
using proto::identifier;
using proto::partitioning;
using proto::polling_strategy;

/// TLS settings of the connection (docs/protocol.md §9: TLS wraps the same byte stream).
struct tls_options {
    bool enabled = false;     ///< default off (the server's default listener is plain TCP)
    std::string ca_file;      ///< PEM file of trusted CAs; empty = the system's default paths
    std::string server_name;  ///< the name the certificate must match, sent as SNI unless an IP literal; empty = `host`
    bool verify = true;       ///< verify the server's certificate chain and name (default on)
};

/// Which Iggy wire protocol a client speaks (docs/architecture.md §4); negotiated per
/// connection by `proto::negotiation`.
using wire_protocol = proto::wire_protocol;
using proto::wire_protocol_name;

/// Settings of one client. Durations: zero disables where noted.
struct client_options {
    std::string host = "127.0.0.1";  ///< server host name or address
    std::uint16_t port = 8090;       ///< server TCP port (the server's default 8090)
    std::string username = "iggy";   ///< LoginUser name (3..50 bytes)
    iggy_password password;          ///< LoginUser password (3..100 bytes)
    iggy_token token;                ///< when set: LoginWithPersonalAccessToken instead of LoginUser
    tls_options tls;
    std::chrono::milliseconds connect_timeout{5000};   ///< resolve + TCP connect + TLS handshake + login, each
    std::chrono::milliseconds request_timeout{10000};  ///< write of a request and read of its reply
    std::chrono::milliseconds ping_interval{5000};     ///< Ping period; 0 = no pings
    /// Delay before reconnect attempt n: U(0, min(cap, base * 2^n)).
    backoff_policy reconnect_backoff{std::chrono::milliseconds{200}, std::chrono::milliseconds{5000}};
    unsigned reconnect_attempts = 0;  ///< connect attempts per call before giving up; 0 = unlimited
    /// false: a rejected server certificate (errc::certificate_rejected) ends the call at once,
    /// not retried (the one-shot commands: `probe`, `lag`, `verify`); true: retried like an
    /// unreachable server (`run` waits for a renewed certificate).
    bool retry_rejected_certificate = true;
    std::size_t max_reply_bytes = 64u * 1024 * 1024;  ///< larger replies are a protocol error
    std::string client_version = "iggy-s3-sink";      ///< LoginUser's version field
    // ---- G2
    wire_protocol protocol = wire_protocol::g1_0_8;  ///< which framing (config `iggy.protocol`)
    std::chrono::milliseconds detect_timeout{3000};  ///< auto: how long the G2 probe waits for an answer
    std::string sdk_name = "iggy-s3-sink";           ///< G2 ClientVersionInfo sdk_name
    std::string sdk_version = "0.1.0";               ///< G2 ClientVersionInfo sdk_version
    /// G2 retries of statuses 57 (replayed as the identical frame) and 58: pause between tries
    /// and overall budget (docs/protocol.md §8.5: about 50 ms, within 30 s).
    std::chrono::milliseconds transient_retry_delay{50};
    std::chrono::milliseconds transient_retry_budget{30000};
    // ---- the retry loops' time (reconnect backoff, the G2 replay; `common/backoff.hpp`)
    /// The clock the retry budgets measure on; null = the real clock. Outlives the client.
    const iss::clock* clock = nullptr;
    /// The waits between retries; null = the client's own `iss::asio_sleeper` (a caller's
    /// cancellation throws `operation_aborted`). Outlives the client. Tests pass a sleeper
    /// that advances a manual `clock`. (The pings keep their own real-time sleeper.)
    iss::sleeper* sleeper = nullptr;
};

/// A message to send. The server assigns offset and timestamp; id 0 = the server picks one.
struct outgoing_message {
    proto::u128 id = 0;
    std::uint64_t origin_timestamp = 0;  ///< µs since the Unix epoch (producer clock)
    proto::bytes_view payload;           ///< must stay valid during the call
    proto::bytes_view user_headers;      ///< a built §2.6 block (proto::append_user_header), may be empty
};

/// A poll's answer. `messages` are views into the buffer the reply was read into, which the
/// client hands over with the batch (`owner`): the bytes they point to stay valid for as long
/// as `owner` (or a copy of it) lives, after later polls too, and were never copied. The
/// `messages` span itself is the client's and valid until the next poll: copy the views
/// (small) if you keep them.
struct poll_batch {
    std::uint32_t partition_id = 0;    ///< the partition polled (0 when a group poll found none)
    std::uint64_t current_offset = 0;  ///< the partition's newest offset (0 when empty)
    std::span<const proto::message_view> messages;
    std::shared_ptr<const void> owner;  ///< holds the bytes of `messages` (null when there are none)
};

class session;

/// What the client counts (the admin server's `iggy_*` metrics; tests read it directly).
struct client_stats {
    /// Successful connects after the first one (each is a new session and group member).
    std::uint64_t reconnects = 0;
    /// Requests by (command name as in proto::command_name, answer): the answer is the
    /// server's status code ("0" = ok, "5006" ...) or "error" when no reply came.
    std::map<std::pair<std::string, std::string>, std::uint64_t> requests;
};

/// The awaitable client. See the file comment.
class client {
public:
    client(net::any_io_executor ex, client_options opts);
    ~client();
    client(const client&) = delete;
    client& operator=(const client&) = delete;

    /// Connects and logs in (retrying transport failures per the options). Not needed before
    /// other calls (they connect on demand) but useful to fail fast at start.
    net::awaitable<result<void>> connect();
    /// Stops pings and closes the connection. Later calls fail with `errc::closed`.
    net::awaitable<void> close();

    net::awaitable<result<void>> ping();
    /// GetMe (20): this connection as the server sees it.
    net::awaitable<result<proto::client_details>> get_me();

    /// nullopt = not found (the server's empty reply).
    net::awaitable<result<std::optional<proto::stream_details>>> get_stream(identifier stream);
    net::awaitable<result<proto::stream_details>> create_stream(std::string name);
    net::awaitable<result<void>> delete_stream(identifier stream);
    net::awaitable<result<std::optional<proto::topic_details>>> get_topic(identifier stream, identifier topic);
    /// CreateTopic with the server's defaults for expiry and size (0), compression none.
    net::awaitable<result<proto::topic_details>> create_topic(identifier stream, std::string name,
                                                              std::uint32_t partitions);
    net::awaitable<result<void>> delete_topic(identifier stream, identifier topic);
    net::awaitable<result<void>> create_partitions(identifier stream, identifier topic, std::uint32_t count);

    net::awaitable<result<std::optional<proto::consumer_group_details>>> get_consumer_group(identifier stream,
                                                                                            identifier topic,
                                                                                            identifier group);
    net::awaitable<result<proto::consumer_group_info>> create_consumer_group(identifier stream, identifier topic,
                                                                             std::string name);
    /// Joins and remembers the group: it is re-joined after every reconnect.
    net::awaitable<result<void>> join_consumer_group(identifier stream, identifier topic, identifier group);
    /// Leaves and forgets the group.
    net::awaitable<result<void>> leave_consumer_group(identifier stream, identifier topic, identifier group);

    /// SendMessages (101): the batch goes to one partition (the server's choice per `p`).
    net::awaitable<result<void>> send_messages(identifier stream, identifier topic, partitioning p,
                                               std::span<const outgoing_message> messages);
    /// PollMessages (100). `partition` nullopt: a group poll lets the server pick (round robin).
    net::awaitable<result<poll_batch>> poll_messages(consumer c, identifier stream, identifier topic,
                                                     std::optional<std::uint32_t> partition, polling_strategy strategy,
                                                     std::uint32_t count, bool auto_commit);
    /// StoreConsumerOffset (121): `offset` = the last processed message. Send the partition.
    net::awaitable<result<void>> store_offset(consumer c, identifier stream, identifier topic,
                                              std::optional<std::uint32_t> partition, std::uint64_t offset);
    /// nullopt = nothing stored (or unknown stream, topic, group or partition).
    net::awaitable<result<std::optional<proto::consumer_offset_info>>> get_offset(
        consumer c, identifier stream, identifier topic, std::optional<std::uint32_t> partition);
    net::awaitable<result<void>> delete_offset(consumer c, identifier stream, identifier topic,
                                               std::optional<std::uint32_t> partition);

    /// Request and reconnect counters.
    [[nodiscard]] const client_stats& stats() const noexcept;
    /// Incremented at every successful (re)connect; 0 before the first.
    [[nodiscard]] std::uint64_t generation() const noexcept;
    /// True while a connection is established and logged in.
    [[nodiscard]] bool connected() const noexcept;
    [[nodiscard]] const client_options& options() const noexcept;
    /// The protocol of the current (or last) connection: never `automatic` once connected.
    [[nodiscard]] wire_protocol protocol_in_use() const noexcept;

private:
    std::shared_ptr<session> s_;
};

}  // namespace iss::iggy
