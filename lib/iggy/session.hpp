// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The session under `iggy::client`: one connection at a time, one request in flight, and the
/// state that outlives a connection. See the essay in `client.hpp` for the rules; in short:
///
/// - `call` takes the lock (`iss::async_mutex`), connects if needed, has the connection's transport
///   encode the request and exchange it, and releases the lock;
/// - `reconnect` retries refusable failures with full-jitter backoff
///   (`client_options::reconnect_backoff`, `reconnect_attempts`), returns refusals (auth) at
///   once, and on success re-joins the remembered groups and restarts the pings;
/// - each connect runs the login negotiation (`proto::negotiation`), which picks the
///   transport (`g1_transport`, `g2_transport`) and may ask for a new connection;
/// - `generation()` counts successful connects: group membership belongs to a connection.
///
/// Lifecycle: owned through a shared_ptr (the ping task holds one); `shutdown` stops it.

#include "common/log.hpp"
#include "common/net/async_mutex.hpp"
#include "common/net/sleeper.hpp"
#include "iggy/client.hpp"
#include "iggy/connection.hpp"
#include "iggy/g1_transport.hpp"
#include "iggy/g2_transport.hpp"
#include "iggy/transport.hpp"
#include "proto/negotiation.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <memory>
#include <random>
#include <vector>

namespace iss::iggy {

class session : public std::enable_shared_from_this<session> {
public:
    session(net::any_io_executor ex, client_options opts);
    session(const session&) = delete;
    session& operator=(const session&) = delete;

    /// Takes the lock, connects if needed, sends `req` and reads its reply into `slot`.
    net::awaitable<result<proto::bytes_view>> call(const request& req, reply_slot slot = reply_slot::general);
    /// Takes the lock and connects if needed (so that `wire()` is the connection's transport).
    net::awaitable<result<void>> ensure_connected();
    /// Stops pings, wakes waiters and closes the connection for good.
    void shutdown() noexcept;

    /// The transport of the current (or last) connection.
    [[nodiscard]] transport& wire() noexcept { return *wire_; }

    /// Remembers a joined group (re-joined after every reconnect) / forgets it.
    void remember_group(identifier stream, identifier topic, identifier group);
    void forget_group(const identifier& stream, const identifier& topic, const identifier& group);
    [[nodiscard]] bool has_joined(const identifier& stream, const identifier& topic,
                                  const identifier& group) const noexcept;

    [[nodiscard]] const client_stats& stats() const noexcept { return stats_; }
    [[nodiscard]] std::uint64_t generation() const noexcept { return generation_; }
    [[nodiscard]] bool connected() const noexcept { return logged_in_ && conn_.is_open(); }
    [[nodiscard]] bool closed() const noexcept { return conn_.is_shut(); }
    [[nodiscard]] const client_options& options() const noexcept { return opts_; }
    [[nodiscard]] proto::wire_protocol protocol_in_use() const noexcept { return wire_->protocol(); }

private:
    struct group_ref {
        identifier stream, topic, group;
    };

    transport_context context();
    /// The waits between retries: `opts.sleeper`, else the session's own.
    iss::sleeper& retry_sleeper() noexcept { return opts_.sleeper ? *opts_.sleeper : own_sleeper_; }
    void disconnect() noexcept;
    void session_lost(const iss::error& why);
    /// Encodes and exchanges `req` on the connection (the lock is held).
    net::awaitable<result<proto::bytes_view>> exchange(const request& req, reply_slot slot);
    net::awaitable<result<void>> reconnect();
    net::awaitable<result<void>> connect_once();
    net::awaitable<result<void>> rejoin();
    void start_pings();
    static net::awaitable<void> ping_loop(std::shared_ptr<session> self, std::uint64_t gen,
                                          std::shared_ptr<iss::sleeper> pings);

    net::any_io_executor ex_;
    client_options opts_;
    log::logger log_;
    client_stats stats_;
    iss::asio_sleeper own_sleeper_;  ///< the retry waits when `opts.sleeper` is null
    connection conn_;
    iss::async_mutex lock_;
    proto::negotiation negotiation_;
    g1_transport g1_;
    g2_transport g2_;
    transport* wire_ = &g1_;
    proto::byte_buffer out_;  // the request being sent
    bool logged_in_ = false;  // the open socket has logged in (and re-joined)
    std::uint64_t generation_ = 0;
    unsigned failures_ = 0;
    std::mt19937_64 rng_{std::random_device{}()};
    std::vector<group_ref> groups_;
    std::shared_ptr<iss::asio_sleeper> pings_;  ///< the current generation's ping waits
};

}  // namespace iss::iggy
