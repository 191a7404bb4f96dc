// SPDX-License-Identifier: Apache-2.0
#include "admin/server.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include "catch2_compat.hpp"

#include <exception>

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

namespace {

struct answer {
    unsigned status = 0;
    std::string content_type;
    std::string body;
    std::string content_length;
};

/// Sends the requests over ONE connection (keep-alive) and reads every answer.
net::awaitable<std::vector<answer>> ask(tcp::endpoint at, std::vector<std::pair<http::verb, std::string>> reqs) {
    beast::tcp_stream s{co_await net::this_coro::executor};
    s.expires_after(std::chrono::seconds{10});
    co_await s.async_connect(at, net::use_awaitable);
    std::vector<answer> out;
    beast::flat_buffer buf;
    for (const auto& [verb, target] : reqs) {
        http::request<http::empty_body> req{verb, target, 11};
        req.set(http::field::host, "localhost");
        req.keep_alive(true);
        co_await http::async_write(s, req, net::use_awaitable);
        http::response_parser<http::string_body> p;
        if (verb == http::verb::head) p.skip(true);
        co_await http::async_read(s, buf, p, net::use_awaitable);
        const auto& res = p.get();
        out.push_back({res.result_int(), std::string{res[http::field::content_type]}, res.body(),
                       std::string{res[http::field::content_length]}});
    }
    co_return out;
}

std::vector<answer> run_ask(net::io_context& io, tcp::endpoint at,
                            std::vector<std::pair<http::verb, std::string>> reqs) {
    std::vector<answer> got;
    std::exception_ptr err;
    net::co_spawn(io, ask(at, std::move(reqs)), [&](std::exception_ptr e, std::vector<answer> a) {
        err = e;
        got = std::move(a);
    });
    io.restart();
    while (!err && got.empty() && io.run_one()) {}
    if (err) std::rethrow_exception(err);
    return got;
}

}  // namespace

TEST_CASE("admin.listen parsing: IPv4, [IPv6], port 0; bad shapes are named", "[admin][server]") {
    using iss::admin::parse_listen;
    auto a = parse_listen("127.0.0.1:9464");
    REQUIRE(a.has_value());
    CHECK(a->port() == 9464);
    CHECK(a->address().to_string() == "127.0.0.1");
    auto b = parse_listen("[::1]:0");
    REQUIRE(b.has_value());
    CHECK(b->address().is_v6());
    CHECK(parse_listen("0.0.0.0:9464").has_value());
    CHECK_FALSE(parse_listen("localhost:9464").has_value());
    CHECK_FALSE(parse_listen("127.0.0.1").has_value());
    CHECK_FALSE(parse_listen("127.0.0.1:70000").has_value());
    CHECK_FALSE(parse_listen("::1:9464").has_value());
    auto e = parse_listen("example:x");
    REQUIRE_FALSE(e.has_value());
    CHECK_THAT(e.error().message(), Catch::Matchers::ContainsSubstring("IP:PORT"));
}

TEST_CASE("admin server: /metrics, /healthz, /readyz (200 and 503 with the unmet lines), 404, 405, HEAD, keep-alive",
          "[admin][server]") {
    net::io_context io{1};
    std::vector<std::string> unmet{"store: not probed usable yet", "iggy: not connected and logged in"};
    int scrapes = 0;
    iss::admin::handlers h;
    h.metrics = [&] {
        ++scrapes;
        return std::string{"# TYPE x counter\nx 1\n"};
    };
    h.unmet = [&] { return unmet; };
    iss::admin::server srv{io.get_executor(), *iss::admin::parse_listen("127.0.0.1:0"), h};
    REQUIRE(srv.listen().has_value());
    const auto at = srv.local_endpoint();
    REQUIRE(at.port() != 0);
    srv.start();

    auto a = run_ask(io, at,
                     {{http::verb::get, "/metrics"},
                      {http::verb::get, "/healthz"},
                      {http::verb::get, "/readyz"},
                      {http::verb::get, "/nope"},
                      {http::verb::post, "/metrics"},
                      {http::verb::head, "/metrics"}});
    REQUIRE(a.size() == 6);
    CHECK(a[0].status == 200);
    CHECK(a[0].content_type == "text/plain; version=0.0.4; charset=utf-8");
    CHECK(a[0].body == "# TYPE x counter\nx 1\n");
    CHECK(a[1].status == 200);
    CHECK(a[1].body == "ok\n");
    CHECK(a[2].status == 503);
    CHECK(a[2].body == "store: not probed usable yet\niggy: not connected and logged in\n");
    CHECK(a[3].status == 404);
    CHECK(a[4].status == 405);
    CHECK(a[5].status == 200);
    CHECK(a[5].body.empty());
    CHECK(a[5].content_length == std::to_string(a[0].body.size()));
    CHECK(scrapes == 2);  // GET and HEAD

    unmet.clear();
    auto b = run_ask(io, at, {{http::verb::get, "/readyz?verbose"}});
    CHECK(b.at(0).status == 200);
    CHECK(b.at(0).body == "ready\n");
    CHECK(srv.requests_served() == 7);
    srv.stop();
}

TEST_CASE("admin server: /readyz while ready adds the notes below `ready` (a reload's drain)", "[admin][server]") {
    net::io_context io{1};
    std::vector<std::string> unmet;
    iss::admin::handlers h;
    h.unmet = [&] { return unmet; };
    h.notes = [] { return std::vector<std::string>{"reloading: draining"}; };
    iss::admin::server srv{io.get_executor(), *iss::admin::parse_listen("127.0.0.1:0"), h};
    REQUIRE(srv.listen().has_value());
    const auto at = srv.local_endpoint();
    srv.start();
    auto a = run_ask(io, at, {{http::verb::get, "/readyz"}});
    CHECK(a.at(0).status == 200);
    CHECK(a.at(0).body == "ready\nreloading: draining\n");
    unmet.push_back("iggy: not connected and logged in");
    auto b = run_ask(io, at, {{http::verb::get, "/readyz"}});
    CHECK(b.at(0).status == 503);
    CHECK(b.at(0).body == "iggy: not connected and logged in\n");
    srv.stop();
}

TEST_CASE("admin server: a port in use is a clear error", "[admin][server]") {
    net::io_context io{1};
    iss::admin::server first{io.get_executor(), *iss::admin::parse_listen("127.0.0.1:0"), {}};
    REQUIRE(first.listen().has_value());
    const auto port = first.local_endpoint().port();
    iss::admin::server second{io.get_executor(), tcp::endpoint{net::ip::make_address("127.0.0.1"), port}, {}};
    auto r = second.listen();
    REQUIRE_FALSE(r.has_value());
    CHECK_THAT(r.error().message(),
               Catch::Matchers::ContainsSubstring("admin.listen 127.0.0.1:" + std::to_string(port)));
    CHECK_THAT(r.error().message(), Catch::Matchers::ContainsSubstring("bind"));
}
