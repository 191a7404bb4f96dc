// SPDX-License-Identifier: Apache-2.0
#include "http/client.hpp"

#include "s3/fault_front.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>

#include "catch2_compat.hpp"

#include <exception>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

using namespace iss;
namespace net = boost::asio;
using namespace std::chrono_literals;

namespace {

/// Runs `task` on `ioc` until it completes (the front's accept loop keeps the context busy,
/// so the completion handler stops it).
template <class T>
T run(net::io_context& ioc, std::function<net::awaitable<T>()> task) {
    std::optional<T> out;
    std::exception_ptr err;
    net::co_spawn(ioc, task(), [&](std::exception_ptr e, T v) {
        err = e;
        if (!e) out = std::move(v);
        ioc.stop();
    });
    ioc.restart();
    ioc.run();
    if (err) std::rethrow_exception(err);
    return std::move(*out);
}

http::endpoint front_endpoint(const test::fault_front& f) { return http::endpoint{false, "127.0.0.1", f.port(), ""}; }

}  // namespace

TEST_CASE("requests on one endpoint reuse one keep-alive connection", "[http]") {
    net::io_context ioc{1};
    test::fault_front front{ioc.get_executor(), std::nullopt};
    front.set_fixed_response(200, {{"ETag", "\"e1\""}}, "hello");
    http::client c{ioc.get_executor()};
    auto ep = front_endpoint(front);
    for (int i = 0; i < 5; ++i) {
        auto r = run<result<http::response>>(ioc, [&]() { return c.send(ep, http::request{"GET", "/x", {}, {}}); });
        REQUIRE(r.has_value());
        CHECK(r->status == 200);
        CHECK(r->body == "hello");
        CHECK(r->headers.get("etag") == "\"e1\"");
    }
    CHECK(c.stats().connections_opened == 1);
    CHECK(c.stats().connections_reused == 4);
    CHECK(front.requests().size() == 5);
}

TEST_CASE("a body given as several views arrives whole, with its length", "[http]") {
    net::io_context ioc{1};
    test::fault_front front{ioc.get_executor(), std::nullopt};
    http::client c{ioc.get_executor()};
    std::string big(3 * 1024 * 1024 + 7, 'x');
    for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + i % 23);
    std::string small = "tail";
    http::request req{"PUT", "/k", {}, {big, small}};
    // body_sent: told every stretch once written, in order, as views of the body itself.
    std::vector<std::string_view> sent;
    req.body_sent = [&](std::string_view s) { sent.push_back(s); };
    auto r = run<result<http::response>>(ioc, [&]() { return c.send(front_endpoint(front), req); });
    REQUIRE(r.has_value());
    CHECK(r->headers.get("X-Echo-Body-Size") == std::to_string(big.size() + small.size()));
    REQUIRE(front.requests().size() == 1);
    CHECK(front.requests()[0].headers.get("content-length") == std::to_string(big.size() + small.size()));
    std::string joined;
    for (const auto s : sent) {
        const bool in_big = s.data() >= big.data() && s.data() + s.size() <= big.data() + big.size();
        const bool in_small = s.data() >= small.data() && s.data() + s.size() <= small.data() + small.size();
        CHECK((in_big || in_small));
        joined += s;
    }
    CHECK(sent.size() >= 4);  // 1 MiB slices
    CHECK(joined == big + small);
}

TEST_CASE("the Host header names the logical host while TCP goes to the connect address", "[http]") {
    net::io_context ioc{1};
    test::fault_front front{ioc.get_executor(), std::nullopt};
    http::client c{ioc.get_executor()};
    http::endpoint ep{false, "bucket.s3.localhost", front.port(), "127.0.0.1"};
    auto r = run<result<http::response>>(ioc, [&]() { return c.send(ep, http::request{"GET", "/", {}, {}}); });
    REQUIRE(r.has_value());
    CHECK(r->headers.get("x-echo-host") == fmt::format("bucket.s3.localhost:{}", front.port()));
}

TEST_CASE("a reset before the response is reported as closed_before_response", "[http]") {
    net::io_context ioc{1};
    test::fault_front front{ioc.get_executor(), std::nullopt};
    front.add_rule({"", "/", test::fault::reset_before_response});
    http::client c{ioc.get_executor()};
    auto r = run<result<http::response>>(ioc, [&]() { return c.send(front_endpoint(front), http::request{}); });
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == http::errc::closed_before_response);
}

TEST_CASE("a truncated response is reported as truncated_response", "[http]") {
    net::io_context ioc{1};
    test::fault_front front{ioc.get_executor(), std::nullopt};
    front.set_fixed_response(200, {}, std::string(1000, 'b'));
    front.add_rule({"", "/", test::fault::truncate_response});
    http::client c{ioc.get_executor()};
    auto r = run<result<http::response>>(ioc, [&]() { return c.send(front_endpoint(front), http::request{}); });
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == http::errc::truncated_response);
}

TEST_CASE("a fault rule with every = 3 faults one matching request in three, times in all", "[http]") {
    net::io_context ioc{1};
    test::fault_front front{ioc.get_executor(), std::nullopt};
    test::fault_rule rule{"GET", "/k", test::fault::internal_500_empty, 1, 2};
    rule.every = 3;
    front.add_rule(rule);
    http::client c{ioc.get_executor()};
    std::vector<unsigned> statuses;
    for (int i = 0; i < 10; ++i) {
        const auto get = [&]() { return c.send(front_endpoint(front), http::request{"GET", "/k", {}, {}}); };
        auto r = run<result<http::response>>(ioc, get);
        REQUIRE(r.has_value());
        statuses.push_back(r->status);
    }
    // skip 1, then the 1st of every 3 matches, twice: requests 2 and 5.
    CHECK(statuses == std::vector<unsigned>{200, 500, 200, 200, 500, 200, 200, 200, 200, 200});
    REQUIRE(front.requests().size() == 10);
    CHECK(front.requests()[4].applied == test::fault::internal_500_empty);
}

TEST_CASE("an answer slower than the read deadline times out naming the step", "[http]") {
    net::io_context ioc{1};
    test::fault_front front{ioc.get_executor(), std::nullopt};
    front.add_rule({"", "/", test::fault::delay, 0, 1, 2000ms});
    http::client_options o;
    o.timeout.read = 100ms;
    http::client c{ioc.get_executor(), o};
    auto r = run<result<http::response>>(ioc, [&]() { return c.send(front_endpoint(front), http::request{}); });
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == http::errc::timeout);
    CHECK(r.error().detail().find("read") != std::string::npos);
}

TEST_CASE("the overall deadline caps every step", "[http]") {
    net::io_context ioc{1};
    test::fault_front front{ioc.get_executor(), std::nullopt};
    front.add_rule({"", "/", test::fault::delay, 0, 1, 2000ms});
    http::client c{ioc.get_executor()};  // read step timeout 30 s
    auto r = run<result<http::response>>(ioc, [&]() {
        return c.send(front_endpoint(front), http::request{}, 100ms);  // the caller has 100 ms left
    });
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == http::errc::timeout);
}

TEST_CASE("a pooled connection closed by the server is replaced transparently", "[http]") {
    net::io_context ioc{1};
    // A raw server that answers one request per connection without "Connection: close",
    // then closes: the client's pooled connection is dead at the next request.
    net::ip::tcp::acceptor acc{ioc, {net::ip::make_address("127.0.0.1"), 0}};
    const auto port = acc.local_endpoint().port();
    std::function<void()> serve = [&]() {
        acc.async_accept([&](boost::system::error_code ec, net::ip::tcp::socket s) {
            if (ec) return;
            auto sock = std::make_shared<net::ip::tcp::socket>(std::move(s));
            auto buf = std::make_shared<std::array<char, 4096>>();
            sock->async_read_some(net::buffer(*buf), [sock, buf](boost::system::error_code, std::size_t) {
                static const std::string resp = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
                net::async_write(*sock, net::buffer(resp), [sock](boost::system::error_code, std::size_t) {
                    boost::system::error_code e;
                    sock->shutdown(net::ip::tcp::socket::shutdown_both, e);
                    sock->close(e);
                });
            });
            serve();
        });
    };
    serve();
    http::client c{ioc.get_executor()};
    http::endpoint ep{false, "127.0.0.1", port, ""};
    for (int i = 0; i < 3; ++i) {
        auto r = run<result<http::response>>(ioc, [&]() { return c.send(ep, http::request{}); });
        REQUIRE(r.has_value());
        CHECK(r->body == "ok");
    }
    CHECK(c.stats().requests == 3);
    CHECK(c.stats().connections_opened == 3);
}

TEST_CASE("connection refused is connect_failed", "[http]") {
    net::io_context ioc{1};
    std::uint16_t port = 0;
    {
        net::ip::tcp::acceptor acc{ioc, {net::ip::make_address("127.0.0.1"), 0}};
        port = acc.local_endpoint().port();
    }
    http::client c{ioc.get_executor()};
    const auto get = [&]() { return c.send({false, "127.0.0.1", port, ""}, http::request{}); };
    auto r = run<result<http::response>>(ioc, get);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == http::errc::connect_failed);
}

TEST_CASE("a HEAD response has no body whatever its Content-Length", "[http]") {
    net::io_context ioc{1};
    test::fault_front front{ioc.get_executor(), std::nullopt};
    front.set_fixed_response(200, {{"Content-Length", "12345"}}, "");
    http::client c{ioc.get_executor()};
    for (int i = 0; i < 2; ++i) {
        const auto head = [&]() { return c.send(front_endpoint(front), http::request{"HEAD", "/k", {}, {}}); };
        auto r = run<result<http::response>>(ioc, head);
        REQUIRE(r.has_value());
        CHECK(r->headers.get("content-length") == "12345");
        CHECK(r->body.empty());
    }
    CHECK(c.stats().connections_opened == 1);
}

TEST_CASE("a CA file that does not exist is a startup error", "[http]") {
    net::io_context ioc{1};
    http::client_options o;
    o.tls.ca_file = "/nonexistent/ca.pem";
    CHECK_THROWS_AS(http::client(ioc.get_executor(), o), error_exception);
}

TEST_CASE("through a proxy: absolute-form for http with Proxy-Authorization, CONNECT for https", "[http][proxy]") {
    net::io_context ioc{1};
    test::fault_front proxy{ioc.get_executor(), std::nullopt};
    proxy.set_fixed_response(200, {}, "via proxy");
    http::client_options o;
    o.proxy.http_url = "http://sink:pw@127.0.0.1:" + std::to_string(proxy.port());
    o.proxy.https_url = o.proxy.http_url;
    o.timeout.handshake = 2s;
    http::client c{ioc.get_executor(), o};
    auto r = run<result<http::response>>(ioc, [&]() {
        return c.send(http::endpoint{false, "store.example", 9000}, http::request{"GET", "/b/k?x=1", {}, {}});
    });
    REQUIRE(r.has_value());
    CHECK(r->body == "via proxy");
    REQUIRE(proxy.requests().size() == 1);
    CHECK(proxy.requests()[0].target == "http://store.example:9000/b/k?x=1");
    CHECK(proxy.requests()[0].headers.get("host") == "store.example:9000");
    CHECK(proxy.requests()[0].headers.get("proxy-authorization") == "Basic c2luazpwdw==");
    // https: the client asks for a tunnel; this front is no real proxy, so TLS then fails.
    auto t = run<result<http::response>>(ioc, [&]() {
        return c.send(http::endpoint{true, "store.example", 443}, http::request{"GET", "/b/k", {}, {}});
    });
    REQUIRE_FALSE(t.has_value());
    REQUIRE(proxy.requests().size() == 2);
    CHECK(proxy.requests()[1].method == "CONNECT");
    CHECK(proxy.requests()[1].target == "store.example:443");
    CHECK(proxy.requests()[1].headers.get("proxy-authorization") == "Basic c2luazpwdw==");
    CHECK(t.error().message().find("pw@") == std::string::npos);
    // NO_PROXY: straight to the server.
    http::client_options d = o;
    d.proxy.no_proxy = "127.0.0.1";
    http::client direct{ioc.get_executor(), d};
    auto n = run<result<http::response>>(ioc, [&]() {
        return direct.send(http::endpoint{false, "127.0.0.1", proxy.port()}, http::request{"GET", "/direct", {}, {}});
    });
    REQUIRE(n.has_value());
    CHECK(proxy.requests().back().target == "/direct");
}
