// SPDX-License-Identifier: Apache-2.0
// The admin port under hostile clients (docs/operations.md, "The admin port under hostile
// clients"): garbage answered 400 and closed, oversized headers 431 and closed, slow headers
// and idle connections closed at their deadlines, and admin.max_connections kept by closing
// the connection that waited longest, so a scrape still gets through. Plus the request path
// without a socket (admin/request.hpp), which the fuzz target drives.
#include "admin/request.hpp"
#include "admin/server.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include "catch2_compat.hpp"

#include <exception>
#include <optional>

namespace net = boost::asio;
namespace beast = boost::beast;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;

namespace {

iss::admin::handlers fixed_handlers() {
    iss::admin::handlers h;
    h.metrics = [] { return std::string{"# TYPE x counter\nx 1\n"}; };
    h.unmet = [] { return std::vector<std::string>{}; };
    return h;
}

/// Runs `task` on `io` to its end (the server's coroutines run beside it).
template <class T>
T run(net::io_context& io, net::awaitable<T> task) {
    std::optional<T> got;
    std::exception_ptr err;
    net::co_spawn(io, std::move(task), [&](std::exception_ptr e, T v) {
        err = e;
        if (!e) got = std::move(v);
    });
    io.restart();
    while (!err && !got && io.run_one()) {}
    if (err) std::rethrow_exception(err);
    REQUIRE(got.has_value());
    return std::move(*got);
}

/// What a client got: the bytes until the server closed, and whether it did close (rather
/// than the client's own 10 s deadline ending the read).
struct reply {
    std::string bytes;
    bool closed_by_server = false;
};

/// Connects, sends `out`, reads until the server closes (or 10 s pass).
net::awaitable<reply> send_and_read(tcp::endpoint at, std::string out) {
    beast::tcp_stream s{co_await net::this_coro::executor};
    s.expires_after(10s);
    co_await s.async_connect(at, net::use_awaitable);
    co_await net::async_write(s, net::buffer(out), net::use_awaitable);
    reply r;
    std::array<char, 4096> chunk{};
    for (;;) {
        auto [ec, n] = co_await s.async_read_some(net::buffer(chunk), net::as_tuple(net::use_awaitable));
        r.bytes.append(chunk.data(), n);
        if (ec) {
            r.closed_by_server = ec != beast::error::timeout;
            break;
        }
    }
    co_return r;
}

/// Sends a request line, then one header line every 50 ms, never the end of the header:
/// true when the server closed the connection within 10 s.
net::awaitable<bool> slow_headers(tcp::endpoint at) {
    beast::tcp_stream s{co_await net::this_coro::executor};
    s.expires_after(10s);
    co_await s.async_connect(at, net::use_awaitable);
    std::string line = "GET /metrics HTTP/1.1\r\n";
    net::steady_timer t{co_await net::this_coro::executor};
    for (int i = 0; i < 200; ++i) {
        auto [ec, n] = co_await net::async_write(s, net::buffer(line), net::as_tuple(net::use_awaitable));
        if (ec) co_return ec != beast::error::timeout;
        line = "X-Slow: " + std::to_string(i) + "\r\n";
        t.expires_after(50ms);
        co_await t.async_wait(net::use_awaitable);
    }
    co_return false;
}

bool starts_with(const std::string& s, std::string_view p) { return s.rfind(p, 0) == 0; }

}  // namespace

TEST_CASE("admin request path: answers, 400 for garbage, 431 for a large header, nothing for a cut request",
          "[admin][hostile]") {
    const auto h = fixed_handlers();
    const auto two = iss::admin::respond(
        "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        "GET /metrics HTTP/1.1\r\n\r\n",
        h, 16 * 1024);
    CHECK(starts_with(two, "HTTP/1.1 200 OK"));
    CHECK(two.find("ok\n") != std::string::npos);
    CHECK(two.find("ready\n") != std::string::npos);
    CHECK(two.find("x 1") == std::string::npos);  // after Connection: close nothing is answered

    const auto garbage = iss::admin::respond("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 not http\r\n\r\n", h, 16384);
    CHECK(starts_with(garbage, "HTTP/1.1 400 Bad Request"));
    CHECK(garbage.find("Connection: close") != std::string::npos);

    const auto body = iss::admin::respond("POST /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc", h, 16384);
    CHECK(starts_with(body, "HTTP/1.1 400 Bad Request"));

    std::string big = "GET /metrics HTTP/1.1\r\nX-Big: " + std::string(1 << 20, 'a') + "\r\n\r\n";
    const auto large = iss::admin::respond(big, h, 16 * 1024);
    CHECK(starts_with(large, "HTTP/1.1 431 Request Header Fields Too Large"));
    CHECK(large.find("Connection: close") != std::string::npos);
    // Still incomplete and past the limit: refused without waiting for the end.
    CHECK(starts_with(iss::admin::respond(big.substr(0, 20'000), h, 16 * 1024), "HTTP/1.1 431"));

    CHECK(iss::admin::respond("GET /metrics HTTP/1.1\r\nHost:", h, 16384).empty());
    CHECK(iss::admin::respond("", h, 16384).empty());
}

TEST_CASE("admin server: garbage is answered 400, a 1 MiB header 431, both closed", "[admin][hostile]") {
    net::io_context io{1};
    iss::admin::server srv{io.get_executor(), *iss::admin::parse_listen("127.0.0.1:0"), fixed_handlers()};
    REQUIRE(srv.listen().has_value());
    srv.start();
    const auto at = srv.local_endpoint();

    auto g = run(io, send_and_read(at, std::string{"\x01\x02garbage\xff\r\n\r\n", 14}));
    CHECK(starts_with(g.bytes, "HTTP/1.1 400 Bad Request"));
    CHECK(g.closed_by_server);

    auto big = run(io, send_and_read(at, "GET /metrics HTTP/1.1\r\nX-Big: " + std::string(1 << 20, 'a') + "\r\n\r\n"));
    CHECK(starts_with(big.bytes, "HTTP/1.1 431 Request Header Fields Too Large"));
    CHECK(big.closed_by_server);

    auto ok = run(io, send_and_read(at, "GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n"));
    CHECK(starts_with(ok.bytes, "HTTP/1.1 200 OK"));
    CHECK(srv.stats().closed_bad == 1);
    CHECK(srv.stats().closed_too_large == 1);
    CHECK(srv.stats().requests == 3);
    srv.stop();
}

TEST_CASE("admin server: slow headers are closed at header_timeout, idle connections at idle_timeout",
          "[admin][hostile]") {
    net::io_context io{1};
    iss::admin::server_options o;
    o.header_timeout = 300ms;  // the client sends a header line every 50 ms: never idle, never done
    o.idle_timeout = 60s;
    iss::admin::server srv{io.get_executor(), *iss::admin::parse_listen("127.0.0.1:0"), fixed_handlers(), o};
    REQUIRE(srv.listen().has_value());
    srv.start();
    CHECK(run(io, slow_headers(srv.local_endpoint())));
    CHECK(srv.stats().closed_header == 1);
    srv.stop();

    net::io_context io2{1};
    iss::admin::server_options o2;
    o2.idle_timeout = 300ms;
    iss::admin::server idle{io2.get_executor(), *iss::admin::parse_listen("127.0.0.1:0"), fixed_handlers(), o2};
    REQUIRE(idle.listen().has_value());
    idle.start();
    auto r = run(io2, send_and_read(idle.local_endpoint(), ""));
    CHECK(r.closed_by_server);
    CHECK(r.bytes.empty());
    CHECK(idle.stats().closed_idle == 1);
    idle.stop();
}

TEST_CASE("admin server: at max_connections the connection waiting longest is closed and a scrape is answered",
          "[admin][hostile]") {
    net::io_context io{1};
    iss::admin::server_options o;
    o.max_connections = 3;
    iss::admin::server srv{io.get_executor(), *iss::admin::parse_listen("127.0.0.1:0"), fixed_handlers(), o};
    REQUIRE(srv.listen().has_value());
    srv.start();
    const auto at = srv.local_endpoint();

    // Ten idle connections (no request): the server keeps at most 3 open.
    std::vector<std::unique_ptr<tcp::socket>> idle;
    for (int i = 0; i < 10; ++i) {
        idle.push_back(std::make_unique<tcp::socket>(io));
        idle.back()->connect(at);
        io.restart();
        io.poll();  // let the server accept it
    }
    for (int i = 0; i < 50 && srv.stats().accepted < 10; ++i) {
        io.restart();
        io.run_for(20ms);
    }
    CHECK(srv.stats().accepted == 10);
    CHECK(srv.stats().open <= 3);
    CHECK(srv.stats().closed_limit >= 7);

    auto m = run(io, send_and_read(at, "GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n"));
    CHECK(starts_with(m.bytes, "HTTP/1.1 200 OK"));
    CHECK(m.bytes.find("x 1") != std::string::npos);
    // The first idle connection was closed by the server: reading it ends at once.
    boost::system::error_code ec;
    std::array<char, 16> b{};
    idle.front()->read_some(net::buffer(b), ec);
    CHECK(ec == net::error::eof);
    srv.stop();
}
