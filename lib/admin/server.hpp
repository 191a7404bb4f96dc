// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The admin HTTP server: `GET /metrics`, `GET /healthz`, `GET /readyz` on the daemon's own
/// event loop (Beast, HTTP/1.1, keep-alive; no thread of its own).
///
/// - `/metrics`: the handler's text, `text/plain; version=0.0.4`.
/// - `/healthz`: 200 `ok` whenever the loop gets to answer (a hung loop answers nothing, which
///   is what a liveness probe must see).
/// - `/readyz`: 200 `ready` when the readiness handler names no unmet condition (followed by
///   the notes handler's lines, e.g. `reloading: ...`), else 503 with one line per unmet
///   condition (readiness.hpp).
/// - anything else: 404; a method other than GET or HEAD: 405.
///
/// Lifecycle: construct on the daemon's executor, `listen()` (binds; port 0 picks one), then
/// `start()` spawns the accept loop; `stop()` closes the acceptor and every open connection.
/// All on the one event-loop thread; not thread-safe. Every read and write has a deadline
/// (`server_options`), at most `max_connections` are served at once (more wait in the
/// backlog), and requests are small (headers only, `max_request_bytes`).

#include "common/error.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace iss::admin {

/// `admin.listen`: "IP:PORT" ("127.0.0.1:9464", "0.0.0.0:9464", "[::1]:9464"); port 0 lets the
/// OS pick. Errors name the value and the expected shape. (The empty string, "off", is the
/// caller's business.)
[[nodiscard]] result<boost::asio::ip::tcp::endpoint> parse_listen(std::string_view s);

struct server_options {
    std::chrono::milliseconds read_timeout{10'000};   ///< per request (an idle keep-alive connection closes after it)
    std::chrono::milliseconds write_timeout{10'000};  ///< per response
    std::size_t max_connections = 16;
    std::size_t max_request_bytes = 16 * 1024;
};

/// What the server answers with; called on the event-loop thread at each request.
struct handlers {
    std::function<std::string()> metrics;             ///< the /metrics body
    std::function<std::vector<std::string>()> unmet;  ///< /readyz: unmet conditions (empty = ready)
    std::function<std::vector<std::string>()> notes;  ///< /readyz: lines below `ready` while ready (reloading)
};

class server {
public:
    server(boost::asio::any_io_executor ex, boost::asio::ip::tcp::endpoint at, handlers h, server_options o = {});
    ~server();
    server(const server&) = delete;
    server& operator=(const server&) = delete;

    /// Opens and binds the listening socket. Errors say which address could not be bound and why.
    [[nodiscard]] result<void> listen();
    /// The bound address (after listen()).
    [[nodiscard]] boost::asio::ip::tcp::endpoint local_endpoint() const;
    /// Starts accepting (after a successful listen()).
    void start();
    /// Closes the acceptor and the open connections; pending handlers finish with an error.
    void stop();
    /// Requests answered so far (tests, the scrape benchmark).
    [[nodiscard]] std::uint64_t requests_served() const noexcept;

    struct impl;

private:
    std::shared_ptr<impl> impl_;
};

}  // namespace iss::admin
