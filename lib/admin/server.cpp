// SPDX-License-Identifier: Apache-2.0
#include "admin/server.hpp"

#include "admin/metrics.hpp"
#include "common/log.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <fmt/format.h>

#include <charconv>
#include <list>

namespace iss::admin {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

namespace {
constexpr auto use_tuple = net::as_tuple(net::use_awaitable);
}

result<tcp::endpoint> parse_listen(std::string_view s) {
    const auto bad = [&](std::string_view why) {
        return error{iss::errc::invalid_argument,
                     fmt::format("{:?}: {}; expected IP:PORT such as 127.0.0.1:9464, 0.0.0.0:9464 or [::]:9464 "
                                 "(empty turns the admin server off)",
                                 s, why)};
    };
    std::string_view host;
    std::string_view port;
    if (s.starts_with('[')) {
        const auto close = s.find(']');
        if (close == std::string_view::npos || close + 1 >= s.size() || s[close + 1] != ':')
            return bad("an IPv6 address must be written [ADDR]:PORT");
        host = s.substr(1, close - 1);
        port = s.substr(close + 2);
    } else {
        const auto colon = s.rfind(':');
        if (colon == std::string_view::npos) return bad("no port");
        host = s.substr(0, colon);
        port = s.substr(colon + 1);
        if (host.find(':') != std::string_view::npos) return bad("an IPv6 address must be written [ADDR]:PORT");
    }
    unsigned p = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
    if (port.empty() || ec != std::errc{} || end != port.data() + port.size() || p > 65535)
        return bad("the port must be a number from 0 to 65535");
    boost::system::error_code aec;
    const auto addr = net::ip::make_address(std::string{host}, aec);
    if (aec) return bad("not an IP address (host names are not resolved here)");
    return tcp::endpoint{addr, static_cast<unsigned short>(p)};
}

struct server::impl : std::enable_shared_from_this<impl> {
    impl(net::any_io_executor e, tcp::endpoint a, handlers h, server_options o)
        : ex{std::move(e)}, at{a}, hs{std::move(h)}, opts{o}, acceptor{ex} {}

    net::any_io_executor ex;
    tcp::endpoint at;
    handlers hs;
    server_options opts;
    tcp::acceptor acceptor;
    std::list<beast::tcp_stream*> open;  ///< connections being served (closed by stop())
    std::size_t active = 0;
    std::uint64_t served = 0;
    bool stopped = false;
    iss::log::logger log{"admin"};

    http::response<http::string_body> answer(const http::request<http::empty_body>& req) {
        http::response<http::string_body> res;
        res.version(req.version());
        res.keep_alive(req.keep_alive());
        res.set(http::field::server, "iggy-s3-sink");
        const auto target = std::string_view{req.target().data(), req.target().size()};
        const auto path = target.substr(0, target.find('?'));
        if (req.method() != http::verb::get && req.method() != http::verb::head) {
            res.result(http::status::method_not_allowed);
            res.set(http::field::allow, "GET, HEAD");
            res.set(http::field::content_type, "text/plain; charset=utf-8");
            res.body() = "only GET and HEAD\n";
        } else if (path == "/metrics") {
            res.result(http::status::ok);
            res.set(http::field::content_type, metrics_content_type);
            res.body() = hs.metrics ? hs.metrics() : std::string{};
        } else if (path == "/healthz") {
            res.result(http::status::ok);
            res.set(http::field::content_type, "text/plain; charset=utf-8");
            res.body() = "ok\n";
        } else if (path == "/readyz") {
            const auto unmet = hs.unmet ? hs.unmet() : std::vector<std::string>{};
            res.set(http::field::content_type, "text/plain; charset=utf-8");
            if (unmet.empty()) {
                res.result(http::status::ok);
                res.body() = "ready\n";
                if (hs.notes)
                    for (const auto& n : hs.notes()) res.body() += n + "\n";
            } else {
                res.result(http::status::service_unavailable);
                for (const auto& u : unmet) res.body() += u + "\n";
            }
        } else {
            res.result(http::status::not_found);
            res.set(http::field::content_type, "text/plain; charset=utf-8");
            res.body() = "not found: try /metrics, /healthz or /readyz\n";
        }
        res.prepare_payload();
        if (req.method() == http::verb::head) {
            // HEAD: the headers of the GET answer (Content-Length included), no body.
            const auto n = res.body().size();
            res.body().clear();
            res.content_length(n);  // set after prepare_payload: the serializer sends no body
        }
        return res;
    }

    static net::awaitable<void> session(std::shared_ptr<impl> self, tcp::socket sock) {
        beast::tcp_stream stream{std::move(sock)};
        auto it = self->open.insert(self->open.end(), &stream);
        beast::flat_buffer buf{self->opts.max_request_bytes};
        for (;;) {
            http::request_parser<http::empty_body> parser;
            parser.header_limit(static_cast<std::uint32_t>(self->opts.max_request_bytes));
            stream.expires_after(self->opts.read_timeout);
            // EOF, a timeout or a reset between requests is how keep-alive connections end.
            auto [rec, rn] = co_await http::async_read(stream, buf, parser, use_tuple);
            if (rec) break;
            const auto& req = parser.get();
            auto res = self->answer(req);
            ++self->served;
            stream.expires_after(self->opts.write_timeout);
            auto [wec, wn] = co_await http::async_write(stream, res, use_tuple);
            if (wec || !res.keep_alive() || self->stopped) break;
        }
        self->open.erase(it);
        boost::system::error_code ignored;
        stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
        stream.socket().close(ignored);
    }

    static net::awaitable<void> accept_loop(std::shared_ptr<impl> self) {
        while (!self->stopped) {
            if (self->active >= self->opts.max_connections) {
                // At the limit: wait a little; further clients wait in the listen backlog.
                net::steady_timer t{self->ex, std::chrono::milliseconds{20}};
                co_await t.async_wait(use_tuple);
                continue;
            }
            auto [ec, sock] = co_await self->acceptor.async_accept(use_tuple);
            if (ec) {
                if (self->stopped || ec == net::error::operation_aborted) break;
                // EMFILE and friends: log, back off, and go on accepting.
                self->log.warn("accept: {}", ec.message());
                net::steady_timer t{self->ex, std::chrono::milliseconds{100}};
                co_await t.async_wait(use_tuple);
                continue;
            }
            ++self->active;
            net::co_spawn(self->ex, session(self, std::move(sock)), [self](std::exception_ptr e) {
                --self->active;
                if (!e) return;
                try {
                    std::rethrow_exception(e);
                } catch (const std::exception& x) {
                    self->log.warn("admin connection: {}", x.what());
                }
            });
        }
    }
};

server::server(net::any_io_executor ex, tcp::endpoint at, handlers h, server_options o)
    : impl_{std::make_shared<impl>(std::move(ex), at, std::move(h), o)} {}

server::~server() { stop(); }

result<void> server::listen() {
    auto& a = impl_->acceptor;
    boost::system::error_code ec;
    const auto fail = [&](std::string_view step) {
        const auto at = impl_->at;
        boost::system::error_code ignored;
        a.close(ignored);
        return error{iss::errc::io_error, fmt::format("admin.listen {}:{}: {}: {}", at.address().to_string(), at.port(),
                                                      step, ec.message())};
    };
    if (a.open(impl_->at.protocol(), ec); ec) return fail("socket");
    if (a.set_option(tcp::acceptor::reuse_address(true), ec); ec) return fail("SO_REUSEADDR");
    if (a.bind(impl_->at, ec); ec) return fail("bind");
    if (a.listen(net::socket_base::max_listen_connections, ec); ec) return fail("listen");
    return {};
}

tcp::endpoint server::local_endpoint() const {
    boost::system::error_code ec;
    return impl_->acceptor.local_endpoint(ec);
}

void server::start() {
    auto self = impl_;
    net::co_spawn(impl_->ex, impl::accept_loop(self), [self](std::exception_ptr e) {
        if (!e) return;
        try {
            std::rethrow_exception(e);
        } catch (const std::exception& x) {
            self->log.error("admin server stopped: {}", x.what());
        }
    });
}

void server::stop() {
    if (!impl_ || impl_->stopped) return;
    impl_->stopped = true;
    boost::system::error_code ignored;
    impl_->acceptor.close(ignored);
    for (auto* s : impl_->open) s->socket().close(ignored);
}

std::uint64_t server::requests_served() const noexcept { return impl_->served; }

}  // namespace iss::admin
