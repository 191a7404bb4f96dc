#include "iggy/connection.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/stream_traits.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include <fmt/format.h>

#include <variant>

namespace iss::iggy {

namespace beast = boost::beast;
using tcp = net::ip::tcp;
constexpr auto use_tuple = net::as_tuple(net::use_awaitable);

namespace {
iss::error transport_error(errc e, const boost::system::error_code& ec, std::string_view what) {
    return iss::error{e, fmt::format("{}: {}", what, ec.message())};
}
}  // namespace

struct connection::streams {
    std::unique_ptr<net::ssl::context> ssl_ctx;
    std::string ca_error;
    std::unique_ptr<beast::tcp_stream> tcp;
    std::unique_ptr<net::ssl::stream<beast::tcp_stream>> tls;

    beast::tcp_stream& lowest() { return tls ? beast::get_lowest_layer(*tls) : *tcp; }
    [[nodiscard]] bool open() const noexcept { return tls || tcp; }
};

connection::connection(net::any_io_executor ex, const client_options& opts)
    : ex_{std::move(ex)}, opts_{opts}, s_{std::make_unique<streams>()} {
    if (!opts_.tls.enabled) return;
    s_->ssl_ctx = std::make_unique<net::ssl::context>(net::ssl::context::tls_client);
    if (opts_.tls.verify) {
        s_->ssl_ctx->set_verify_mode(net::ssl::verify_peer);
        boost::system::error_code ec;
        if (opts_.tls.ca_file.empty())
            s_->ssl_ctx->set_default_verify_paths(ec);
        else
            s_->ssl_ctx->load_verify_file(opts_.tls.ca_file, ec);
        if (ec) s_->ca_error = fmt::format("tls ca_file {}: {}", opts_.tls.ca_file, ec.message());
    } else {
        s_->ssl_ctx->set_verify_mode(net::ssl::verify_none);
    }
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
    return transport_error(errc::connection_lost, ec, step);
}

template <class Op>
net::awaitable<result<void>> connection::transfer(Op op, std::string_view step) {
    // as_tuple: a broken connection is an expected outcome, mapped by `failure`.
    boost::system::error_code ec;
    if (s_->tls)
        std::tie(ec, std::ignore) = co_await op(*s_->tls);
    else
        std::tie(ec, std::ignore) = co_await op(*s_->tcp);
    if (ec) co_return failure(ec, step);
    co_return result<void>{};
}

net::awaitable<result<void>> connection::write(proto::bytes_view bytes, std::string_view step) {
    const auto buf = net::buffer(bytes.data(), bytes.size());
    co_return co_await transfer([buf](auto& s) { return net::async_write(s, buf, use_tuple); }, step);
}

net::awaitable<result<void>> connection::read(std::span<std::byte> into, std::string_view step) {
    const auto buf = net::buffer(into.data(), into.size());
    co_return co_await transfer([buf](auto& s) { return net::async_read(s, buf, use_tuple); }, step);
}

net::awaitable<result<void>> connection::open() {
    close();
    s_->tls.reset();
    s_->tcp.reset();
    if (!s_->ca_error.empty()) co_return iss::error{errc::connection_failed, s_->ca_error};

    tcp::resolver::results_type endpoints;
    {
        using namespace net::experimental::awaitable_operators;
        tcp::resolver resolver{ex_};
        net::steady_timer deadline{ex_, opts_.connect_timeout};
        auto which = co_await (resolver.async_resolve(opts_.host, std::to_string(opts_.port), use_tuple) ||
                               deadline.async_wait(use_tuple));
        if (which.index() == 1)
            co_return iss::error{errc::connection_failed, fmt::format("resolving {}: timed out", opts_.host)};
        auto [ec, results] = std::get<0>(which);
        if (ec) co_return transport_error(errc::connection_failed, ec, fmt::format("resolving {}", opts_.host));
        endpoints = std::move(results);
    }

    s_->tcp = std::make_unique<beast::tcp_stream>(ex_);
    s_->tcp->expires_after(opts_.connect_timeout);
    auto [cec, ep] = co_await s_->tcp->async_connect(endpoints, use_tuple);
    if (cec) {
        close();
        co_return transport_error(errc::connection_failed, cec,
                                  fmt::format("connecting to {}:{}", opts_.host, opts_.port));
    }
    boost::system::error_code ignored;
    s_->tcp->socket().set_option(tcp::no_delay{true}, ignored);

    if (s_->ssl_ctx) {
        s_->tls = std::make_unique<net::ssl::stream<beast::tcp_stream>>(std::move(*s_->tcp), *s_->ssl_ctx);
        s_->tcp.reset();
        const std::string name = opts_.tls.server_name.empty() ? opts_.host : opts_.tls.server_name;
        if (!SSL_set_tlsext_host_name(s_->tls->native_handle(), name.c_str()))
            co_return iss::error{errc::connection_failed, "TLS: cannot set SNI " + name};
        if (opts_.tls.verify) s_->tls->set_verify_callback(net::ssl::host_name_verification(name));
        beast::get_lowest_layer(*s_->tls).expires_after(opts_.connect_timeout);
        auto [hec] = co_await s_->tls->async_handshake(net::ssl::stream_base::client, use_tuple);
        if (hec) {
            close();
            co_return transport_error(errc::connection_failed, hec, "TLS handshake");
        }
    }
    open_ = true;
    co_return result<void>{};
}

}  // namespace iss::iggy
