// SPDX-License-Identifier: Apache-2.0
#include "admin/server.hpp"

#include "admin/request.hpp"
#include "common/clock.hpp"
#include "common/log.hpp"
#include "common/net/sleeper.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <fmt/format.h>

#include <array>
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
        : ex{std::move(e)},
          at{a},
          hs{std::move(h)},
          opts{o},
          clk{opts.clock ? *opts.clock : real_clock::instance()},
          acceptor{ex},
          backoff{ex} {}

    /// What an open connection is doing, in the order they are closed at the limit.
    enum class phase : std::uint8_t {
        lingering,  ///< answered 400/431, dropping what still comes
        idle,       ///< waiting for the first byte of a request
        header,     ///< a request header has begun (slow headers end here)
        busy,       ///< a request is being answered: never closed to make room
    };
    /// One open connection, from its accept (before its session starts) to its close; `turn`
    /// orders the waits (the one waiting longest goes first).
    struct conn {
        conn(tcp::socket s, std::uint64_t t) : stream{std::move(s)}, turn{t} {}
        beast::tcp_stream stream;
        phase at = phase::idle;
        std::uint64_t turn = 0;
        iss::clock::steady_time header_since{};
        bool evicted = false;
    };
    using conn_it = std::list<conn>::iterator;
    /// A header begun this long ago may be closed to make room (a client sends a whole
    /// request at once; a header still coming after this is slow, or slowloris).
    static constexpr std::chrono::seconds slow_header{1};

    net::any_io_executor ex;
    tcp::endpoint at;
    handlers hs;
    server_options opts;
    const iss::clock& clk;
    tcp::acceptor acceptor;
    iss::asio_sleeper backoff;  ///< the accept loop's pause after a failed accept
    std::list<conn> open;       ///< connections being served (closed by stop())
    std::size_t evicting = 0;   ///< of `open`: closed to make room, their sessions still ending
    std::uint64_t turn = 0;     ///< orders the waits
    server_stats stats;
    bool stopped = false;
    iss::log::logger log{"admin"};

    [[nodiscard]] std::size_t live() const noexcept { return open.size() - evicting; }

    /// Whether `c` may be closed to make room: lingering; idle with no byte in its socket
    /// (a request already there is about to be served: under a flood of new connections the
    /// loop may accept many before it reads); a header begun `slow_header` ago.
    bool closable(const conn& c, iss::clock::steady_time now) const {
        if (c.evicted) return false;
        switch (c.at) {
            case phase::lingering: return true;
            case phase::idle: {
                boost::system::error_code ec;
                return c.stream.socket().available(ec) == 0 || ec;
            }
            case phase::header: return now - c.header_since >= slow_header;
            case phase::busy: return false;
        }
        return false;
    }

    /// Makes room for one more connection: closes the closable one first in `phase` order,
    /// then waiting longest. False when none is closable (all busy, or requests coming in).
    bool make_room() {
        const auto now = clk.steady_now();
        auto oldest = open.end();
        for (auto i = open.begin(); i != open.end(); ++i) {
            if (oldest != open.end() && std::pair{i->at, i->turn} >= std::pair{oldest->at, oldest->turn}) continue;
            if (closable(*i, now)) oldest = i;
        }
        if (oldest == open.end()) return false;
        oldest->evicted = true;
        ++evicting;
        --stats.open;
        ++stats.closed_limit;
        boost::system::error_code ignored;
        oldest->stream.socket().close(ignored);
        return true;
    }

    /// After a 400 or 431: no more answers; read and drop what the client still sends, for at
    /// most `linger`, so that closing does not reset the connection before it read the answer.
    static net::awaitable<void> linger_close(beast::tcp_stream& stream, server_options o) {
        boost::system::error_code ec;
        stream.socket().shutdown(tcp::socket::shutdown_send, ec);
        stream.expires_after(o.linger);
        std::array<char, 16 * 1024> scratch{};
        std::size_t dropped = 0;
        while (dropped < 16 * o.max_request_bytes) {
            auto [rec, n] = co_await stream.async_read_some(net::buffer(scratch), use_tuple);
            if (rec) break;  // EOF (the client closed), the linger deadline, a reset
            dropped += n;
        }
    }

    /// Reads one request into `parser`: waits `idle_timeout` for its first byte, then
    /// `header_timeout` for the rest. The error is the stream's or the parser's.
    static net::awaitable<boost::system::error_code> read_request(impl& self, conn& c, beast::flat_buffer& buf,
                                                                  http::request_parser<http::empty_body>& parser) {
        auto& stream = c.stream;
        c.turn = ++self.turn;
        c.at = phase::idle;
        if (buf.size() == 0) {
            stream.expires_after(self.opts.idle_timeout);
            auto [ec, n] = co_await stream.async_read_some(buf.prepare(buf.max_size()), use_tuple);
            if (ec) {
                if (ec == beast::error::timeout) ++self.stats.closed_idle;
                co_return ec;
            }
            buf.commit(n);
        }
        c.at = phase::header;
        c.header_since = self.clk.steady_now();
        stream.expires_after(self.opts.header_timeout);
        auto [ec, n] = co_await http::async_read(stream, buf, parser, use_tuple);
        if (ec == beast::error::timeout) ++self.stats.closed_header;
        co_return ec;
    }

    static net::awaitable<void> session(std::shared_ptr<impl> self, conn_it it) {
        auto& stream = it->stream;
        beast::flat_buffer buf{self->opts.max_request_bytes};
        for (;;) {
            http::request_parser<http::empty_body> parser;
            parser.header_limit(static_cast<std::uint32_t>(self->opts.max_request_bytes));
            const auto rec = co_await read_request(*self, *it, buf, parser);
            if (it->evicted) break;
            it->at = phase::busy;
            if (rec) {
                // EOF, a timeout or a reset between requests is how keep-alive connections
                // end; input that is not a request we take is answered 400 or 431, then closed.
                const auto why = classify_read_error(rec);
                auto res = refusal(why);
                if (!res) break;
                ++(why == read_failure::header_too_large ? self->stats.closed_too_large : self->stats.closed_bad);
                ++self->stats.requests;
                stream.expires_after(self->opts.write_timeout);
                auto [wec, wn] = co_await http::async_write(stream, *res, use_tuple);
                it->at = phase::lingering;  // the first to go at the limit
                if (!wec && !it->evicted) co_await linger_close(stream, self->opts);
                break;
            }
            auto res = answer(parser.get(), self->hs);
            ++self->stats.requests;
            stream.expires_after(self->opts.write_timeout);
            auto [wec, wn] = co_await http::async_write(stream, res, use_tuple);
            if (wec || !res.keep_alive() || self->stopped || it->evicted) break;
        }
        boost::system::error_code ignored;
        stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
        stream.socket().close(ignored);
        if (it->evicted) --self->evicting;  // not counted open since it was closed
        else --self->stats.open;
        self->open.erase(it);  // `stream` with it
    }

    /// A new connection: served, after making room at the limit; closed at once when every
    /// open connection is busy answering or has its request waiting to be read.
    void admit(tcp::socket sock) {
        ++stats.accepted;
        if (live() >= opts.max_connections && !make_room()) {
            ++stats.closed_limit;
            boost::system::error_code ignored;
            sock.close(ignored);
            return;
        }
        // In `open` from now on (not when the session starts: the loop may accept many before
        // it runs them), so the limit counts it and it can be closed to make room.
        const auto it = open.emplace(open.end(), std::move(sock), ++turn);
        ++stats.open;
        auto self = shared_from_this();
        net::co_spawn(ex, session(self, it), [self](std::exception_ptr e) {
            if (!e) return;
            try {
                std::rethrow_exception(e);
            } catch (const std::exception& x) {
                self->log.warn("admin connection: {}", x.what());
            }
        });
    }

    static net::awaitable<void> accept_loop(std::shared_ptr<impl> self) {
        while (!self->stopped) {
            auto [ec, sock] = co_await self->acceptor.async_accept(use_tuple);
            if (ec) {
                if (self->stopped || ec == net::error::operation_aborted) break;
                // EMFILE and friends: log, back off, and go on accepting.
                self->log.warn("accept: {}", ec.message());
                co_await self->backoff.sleep_for(std::chrono::milliseconds{100});  // stop() interrupts it
                continue;
            }
            self->admit(std::move(sock));
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
        // The system's code (its message, e.g. "Address already in use", ends the text once).
        return error{ec, fmt::format("admin.listen {}:{}: {}", at.address().to_string(), at.port(), step)};
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
    impl_->backoff.interrupt();
    for (auto& c : impl_->open) c.stream.socket().close(ignored);
}

std::uint64_t server::requests_served() const noexcept { return impl_->stats.requests; }

const server_stats& server::stats() const noexcept { return impl_->stats; }

}  // namespace iss::admin
