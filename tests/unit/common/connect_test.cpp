// SPDX-License-Identifier: Apache-2.0
// common/net/connect.hpp against a TLS listener on 127.0.0.1:0 in this process, with a
// certificate made here (CN and SAN localhost, SAN IP 127.0.0.1): SNI for a host name and
// none for an IP literal, the CA file honoured, host-name verification, the step deadline.
#include "common/net/connect.hpp"

#include "run_coro.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include "catch2_compat.hpp"
#include <fmt/format.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

namespace net = boost::asio;
namespace fs = std::filesystem;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;

namespace {

/// A self-signed certificate (its own CA) and its key, both PEM.
struct test_cert {
    std::string cert_pem, key_pem;
};

std::string to_pem(int (*write)(BIO*, void*), void* obj) {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio{BIO_new(BIO_s_mem()), BIO_free};
    REQUIRE(write(bio.get(), obj) == 1);
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<std::size_t>(n));
}

void add_ext(X509* x, int nid, const char* value) {
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, x, x, nullptr, nullptr, 0);
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
    REQUIRE(ext != nullptr);
    X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
}

test_cert make_cert() {
    std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key{EVP_EC_gen("P-256"), EVP_PKEY_free};
    REQUIRE(key);
    std::unique_ptr<X509, decltype(&X509_free)> x{X509_new(), X509_free};
    X509_set_version(x.get(), 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x.get()), 1);
    X509_gmtime_adj(X509_getm_notBefore(x.get()), -60);
    X509_gmtime_adj(X509_getm_notAfter(x.get()), 3600);
    X509_set_pubkey(x.get(), key.get());
    X509_NAME* name = X509_get_subject_name(x.get());
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("localhost"), -1, -1,
                               0);
    X509_set_issuer_name(x.get(), name);
    add_ext(x.get(), NID_basic_constraints, "critical,CA:TRUE");
    add_ext(x.get(), NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1");
    REQUIRE(X509_sign(x.get(), key.get(), EVP_sha256()) > 0);
    test_cert c;
    c.cert_pem = to_pem([](BIO* b, void* o) { return PEM_write_bio_X509(b, static_cast<X509*>(o)); }, x.get());
    c.key_pem = to_pem(
        [](BIO* b, void* o) {
            return PEM_write_bio_PrivateKey(b, static_cast<EVP_PKEY*>(o), nullptr, nullptr, 0, nullptr, nullptr);
        },
        key.get());
    return c;
}

/// One certificate for the whole test binary, and its PEM in a file (the CA file).
const test_cert& cert() {
    static const test_cert c = make_cert();
    return c;
}
const std::string& ca_file() {
    static const std::string path = [] {
        const auto p = fs::temp_directory_path() / fmt::format("iss-connect-test-{}.pem", ::getpid());
        std::ofstream{p} << cert().cert_pem;
        return p.string();
    }();
    return path;
}

/// A TLS server for one connection on 127.0.0.1:0: records the SNI it got ("" = none).
/// With `silent`, it accepts TCP and never answers the handshake.
struct tls_listener {
    explicit tls_listener(net::any_io_executor ex, bool silent = false)
        : acceptor{ex, {net::ip::make_address("127.0.0.1"), 0}}, silent{silent} {
        ctx.use_certificate_chain(net::buffer(cert().cert_pem));
        ctx.use_private_key(net::buffer(cert().key_pem), net::ssl::context::pem);
        // Recorded while the ClientHello is read, so before the client's handshake completes
        // (OpenSSL calls it with or without the extension).
        SSL_CTX_set_tlsext_servername_callback(ctx.native_handle(), &tls_listener::on_servername);
        SSL_CTX_set_tlsext_servername_arg(ctx.native_handle(), this);
        net::co_spawn(ex, serve(), net::detached);
    }
    [[nodiscard]] std::uint16_t port() const { return acceptor.local_endpoint().port(); }

    net::awaitable<void> serve() {
        auto [ec, sock] = co_await acceptor.async_accept(net::as_tuple(net::use_awaitable));
        if (ec) co_return;
        if (silent) {
            held = std::make_unique<tcp::socket>(std::move(sock));
            co_return;
        }
        net::ssl::stream<tcp::socket> s{std::move(sock), ctx};
        auto [hec] = co_await s.async_handshake(net::ssl::stream_base::server, net::as_tuple(net::use_awaitable));
        (void)hec;  // the client's view is what the tests check
    }

    static int on_servername(SSL* ssl, int*, void* arg) {
        const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
        static_cast<tls_listener*>(arg)->sni = name ? name : "";
        return SSL_TLSEXT_ERR_OK;
    }

    net::ssl::context ctx{net::ssl::context::tls_server};
    tcp::acceptor acceptor;
    bool silent;
    std::unique_ptr<tcp::socket> held;
    std::optional<std::string> sni;  ///< set once a ClientHello arrived
};

using test::run;

/// Connects to 127.0.0.1:`port` and handshakes as `name`; the failure, or nullopt on success.
/// (Plain parameters: GCC 12 destroys a brace-initialised aggregate argument of a coroutine
/// twice, lib/http/README.md.)
net::awaitable<std::optional<iss::connect_failure>> connect_as(std::uint16_t port, std::string name, std::string ca,
                                                               bool verify,
                                                               std::chrono::milliseconds handshake = 5000ms) {
    auto ex = co_await net::this_coro::executor;
    iss::tls_trust trust;
    trust.ca_file = ca;
    trust.verify = verify;
    auto ctx = iss::make_tls_context(trust);
    if (!ctx) co_return ctx.error();
    const iss::connect_timeouts steps{1000ms, 1000ms, handshake};
    auto t = co_await iss::open_tcp(ex, "127.0.0.1", port, steps);
    if (!t) co_return t.error();
    auto h = co_await iss::tls_handshake(std::move(*t), **ctx, name, verify, handshake);
    if (!h) co_return h.error();
    co_return std::nullopt;
}

}  // namespace

TEST_CASE("connect: SNI is the host name; the CA file makes the certificate trusted", "[net][connect]") {
    run([](net::any_io_executor ex) -> net::awaitable<void> {
        tls_listener server{ex};
        const auto f = co_await connect_as(server.port(), "localhost", ca_file(), true);
        INFO((f ? f->detail : std::string{}));
        CHECK_FALSE(f.has_value());
        CHECK(server.sni == std::optional<std::string>{"localhost"});
    });
}

TEST_CASE("connect: no SNI for an IP literal (RFC 6066), the IP is still verified", "[net][connect]") {
    run([](net::any_io_executor ex) -> net::awaitable<void> {
        tls_listener server{ex};
        const auto f = co_await connect_as(server.port(), "127.0.0.1", ca_file(), true);
        INFO((f ? f->detail : std::string{}));
        CHECK_FALSE(f.has_value());
        CHECK(server.sni == std::optional<std::string>{""});
    });
}

TEST_CASE("connect: without the CA file the certificate is rejected, as a certificate failure", "[net][connect]") {
    run([](net::any_io_executor ex) -> net::awaitable<void> {
        tls_listener server{ex};
        const auto f = co_await connect_as(server.port(), "localhost", "", true);  // system store only
        REQUIRE(f.has_value());
        CHECK(f->where == iss::connect_failure::step::handshake);
        CHECK(f->certificate);
        CHECK_FALSE(f->timed_out);
    });
}

TEST_CASE("connect: a name the certificate does not hold is rejected; verify off accepts it", "[net][connect]") {
    run([](net::any_io_executor ex) -> net::awaitable<void> {
        {
            tls_listener server{ex};
            const auto f = co_await connect_as(server.port(), "other.example", ca_file(), true);
            REQUIRE(f.has_value());
            CHECK(f->certificate);
            CHECK(f->detail.find("other.example") != std::string::npos);
            // OpenSSL's own reason, which the S3 client reports as `tls_name` (docs/operations.md, Faults).
            CHECK(f->reason == "hostname mismatch");
        }
        {
            tls_listener server{ex};
            const auto f = co_await connect_as(server.port(), "other.example", "", false);
            CHECK_FALSE(f.has_value());
            CHECK(server.sni == std::optional<std::string>{"other.example"});
        }
    });
}

TEST_CASE("connect: an unreadable CA file fails the TLS setup and names the file", "[net][connect]") {
    auto ctx = iss::make_tls_context({"/nonexistent/ca.pem", true});
    REQUIRE_FALSE(ctx.has_value());
    CHECK(ctx.error().where == iss::connect_failure::step::tls_setup);
    CHECK(ctx.error().detail.find("/nonexistent/ca.pem") != std::string::npos);
}

TEST_CASE("connect: a silent server fails the handshake step at its deadline", "[net][connect]") {
    run([](net::any_io_executor ex) -> net::awaitable<void> {
        tls_listener server{ex, true};
        const auto t0 = std::chrono::steady_clock::now();
        const auto f = co_await connect_as(server.port(), "localhost", ca_file(), true, 200ms);
        const auto took = std::chrono::steady_clock::now() - t0;
        REQUIRE(f.has_value());
        CHECK(f->where == iss::connect_failure::step::handshake);
        CHECK(f->timed_out);
        CHECK(took >= 150ms);
        CHECK(took < 3s);
        server.acceptor.close();
    });
}

TEST_CASE("connect: the overall deadline caps a longer step timeout", "[net][connect]") {
    run([](net::any_io_executor ex) -> net::awaitable<void> {
        tls_listener server{ex, true};
        auto ctx = iss::make_tls_context({ca_file(), true});
        REQUIRE(ctx.has_value());
        const auto t0 = std::chrono::steady_clock::now();
        const iss::connect_timeouts steps{1000ms, 1000ms, 10000ms};
        auto t = co_await iss::open_tcp(ex, "127.0.0.1", server.port(), steps);
        REQUIRE(t.has_value());
        auto h = co_await iss::tls_handshake(std::move(*t), **ctx, "localhost", true, 10000ms, t0 + 200ms);
        REQUIRE_FALSE(h.has_value());
        CHECK(h.error().timed_out);
        CHECK(std::chrono::steady_clock::now() - t0 < 3s);
    });
}

TEST_CASE("connect: a refused TCP connect names the connect step", "[net][connect]") {
    run([](net::any_io_executor ex) -> net::awaitable<void> {
        std::uint16_t port = 0;
        {
            tcp::acceptor probe{ex, {net::ip::make_address("127.0.0.1"), 0}};
            port = probe.local_endpoint().port();
        }  // closed: nothing listens there
        const iss::connect_timeouts steps{1000ms, 1000ms, 1000ms};
        auto t = co_await iss::open_tcp(ex, "127.0.0.1", port, steps);
        REQUIRE_FALSE(t.has_value());
        CHECK(t.error().where == iss::connect_failure::step::connect);
        CHECK_FALSE(t.error().timed_out);
        CHECK(t.error().detail.find("127.0.0.1") != std::string::npos);
    });
}
