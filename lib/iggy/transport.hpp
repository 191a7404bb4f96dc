// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// What differs between Iggy's wire generations, behind one interface: a transport frames
/// requests, reads replies through proto's assemblers, logs in and decodes the replies whose
/// bodies differ. The session (`session.hpp`) picks one per connection from the negotiation
/// (`proto/negotiation.hpp`) and drives it; the public client's commands only name a request
/// and a decoder.
///
/// - G1 (`g1_transport.hpp`): 8-byte headers; statuses are final.
/// - G2 (`g2_transport.hpp`): 256-byte consensus headers, Register login, session and request
///   numbering, the 57/58 replay, evictions mapped to classifiable errors, result-framed
///   bodies, and the client-side group assignment (`g2_groups.hpp`).
/// A new wire generation is one more implementation of this interface.
///
/// A transport object lives as long as its session (a reconnect reuses it, `login` starts it
/// over). The buffer a poll reply was read into goes with the batch (`poll_batch::owner`,
/// `poll_buffers` below), so the batch's bytes are never copied.

#include "common/buffer_pool.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "iggy/client.hpp"
#include "proto/commands.hpp"
#include "proto/g2_commands.hpp"
#include "proto/message.hpp"
#include "proto/negotiation.hpp"

#include <boost/asio/awaitable.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <variant>

namespace iss::iggy {

class connection;
class session;

/// SendMessages, in the terms both generations encode.
struct send_request {
    identifier stream;
    identifier topic;
    partitioning part;
    std::span<const proto::message_fields> messages;  ///< valid during the call
};

/// Every request the client sends after the login. SyncConsumerGroup exists in G2 only.
using request =
    std::variant<proto::ping_request, proto::get_me_request, proto::get_stream_request, proto::create_stream_request,
                 proto::delete_stream_request, proto::get_topic_request, proto::create_topic_request,
                 proto::delete_topic_request, proto::create_partitions_request, proto::get_consumer_group_request,
                 proto::create_consumer_group_request, proto::join_consumer_group_request,
                 proto::leave_consumer_group_request, proto::poll_messages_request, proto::get_consumer_offset_request,
                 proto::store_consumer_offset_request, proto::delete_consumer_offset_request, send_request,
                 proto::g2::sync_consumer_group_request>;

/// Which receive buffer a reply goes to: poll replies have their own, because the views of a
/// `poll_batch` point into it until the next poll.
enum class reply_slot { general, poll };

/// The receive buffers of poll replies. Once a reply is decoded, `hand_over` takes the buffer
/// it was read into out of the assembler (`exchange_storage`) for the batch to own, and the
/// assembler goes on in a kept one: when the last copy of the batch's owner goes, its buffer
/// comes back here (at most 8 of them, 16 MiB in all; common/buffer_pool.hpp). Kept buffers
/// keep their size, so reading the next reply into one writes no zeros and faults no pages.
class poll_buffers {
public:
    /// The owner of the frame `in` returned last (`bytes`: about its size, to pick a buffer).
    template <class Assembler>
    std::shared_ptr<const void> hand_over(Assembler& in, std::size_t bytes) {
        auto fresh = pool_->take(bytes);
        auto* held = new proto::byte_buffer{in.exchange_storage(fresh ? std::move(*fresh) : proto::byte_buffer{})};
        return std::shared_ptr<const void>{held, [pool = pool_](const void* p) {
                                               auto* b = static_cast<proto::byte_buffer*>(const_cast<void*>(p));
                                               pool->give(std::move(*b));
                                               delete b;
                                           }};
    }

private:
    std::shared_ptr<buffer_pool<proto::byte_buffer>> pool_ =
        std::make_shared<buffer_pool<proto::byte_buffer>>(8, std::size_t{16} << 20);
};

/// The arguments of PollMessages as the public client got them.
struct poll_args {
    consumer who;
    identifier stream;
    identifier topic;
    std::optional<std::uint32_t> partition;  ///< nullopt: a group poll lets the transport's rule pick
    polling_strategy strategy;
    std::uint32_t count = 0;
    bool auto_commit = false;
};

/// What a transport reports to its session.
struct transport_context {
    const client_options& opts;
    log::logger& log;
    client_stats& stats;
    /// The waits between retries (`client_options::sleeper`, else the session's own).
    iss::sleeper& sleep;
    /// The server ended the session (an eviction, 8, 30 or 100): the session says so at warn.
    std::function<void(const iss::error&)> session_lost;

    /// Counts one request of command `code` with its answer (a status, or "error").
    void count(std::uint32_t code, std::string answer) const {
        stats.requests[{std::string{proto::command_name(code)}, std::move(answer)}] += 1;
    }
};

/// The clock of the retry budgets: `opts.clock`, else the real clock.
[[nodiscard]] const iss::clock& retry_clock(const client_options& opts) noexcept;

/// The login of one new connection: its error (if any) and what it came to, for the
/// negotiation. `server` describes a G2 server that accepted the login (for the log).
struct login_outcome {
    result<void> status;
    proto::login_result event;
    std::string server;
};

class transport {
public:
    virtual ~transport() = default;

    /// The protocol of the last login (never `automatic`).
    [[nodiscard]] virtual proto::wire_protocol protocol() const noexcept = 0;

    /// Logs in on a connection `connection::open` just opened, per `plan`. Starts the
    /// transport over (numbering, buffers, assignments).
    virtual net::awaitable<login_outcome> login(connection& c, proto::login_plan plan) = 0;

    /// Encodes `r` into `out` (appended). Errors: what cannot be encoded, or a request this
    /// generation does not have (`errc::invalid_request`).
    virtual result<void> encode(proto::byte_buffer& out, const request& r) = 0;

    /// Sends the frame `encode` built and reads its reply into `slot`'s buffer. Returns the
    /// payload of a successful reply (valid until the slot is read again), or the server's
    /// status as an error in `proto::server_category()`, or a transport error.
    virtual net::awaitable<result<proto::bytes_view>> exchange(connection& c, proto::bytes_view frame,
                                                               reply_slot slot) = 0;

    // ---- replies whose bodies differ ----------------------------------------------------

    /// GetStream: nullopt = not found.
    virtual result<std::optional<proto::stream_details>> stream_reply(proto::bytes_view reply) = 0;
    virtual result<proto::stream_details> created_stream(proto::bytes_view reply) = 0;
    /// GetTopic: nullopt = not found.
    virtual result<std::optional<proto::topic_details>> topic_reply(proto::bytes_view reply) = 0;
    virtual result<proto::topic_details> created_topic(proto::bytes_view reply) = 0;
    /// CreateConsumerGroup: the group, or nullopt when this generation's reply does not hold it
    /// (the client reads it back by name).
    virtual result<std::optional<proto::consumer_group_info>> created_group(proto::bytes_view reply) = 0;
    /// SendMessages: checks the reply (G2: an empty body is a failure).
    virtual result<void> sent(proto::bytes_view reply) = 0;

    /// PollMessages with this generation's rule for group polls without a partition (G1: the
    /// server picks; G2: the client syncs its assignment and picks round robin). Sends
    /// through `s` (each request takes the session's lock).
    virtual net::awaitable<result<poll_batch>> poll(session& s, poll_args a) = 0;

    /// The groups this client joined changed (join, leave): forget derived state.
    virtual void groups_changed() noexcept {}
};

}  // namespace iss::iggy
