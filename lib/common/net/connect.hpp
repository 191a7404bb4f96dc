// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The one connection setup of every client (the HTTP client, the Iggy client): resolve,
/// TCP connect, TLS handshake, each step within its own timeout and never past the caller's
/// overall deadline (docs/architecture.md §8.3.3), with one TLS policy:
///
/// - trust: the CA file when given, else the system's default paths; `verify = false` turns
///   verification off (tests only); TLS 1.2 or newer;
/// - SNI: the name the certificate must match, sent only when it is a host name, never an IP
///   literal (RFC 6066 §3: "Literal IPv4 and IPv6 addresses are not permitted in HostName");
/// - the certificate must match that name (host-name verification) when verifying.
///
/// The steps report a `connect_failure` naming the step; each client maps it to its own error
/// codes. A caller's cancellation throws `operation_aborted` (§8.4.5). Runs on the
/// executor given; include only in the .cpp files that open connections (Beast and OpenSSL).

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/system/error_code.hpp>
#include <boost/system/result.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace iss {

using tls_stream = boost::beast::ssl_stream<boost::beast::tcp_stream>;

/// Per-step timeouts of one connection setup (milliseconds, each > 0).
struct connect_timeouts {
    std::chrono::milliseconds resolve{5000};    ///< DNS lookup (skipped for an IP literal)
    std::chrono::milliseconds connect{5000};    ///< TCP connect
    std::chrono::milliseconds handshake{5000};  ///< TLS handshake
};

/// Why a step failed.
struct connect_failure {
    enum class step { tls_setup, resolve, connect, handshake };
    step where = step::connect;
    bool timed_out = false;        ///< the step's timeout (or the overall deadline) passed
    bool certificate = false;      ///< handshake: the server's certificate did not verify
    boost::system::error_code ec;  ///< the underlying error (never operation_aborted: that throws)
    std::string reason;            ///< why, in words: the error's message, "timed out", or OpenSSL's verify reason
    std::string detail;            ///< what failed and why, for the log: "resolving host: <reason>"
};

template <class T>
using connect_result = boost::system::result<T, connect_failure>;

/// TLS trust settings (see the file comment).
struct tls_trust {
    std::string ca_file;  ///< PEM CA bundle; empty: the system's default paths
    bool verify = true;   ///< verify the chain and the host name
};

/// A client context for `trust`. Fails (step `tls_setup`) when the CA file or the system
/// store cannot be loaded; the detail names the file.
[[nodiscard]] connect_result<std::unique_ptr<boost::asio::ssl::context>> make_tls_context(const tls_trust& trust);

/// The expiry of one network step: its own timeout `step`, capped by the time left before
/// `deadline` (never negative).
[[nodiscard]] std::chrono::steady_clock::duration step_expiry(
    std::chrono::milliseconds step, const std::optional<std::chrono::steady_clock::time_point>& deadline);

/// Whether `host` is an IPv4 or IPv6 literal.
[[nodiscard]] bool is_ip_literal(const std::string& host);

/// Resolves `host` (an IP literal is used as is) and connects to `port` with TCP_NODELAY.
/// \param deadline when set, no step runs past it (caps each step's timeout)
boost::asio::awaitable<connect_result<std::unique_ptr<boost::beast::tcp_stream>>> open_tcp(
    boost::asio::any_io_executor ex, std::string host, std::uint16_t port, connect_timeouts t,
    std::optional<std::chrono::steady_clock::time_point> deadline = {});

/// Runs the TLS client handshake over `tcp` (moved in): SNI = `name` unless it is an IP
/// literal; with `verify`, the certificate must match `name` (and the context's trust).
boost::asio::awaitable<connect_result<std::unique_ptr<tls_stream>>> tls_handshake(
    std::unique_ptr<boost::beast::tcp_stream> tcp, boost::asio::ssl::context& ctx, std::string name, bool verify,
    std::chrono::milliseconds timeout, std::optional<std::chrono::steady_clock::time_point> deadline = {});

}  // namespace iss
