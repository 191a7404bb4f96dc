// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The byte stream under one Iggy client: TCP or TLS (docs/protocol.md §9: TLS wraps the same
/// bytes), opened with a deadline per step, written and read in exact sizes. It knows nothing
/// of frames; the transports (`g1_transport.hpp`, `g2_transport.hpp`) do.
///
/// Every failed step closes the socket (the byte stream is out of step) and maps its error:
/// after `shutdown()` -> `errc::closed`; a passed deadline -> `errc::timeout`; a caller's
/// cancellation -> rethrown as `operation_aborted` (never retried); anything else ->
/// `errc::connection_lost`. Opening fails with `errc::connection_failed`.
///
/// Runs on one executor; Beast and OpenSSL stay inside connection.cpp.

#include "common/error.hpp"
#include "iggy/client.hpp"
#include "proto/wire.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <memory>
#include <span>
#include <string_view>

namespace iss::iggy {

class connection {
public:
    /// `opts` (host, port, tls, connect_timeout) must outlive the connection. A CA file that
    /// cannot be loaded is reported by every `open`.
    connection(net::any_io_executor ex, const client_options& opts);
    ~connection();
    connection(const connection&) = delete;
    connection& operator=(const connection&) = delete;

    [[nodiscard]] const net::any_io_executor& executor() const noexcept { return ex_; }

    /// Resolves, connects (TCP_NODELAY) and, with TLS, handshakes, each step within
    /// `connect_timeout`: the shared connect step (`common/net/connect.hpp`) with its TLS
    /// policy; the name is `tls.server_name` or the host (SNI unless an IP literal; verified
    /// when `tls.verify`). A previous socket is dropped first.
    net::awaitable<result<void>> open();
    /// Closes the socket; `open` may follow.
    void close() noexcept;
    /// True from a successful `open` until the socket is closed (by `close`, `shutdown` or a
    /// failed step).
    [[nodiscard]] bool is_open() const noexcept { return open_; }
    /// Closes for good: I/O from now on fails with `errc::closed`.
    void shutdown() noexcept;
    [[nodiscard]] bool is_shut() const noexcept { return shut_; }

    /// Starts the deadline that the next writes and reads share (one exchange).
    void arm(std::chrono::milliseconds d) noexcept;
    /// Ends it (an idle connection has no deadline).
    void disarm() noexcept;
    /// Writes all of `bytes`.
    net::awaitable<result<void>> write(proto::bytes_view bytes, std::string_view step);
    /// Reads exactly `into.size()` bytes.
    net::awaitable<result<void>> read(std::span<std::byte> into, std::string_view step);

private:
    /// Runs `op(stream)` on the TLS or TCP stream; maps its error.
    template <class Op>
    net::awaitable<result<void>> transfer(Op op, std::string_view step);
    iss::error failure(const boost::system::error_code& ec, std::string_view step);

    struct streams;
    net::any_io_executor ex_;
    const client_options& opts_;
    std::unique_ptr<streams> s_;
    bool open_ = false;
    bool shut_ = false;
    bool answered_ = false;  ///< a read completed since the last open()
};

}  // namespace iss::iggy
