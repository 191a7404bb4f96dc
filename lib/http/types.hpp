// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Plain HTTP types of the transport (no Asio here, so S3 request builders and their tests
/// include only this): endpoints, case-insensitive header lists, requests whose bodies are
/// views of the caller's buffers, responses, options and the module's error codes.
///
/// lib/http knows nothing of S3: it sends a request to an endpoint and returns the response.

#include "common/error.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace iss::http {

/// Errors of the transport. Each names the step that failed; the detail says more (host,
/// OpenSSL reason). Cancellation is never one of these: it throws Asio's own
/// `operation_aborted` (docs/architecture.md §8.4.5), so that callers never retry it.
enum class errc {
    invalid_url = 1,         ///< the URL is not `http[s]://host[:port][/...]`
    resolve_failed,          ///< DNS lookup failed (check the endpoint's host name)
    connect_failed,          ///< TCP connect failed (refused, unreachable)
    tls_handshake_failed,    ///< the TLS handshake failed for a reason other than the certificate
    certificate_rejected,    ///< the server certificate did not verify (CA file, host name)
    timeout,                 ///< a step's deadline passed (the detail names the step)
    closed_before_response,  ///< the connection was reset or closed before any response byte
    truncated_response,      ///< the connection ended in the middle of the response
    bad_response,            ///< the response is not valid HTTP/1.1
    write_failed,            ///< sending the request failed after some bytes were sent
    tls_setup_failed,        ///< the TLS context could not be set up (CA file unreadable)
};

const boost::system::error_category& http_category() noexcept;
inline error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), http_category()}; }

/// ASCII case-insensitive equality, for header names.
[[nodiscard]] bool iequals(std::string_view a, std::string_view b) noexcept;

/// An ordered list of header fields; names compare case-insensitively (RFC 9110 §5.1).
class header_list {
public:
    using value_type = std::pair<std::string, std::string>;
    header_list() = default;
    header_list(std::initializer_list<value_type> init) : fields_{init} {}

    /// Adds a field (keeps existing ones with the same name).
    void add(std::string name, std::string value) { fields_.emplace_back(std::move(name), std::move(value)); }
    /// Replaces every field named `name` by one with `value`.
    void set(std::string_view name, std::string value);
    /// Removes every field named `name`.
    void erase(std::string_view name);
    /// The first field named `name` (any case), or nullopt.
    [[nodiscard]] std::optional<std::string_view> find(std::string_view name) const noexcept;
    [[nodiscard]] bool contains(std::string_view name) const noexcept { return find(name).has_value(); }
    /// The value of `name`, or "" when absent.
    [[nodiscard]] std::string_view get(std::string_view name) const noexcept { return find(name).value_or(""); }

    [[nodiscard]] auto begin() const noexcept { return fields_.begin(); }
    [[nodiscard]] auto end() const noexcept { return fields_.end(); }
    [[nodiscard]] std::size_t size() const noexcept { return fields_.size(); }
    [[nodiscard]] bool empty() const noexcept { return fields_.empty(); }

private:
    std::vector<value_type> fields_;
};

/// Where to send requests. `host` is the logical host: it goes into the Host header and is
/// the name the TLS certificate must match. `connect_host`, when set, is where the TCP
/// connection goes instead (virtual-hosted tests against 127.0.0.1, a proxy), without
/// changing Host or the certificate check.
///
/// Not an aggregate on purpose: GCC 12 miscompiles a brace-initialised aggregate prvalue
/// passed by value to a coroutine (its members are freed twice; checked with ASan here), so
/// the types that coroutines take by value have constructors.
struct endpoint {
    endpoint() = default;
    endpoint(bool tls_, std::string host_, std::uint16_t port_, std::string connect_host_ = {})
        : tls{tls_}, host{std::move(host_)}, port{port_}, connect_host{std::move(connect_host_)} {}
    bool tls = false;
    std::string host;          ///< host name or IP literal (IPv6 without brackets)
    std::uint16_t port = 0;    ///< 80/443 when the URL gives none
    std::string connect_host;  ///< empty: connect to `host`

    /// The Host header value: host, plus ":port" when the port is not the scheme's default.
    [[nodiscard]] std::string host_header() const;
    /// "https://host:port" for logs.
    [[nodiscard]] std::string to_string() const;
    friend bool operator==(const endpoint&, const endpoint&) = default;
};

/// Parses `http://host[:port][/path]` or `https://...` (the path is ignored; see
/// `url_path`). IPv6 literals in brackets. Errors: `errc::invalid_url` naming the problem.
[[nodiscard]] result<endpoint> parse_url(std::string_view url);
/// The path part of a URL ("" when none), without query.
[[nodiscard]] std::string_view url_path(std::string_view url) noexcept;

/// One request. The body is a list of views into the caller's memory, sent as they are
/// (no copy): the caller keeps that memory alive and unchanged until the send completes.
/// `target` is the already encoded path and query, exactly as it goes on the wire.
/// Content-Length is set from the body unless the caller set it; Host from the endpoint
/// unless the caller set it.
/// Not an aggregate (see `endpoint`).
struct request {
    request() = default;
    request(std::string method_, std::string target_, header_list headers_ = {},
            std::vector<std::string_view> body_ = {})
        : method{std::move(method_)},
          target{std::move(target_)},
          headers{std::move(headers_)},
          body{std::move(body_)} {}
    std::string method = "GET";
    std::string target = "/";
    header_list headers;
    std::vector<std::string_view> body;
    /// Optional: called with each stretch of `body`, in order, once this attempt no longer
    /// needs it in memory (sealed into TLS records, or written to the socket). The bytes must
    /// stay readable (another attempt sends them again): for a part mapped from a file, the
    /// caller can let the stretch's pages go from the process (spool::mapping::release).
    std::function<void(std::string_view)> body_sent;

    /// The total body size in bytes.
    [[nodiscard]] std::size_t body_size() const noexcept;
};

/// One response. For HEAD the body is empty whatever Content-Length says.
struct response {
    unsigned status = 0;
    std::string reason;
    header_list headers;
    std::string body;
};

/// Deadlines for each network step (docs/architecture.md §8.3.3). Write and read are per step: each slice
/// of the body sent (1 MiB) and each read from the socket must complete within them, so a
/// large transfer that keeps moving is never cut off, while a stalled one is.
struct timeouts {
    std::chrono::milliseconds resolve{5'000};    ///< DNS lookup
    std::chrono::milliseconds connect{5'000};    ///< TCP connect
    std::chrono::milliseconds handshake{5'000};  ///< TLS handshake
    std::chrono::milliseconds write{30'000};     ///< each write step
    std::chrono::milliseconds read{30'000};      ///< each read step (incl. waiting for the status line)
};

/// TLS settings. Verification (chain and host name) is on unless `insecure` is set.
struct tls_options {
    std::string ca_file;    ///< PEM CA bundle; empty: the system trust store
    bool insecure = false;  ///< skip certificate verification (test stores only; logged as a warning)
};

/// An HTTP proxy on the way out. https:// endpoints go through a CONNECT tunnel
/// (RFC 9110 §9.3.6; TLS end to end, the proxy sees only host:port); http:// requests are sent
/// to the proxy in absolute form (RFC 9112 §3.2.2). Credentials in the URL
/// (`http://user:password@host:port`) go as `Proxy-Authorization: Basic`; print a proxy URL
/// only through `redact_url`.
struct proxy_options {
    std::string http_url;   ///< proxy for http:// endpoints; empty: none
    std::string https_url;  ///< proxy for https:// endpoints; empty: none
    /// Hosts reached directly: comma-separated names (`example.com` also matches its
    /// subdomains, `.example.com` only them), IP literals, `host:port`, or `*` for all.
    std::string no_proxy;
};

/// Where a request to an endpoint goes when a proxy applies.
struct proxy_route {
    endpoint proxy;             ///< the proxy itself (plain TCP)
    std::string authorization;  ///< Proxy-Authorization value, or ""
    [[nodiscard]] std::string to_string() const { return proxy.to_string(); }
};

/// The proxy route for `ep` under `p`, or nullopt when it goes direct (no proxy set, or
/// NO_PROXY matches). Errors: `errc::invalid_url` for a proxy URL that is not
/// `http://[user:password@]host[:port]` (the detail never holds the password).
[[nodiscard]] result<std::optional<proxy_route>> route_for(const proxy_options& p, const endpoint& ep);
/// True when `host` (and `port`) match the NO_PROXY list.
[[nodiscard]] bool no_proxy_matches(std::string_view list, std::string_view host, std::uint16_t port) noexcept;
/// `url` with the password of its user info replaced by `****` (`http://u:****@h:3128`).
[[nodiscard]] std::string redact_url(std::string_view url);

/// Client options; every field has a usable default.
struct client_options {
    timeouts timeout;
    tls_options tls;
    proxy_options proxy;
    std::size_t max_idle_per_endpoint = 16;          ///< idle keep-alive connections kept per endpoint
    std::chrono::milliseconds idle_timeout{20'000};  ///< an idle connection older than this is closed, not reused
};

/// Counters for tests, benchmarks and logs.
struct client_stats {
    std::uint64_t connections_opened = 0;  ///< new TCP (+TLS) connections
    std::uint64_t connections_reused = 0;  ///< requests sent on a pooled connection
    std::uint64_t stale_retries = 0;       ///< requests re-sent because a pooled connection was dead
    std::uint64_t requests = 0;            ///< requests completed with a response
    /// TLS record batches the socket did not take at once (full send buffer: the peer reads
    /// slower than the body is sealed), written by a write that waited for room.
    std::uint64_t body_waits = 0;
};

}  // namespace iss::http

namespace boost::system {
template <>
struct is_error_code_enum<iss::http::errc> : std::true_type {};
}  // namespace boost::system
