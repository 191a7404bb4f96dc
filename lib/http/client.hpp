// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The HTTP/1.1 client (Beast, Asio, OpenSSL): a keep-alive connection pool per endpoint,
/// TLS with chain and host-name verification on by default, a connect address apart from the
/// Host header, a deadline on every network step, request bodies written straight from the
/// caller's buffers. It knows nothing of S3 and never retries a request that reached the
/// server, except once when a pooled keep-alive connection turns out to be dead before any
/// response byte (the server closed it while idle; standard HTTP client behaviour).
///
/// Lifecycle and threading: create on an executor (one `io_context`, one thread, docs/architecture.md §8
/// §3.1) and keep it alive while requests are in flight. The pool is guarded by a mutex, so
/// calls from several threads are safe, but connections are not shared between requests.

#include "http/types.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <memory>

namespace iss::http {

/// An HTTP(S) client with a connection pool.
class client {
public:
    /// \param ex the executor every connection runs on
    /// \param opts timeouts, TLS and pool settings
    /// Throws `iss::error_exception` (`errc::tls_setup_failed`) when the CA file cannot be
    /// loaded: a startup failure (docs/architecture.md §8.4.8).
    client(boost::asio::any_io_executor ex, client_options opts = {});
    ~client();
    client(const client&) = delete;
    client& operator=(const client&) = delete;

    /// Sends `req` to `ep` and reads the whole response.
    /// \param time_left when set, no step runs past now + `time_left` (on top of the per-step
    ///        timeouts): the caller's overall budget left for this request, as the caller
    ///        measured it on its injected clock (`common/backoff.hpp` `retry_budget::left`).
    ///        Network steps run on the event loop's steady clock (Beast's `expires_after`).
    /// \return the response (any status), or an `http::errc` error naming the failed step.
    /// \throws boost::system::system_error (`asio::error::operation_aborted`) when the caller is
    ///         cancelled (docs/architecture.md §8.4.5).
    /// The body views in `req` must stay valid until this completes.
    boost::asio::awaitable<result<response>> send(endpoint ep, request req,
                                                  std::optional<std::chrono::milliseconds> time_left = {});

    /// Closes every idle connection.
    void close_idle();
    [[nodiscard]] client_stats stats() const;
    [[nodiscard]] const client_options& options() const noexcept;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace iss::http
