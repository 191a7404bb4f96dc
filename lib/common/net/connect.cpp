// SPDX-License-Identifier: Apache-2.0
#include "common/net/connect.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>

#include <fmt/format.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <algorithm>

namespace iss {

namespace net = boost::asio;
namespace beast = boost::beast;
using tcp = net::ip::tcp;
using steady = std::chrono::steady_clock;

namespace {

constexpr auto use_tuple = net::as_tuple(net::use_awaitable);

/// The failure of a step; a caller's cancellation is thrown instead (docs/architecture.md §8.4.5).
connect_failure fail(connect_failure::step s, const boost::system::error_code& ec, std::string what) {
    if (ec == net::error::operation_aborted) throw boost::system::system_error{ec};
    connect_failure f;
    f.where = s;
    f.ec = ec;
    f.timed_out = ec == beast::error::timeout;
    f.reason = f.timed_out ? std::string{"timed out"} : ec.message();
    f.detail = fmt::format("{}: {}", what, f.reason);
    return f;
}

}  // namespace

steady::duration step_expiry(std::chrono::milliseconds step, const std::optional<steady::time_point>& deadline) {
    steady::duration d = step;
    if (deadline)
        d = std::min<steady::duration>(d,
                                       std::max<steady::duration>(*deadline - steady::now(), steady::duration::zero()));
    return d;
}

bool is_ip_literal(const std::string& host) {
    boost::system::error_code ec;
    (void)net::ip::make_address(host, ec);
    return !ec;
}

connect_result<std::unique_ptr<net::ssl::context>> make_tls_context(const tls_trust& trust) {
    auto ctx = std::make_unique<net::ssl::context>(net::ssl::context::tls_client);
    ctx->set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 |
                     net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 | net::ssl::context::no_tlsv1_1);
    if (!trust.verify) {
        ctx->set_verify_mode(net::ssl::verify_none);
        return ctx;
    }
    ctx->set_verify_mode(net::ssl::verify_peer);
    boost::system::error_code ec;
    if (trust.ca_file.empty()) {
        ctx->set_default_verify_paths(ec);
        if (ec) return fail(connect_failure::step::tls_setup, ec, "system trust store");
    } else {
        ctx->load_verify_file(trust.ca_file, ec);
        if (ec) return fail(connect_failure::step::tls_setup, ec, "CA file " + trust.ca_file);
    }
    return ctx;
}

net::awaitable<connect_result<std::unique_ptr<beast::tcp_stream>>> open_tcp(
    net::any_io_executor ex, std::string host, std::uint16_t port, connect_timeouts t,
    std::optional<steady::time_point> deadline) {
    using namespace net::experimental::awaitable_operators;
    tcp::resolver::results_type addrs;
    if (is_ip_literal(host)) {
        addrs = tcp::resolver::results_type::create(tcp::endpoint{net::ip::make_address(host), port}, host,
                                                    std::to_string(port));
    } else {
        tcp::resolver resolver{ex};
        net::steady_timer timer{ex};
        timer.expires_after(step_expiry(t.resolve, deadline));
        auto r =
            co_await (resolver.async_resolve(host, std::to_string(port), use_tuple) || timer.async_wait(use_tuple));
        if (r.index() == 1) co_return fail(connect_failure::step::resolve, beast::error::timeout, "resolving " + host);
        auto [ec, res] = std::get<0>(std::move(r));
        if (ec) co_return fail(connect_failure::step::resolve, ec, "resolving " + host);
        addrs = std::move(res);
    }
    auto s = std::make_unique<beast::tcp_stream>(ex);
    s->expires_after(step_expiry(t.connect, deadline));
    auto [ec, ep] = co_await s->async_connect(addrs, use_tuple);
    (void)ep;
    if (ec) co_return fail(connect_failure::step::connect, ec, fmt::format("connecting to {}:{}", host, port));
    s->expires_never();
    boost::system::error_code ignored;
    s->socket().set_option(tcp::no_delay{true}, ignored);
    co_return s;
}

net::awaitable<connect_result<std::unique_ptr<tls_stream>>> tls_handshake(std::unique_ptr<beast::tcp_stream> tcp,
                                                                          net::ssl::context& ctx, std::string name,
                                                                          bool verify,
                                                                          std::chrono::milliseconds timeout,
                                                                          std::optional<steady::time_point> deadline) {
    auto s = std::make_unique<tls_stream>(std::move(*tcp), ctx);
    tcp.reset();
    // SNI must be a host name, never an IP literal (RFC 6066 §3).
    if (!is_ip_literal(name) && !SSL_set_tlsext_host_name(s->native_handle(), name.c_str()))
        co_return fail(connect_failure::step::handshake, net::error::invalid_argument, "TLS: cannot set SNI " + name);
    // The name check is OpenSSL's own (X509_VERIFY_PARAM host/IP): a mismatch then fails the
    // verification with its own reason ("hostname mismatch", "IP address mismatch"), which the
    // clients report (docs/operations.md, Faults: tls_name).
    if (verify) {
        const int set = is_ip_literal(name)
                            ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(s->native_handle()), name.c_str())
                            : SSL_set1_host(s->native_handle(), name.c_str());
        if (set != 1)
            co_return fail(connect_failure::step::handshake, net::error::invalid_argument,
                           "TLS: cannot set the name to verify " + name);
    }
    beast::get_lowest_layer(*s).expires_after(step_expiry(timeout, deadline));
    auto [ec] = co_await s->async_handshake(net::ssl::stream_base::client, use_tuple);
    if (ec) {
        auto f = fail(connect_failure::step::handshake, ec, "TLS handshake with " + name);
        const long vr = SSL_get_verify_result(s->native_handle());
        if (!f.timed_out && vr != X509_V_OK) {
            f.certificate = true;
            f.reason = X509_verify_cert_error_string(vr);
            f.detail = fmt::format("TLS handshake with {}: {}", name, f.reason);
        }
        co_return f;
    }
    beast::get_lowest_layer(*s).expires_never();
    co_return s;
}

}  // namespace iss
