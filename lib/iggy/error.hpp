// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Errors of the Iggy client (docs/architecture.md §8.4) and the one classification every caller uses.
///
/// Two kinds of error reach a caller of `iss::iggy::client`:
/// - client-side failures, `iss::iggy::errc` (category "iggy-client"): the connection could not
///   be made, broke, timed out, or the server sent bytes we cannot read;
/// - server replies with a non-zero status: `proto::server_error(status)` (category "iggy"),
///   whose value is Iggy's own error code (42, 3022, 5006...) and whose message names it
///   (`proto::server_error_name`). Use `server_code(e)` to read the code.
///
/// `classify(e)` maps both onto `outcome::{retry, fail, not_found}` (docs/architecture.md §8.4.4).

#include "common/error.hpp"
#include "proto/error.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace iss::iggy {

/// Client-side failures.
enum class errc {
    connection_failed = 1,  ///< TCP connect, name resolution or TLS handshake failed
    connection_lost,        ///< the connection broke during a request (its outcome is unknown)
    timeout,                ///< a deadline (connect or request) passed; the connection was closed
    protocol_error,         ///< the server sent a frame we cannot read; the connection was closed
    closed,                 ///< the client was closed by its owner
    invalid_request,        ///< the request could not be encoded (the detail names the field)
    /// The TLS handshake failed on the server's certificate (an unknown CA, a name it does not
    /// carry, expired; the detail gives OpenSSL's verify reason). Classified `retry`: a
    /// certificate renewed on the server fixes it; `client_options::retry_rejected_certificate`
    /// false returns it at once.
    certificate_rejected,
};

const boost::system::error_category& client_category() noexcept;
inline error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), client_category()}; }

/// What a caller should do about an error.
enum class outcome {
    retry,      ///< transient: transport failures, 8 Disconnected, 30 StaleClient (reconnect, re-join)
    fail,       ///< permanent: authentication (40-47, 53, 54, 20 on a token login), bad requests, ...
    not_found,  ///< the entity does not exist: 1009, 2010, 3007, 5000, 20 (ResourceNotFound)
};

/// The Iggy error code of a server error, or nullopt for a client-side error.
[[nodiscard]] std::optional<std::uint32_t> server_code(const iss::error& e) noexcept;
/// True when `e` is the server's status `c`.
[[nodiscard]] bool is_server_error(const iss::error& e, proto::server_errc c) noexcept;
/// True for the codes that mean the credentials or the session are refused (never retried).
[[nodiscard]] bool is_auth_code(std::uint32_t code) noexcept;
/// True for the statuses after which the server ends the session (8 Disconnected, 30
/// StaleClient, 100 ClientNotFound): it closes the socket, so the client closes its side.
[[nodiscard]] bool ends_session(std::uint32_t status) noexcept;
/// Classifies an error (see `outcome`).
[[nodiscard]] outcome classify(const iss::error& e) noexcept;
/// "InvalidCredentials (42)" for a server error, the message otherwise. For log lines.
[[nodiscard]] std::string describe(const iss::error& e);

}  // namespace iss::iggy

namespace boost::system {
template <>
struct is_error_code_enum<iss::iggy::errc> : std::true_type {};
}  // namespace boost::system
