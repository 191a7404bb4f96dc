// SPDX-License-Identifier: Apache-2.0
#include "iggy/connection.hpp"

#include "common/net/connect.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/stream_traits.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include <fmt/format.h>

#include <variant>

namespace iss::iggy {

namespace beast = boost::beast;
constexpr auto use_tuple = net::as_tuple(net::use_awaitable);

namespace {
iss::error transport_error(errc e, const boost::system::error_code& ec, std::string_view what,
                           std::string_view hint = {}) {
    return iss::error{e, fmt::format("{}: {}{}", what, ec.message(), hint)};
}

/// A failed connect step: `connection_failed` (a caller's cancellation threw already, never an
/// error to retry, docs/architecture.md §8.4.5).
iss::error open_failure(const connect_failure& f) {
    return iss::error{f.certificate ? errc::certificate_rejected : errc::connection_failed, f.detail};
}
}  // namespace

struct connection::streams {
    std::unique_ptr<net::ssl::context> ssl_ctx;
    std::string ca_error;
    std::unique_ptr<beast::tcp_stream> tcp;
    std::unique_ptr<tls_stream> tls;

    beast::tcp_stream& lowest() { return tls ? beast::get_lowest_layer(*tls) : *tcp; }
    [[nodiscard]] bool open() const noexcept { return tls || tcp; }
};

connection::connection(net::any_io_executor ex, const client_options& opts)
    : ex_{std::move(ex)}, opts_{opts}, s_{std::make_unique<streams>()} {
    if (!opts_.tls.enabled) return;
    auto ctx = make_tls_context({opts_.tls.ca_file, opts_.tls.verify});
    if (ctx) s_->ssl_ctx = std::move(*ctx);
    else s_->ca_error = "tls " + ctx.error().detail;  // reported by every open()
}

connection::~connection() = default;

void connection::close() noexcept {
    open_ = false;
    boost::system::error_code ec;
    if (s_->tls) beast::get_lowest_layer(*s_->tls).socket().close(ec);
    if (s_->tcp) s_->tcp->socket().close(ec);
}

void connection::shutdown() noexcept {
    shut_ = true;
    close();
}

void connection::arm(std::chrono::milliseconds d) noexcept {
    if (s_->open()) s_->lowest().expires_after(d);
}

void connection::disarm() noexcept {
    if (s_->open()) s_->lowest().expires_never();
}

iss::error connection::failure(const boost::system::error_code& ec, std::string_view step) {
    close();
    if (shut_) return iss::error{errc::closed, std::string{step}};
    if (ec == beast::error::timeout) return transport_error(errc::timeout, ec, step);
    // A caller's cancellation is never an error to retry (docs/architecture.md §8.4.5).
    if (ec == net::error::operation_aborted) throw boost::system::system_error{ec};
    // A plaintext connection closed before any answer: the usual sign of a TLS-only listener
    // (Iggy's TCP listener with tcp.tls.enabled closes it without a word).
    if (!answered_ && !opts_.tls.enabled && (ec == net::error::eof || ec == net::error::connection_reset))
        return transport_error(errc::connection_lost, ec, step,
                               " (closed before the server's first answer: if its listener speaks TLS, set "
                               "iggy.tls.enabled: true)");
    return transport_error(errc::connection_lost, ec, step);
}

template <class Op>
net::awaitable<result<void>> connection::transfer(Op op, std::string_view step) {
    // as_tuple: a broken connection is an expected outcome, mapped by `failure`.
    boost::system::error_code ec;
    if (s_->tls) std::tie(ec, std::ignore) = co_await op(*s_->tls);
    else std::tie(ec, std::ignore) = co_await op(*s_->tcp);
    if (ec) co_return failure(ec, step);
    co_return result<void>{};
}

net::awaitable<result<void>> connection::write(proto::bytes_view bytes, std::string_view step) {
    const auto buf = net::buffer(bytes.data(), bytes.size());
    co_return co_await transfer([buf](auto& s) { return net::async_write(s, buf, use_tuple); }, step);
}

net::awaitable<result<void>> connection::read(std::span<std::byte> into, std::string_view step) {
    const auto buf = net::buffer(into.data(), into.size());
    auto r = co_await transfer([buf](auto& s) { return net::async_read(s, buf, use_tuple); }, step);
    if (r) answered_ = true;
    co_return r;
}

net::awaitable<result<void>> connection::open() {
    close();
    answered_ = false;
    s_->tls.reset();
    s_->tcp.reset();
    if (!s_->ca_error.empty()) co_return iss::error{errc::connection_failed, s_->ca_error};

    const connect_timeouts steps{opts_.connect_timeout, opts_.connect_timeout, opts_.connect_timeout};
    auto t = co_await open_tcp(ex_, opts_.host, opts_.port, steps);
    if (!t) co_return open_failure(t.error());
    if (!s_->ssl_ctx) {
        s_->tcp = std::move(*t);
    } else {
        const std::string name = opts_.tls.server_name.empty() ? opts_.host : opts_.tls.server_name;
        auto h = co_await tls_handshake(std::move(*t), *s_->ssl_ctx, name, opts_.tls.verify, opts_.connect_timeout);
        if (!h) co_return open_failure(h.error());
        s_->tls = std::move(*h);
    }
    open_ = true;
    co_return result<void>{};
}

}  // namespace iss::iggy
