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
/// All on the one event-loop thread; not thread-safe.
///
/// Hostile clients (docs/operations.md, "The admin port under hostile clients"): every read and
/// write has a deadline (`server_options`): a connection waits `idle_timeout` for the first
/// byte of a request, then `header_timeout` for the whole header (slow headers, slowloris),
/// and is closed past either. Requests are headers only, at most `max_request_bytes` (a larger
/// header is answered 431, bytes that are not a request 400, both closed: request.hpp). At
/// most `max_connections` are open: a new one beyond it closes one that is not serving
/// anyone: first a connection lingering after a 400/431, then the one idle longest with no
/// byte in its socket, then the one whose header began longest ago (at least 1 s: slow
/// headers). So a scrape gets through while idle or slow connections pile up. When none
/// qualifies (all busy answering, or requests arriving), the new one is closed at once.
/// `server_stats` counts all of it (`iggy_s3_sink_admin_*` metrics).

#include "common/clock.hpp"
#include "common/error.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
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
    std::chrono::milliseconds idle_timeout{60'000};    ///< for the first byte of a request (new or keep-alive)
    std::chrono::milliseconds header_timeout{10'000};  ///< from the first byte to the end of the header
    std::chrono::milliseconds write_timeout{10'000};   ///< per response
    /// After a 400 or 431: time to read and drop what the client still sends before closing
    /// (so the answer is not lost to a reset).
    std::chrono::milliseconds linger{1'000};
    std::size_t max_connections = 64;  ///< `admin.max_connections`
    std::size_t max_request_bytes = 16 * 1024;
    /// The steady clock of the slow-header rule (which header to close first at the limit);
    /// null: the real clock. Outlives the server.
    const iss::clock* clock = nullptr;
};

/// What the server did with its connections since the start (`iggy_s3_sink_admin_*`).
struct server_stats {
    std::uint64_t open = 0;              ///< connections open now (not counting those closed to make room)
    std::uint64_t accepted = 0;          ///< connections accepted
    std::uint64_t requests = 0;          ///< requests answered (400 and 431 included)
    std::uint64_t closed_limit = 0;      ///< closed to stay within max_connections
    std::uint64_t closed_idle = 0;       ///< no request began within idle_timeout
    std::uint64_t closed_header = 0;     ///< the header did not arrive within header_timeout
    std::uint64_t closed_bad = 0;        ///< answered 400 (not an HTTP request header) and closed
    std::uint64_t closed_too_large = 0;  ///< answered 431 (header above max_request_bytes) and closed
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
    /// Connection counts (the metrics read them at each scrape).
    [[nodiscard]] const server_stats& stats() const noexcept;

    struct impl;

private:
    std::shared_ptr<impl> impl_;
};

}  // namespace iss::admin
