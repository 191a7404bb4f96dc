// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The Iceberg REST catalog client: the awaitable side of catalog_protocol.hpp, over the
/// project's HTTP client (lib/http), so TLS, proxies, the connection pool and the per-step
/// deadlines are the ones every other remote call uses.
///
/// Calls (REST spec, apache/iceberg open-api/rest-catalog-open-api.yaml):
/// - `connect()`: `GET /v1/config?warehouse=...`; the prefix is the server's `prefix`
///   override unless `iceberg.catalog.prefix` is set.
/// - `create_namespace`, `load_table`, `create_table`, `ensure_table` (load; when missing and
///   allowed, create the namespace and the table; a concurrent creator's table is loaded).
/// - `commit(table, body)`: `POST /v1/{prefix}/namespaces/{ns}/tables/{table}` with a
///   CommitTableRequest; the answer is the new metadata. A 409 is `commit_conflict`; a 5xx,
///   a timeout or a connection lost after sending is `unknown_outcome` (the table step reloads
///   and decides: catalog_protocol.hpp has the whole table). lib/http sends a request once
///   more when a pooled keep-alive connection turns out closed before any answer byte; when
///   the first send was applied after all, the second meets a 409: a commit's
///   `commit_conflict` therefore also means "reload and decide", never "it was not applied".
///
/// Authentication (`iceberg.catalog.auth`):
/// - `none`;
/// - `bearer`: `Authorization: Bearer <token>`;
/// - `oauth2`: the client credentials grant (RFC 6749 §4.4) against `token_endpoint` (default
///   the catalog's `/v1/oauth/tokens`), form body `grant_type=client_credentials`, `client_id`,
///   `client_secret`, `scope`; the token is fetched before first use, fetched again when less than
///   a tenth of its lifetime (at most 60 s) is left, and once more after a 401;
/// - `sigv4`: each request signed with SigV4 (lib/sigv4) for `signing_name` (`s3tables` for
///   AWS S3 Tables, `glue` for the Glue Iceberg endpoint) in `signing_region`, with the
///   credentials of the S3 credential chain (lib/aws), the body's SHA-256 in
///   `x-amz-content-sha256`, the path normalised and encoded twice as non-S3 services expect.
///
/// Secrets (bearer token, client secret, access tokens, AWS keys) are never in logs or in
/// errors: the messages name the operation, the object, the HTTP status and the server's
/// exception type and message.
///
/// Lifecycle: create on the daemon's executor; the `http::client` and the credentials source
/// outlive it. Calls may overlap (token renewal is shared through one async_mutex).

#include "aws/credentials.hpp"
#include "common/clock.hpp"
#include "common/types.hpp"
#include "iceberg/catalog_protocol.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace iss::http {
class client;
}

namespace iss::iceberg {

template <class T>
using task = boost::asio::awaitable<T>;

/// A catalog bearer token or OAuth2 client secret: prints as `****`.
using catalog_secret = secret<struct catalog_secret_tag>;

/// `iceberg.catalog.auth`.
struct catalog_auth_options {
    auth_kind kind = auth_kind::none;
    catalog_secret token;                   ///< bearer: the token
    std::string client_id;                  ///< oauth2
    catalog_secret client_secret;           ///< oauth2
    std::string token_endpoint;             ///< oauth2: absolute URL; "" = the catalog's /v1/oauth/tokens
    std::string scope = "catalog";          ///< oauth2: the scope asked for
    std::string signing_name = "s3tables";  ///< sigv4: the service name in the credential scope
    std::string signing_region;             ///< sigv4: the region in the credential scope
    /// sigv4: the S3 credential chain's source (shared with the S3 client).
    std::shared_ptr<aws::credentials_source> credentials;
};

/// `iceberg.catalog`.
struct catalog_options {
    std::string uri;        ///< `http[s]://host[:port][/base]`, e.g. `https://s3tables.us-east-1.amazonaws.com/iceberg`
    std::string warehouse;  ///< sent to /v1/config (S3 Tables: the table bucket ARN); may be ""
    std::string prefix;     ///< "" = the server's `prefix` override
    catalog_auth_options auth;
    /// Budget of one request, every step included (resolve .. last body byte). Past it a
    /// commit's outcome is unknown.
    std::chrono::milliseconds request_timeout{30'000};
};

/// Counters for tests and metrics.
struct catalog_stats {
    std::uint64_t requests = 0;       ///< requests sent to the catalog (token requests included)
    std::uint64_t token_fetches = 0;  ///< OAuth2 tokens obtained
};

/// The REST catalog client.
class catalog_client {
public:
    /// \param ex the executor the calls run on (the token renewal's lock waits on it)
    /// \param http the project's HTTP client (outlives this)
    /// \param clk the injected clock: token expiry and SigV4 dates
    catalog_client(boost::asio::any_io_executor ex, http::client& http, catalog_options opts, const iss::clock& clk);
    ~catalog_client();
    catalog_client(const catalog_client&) = delete;
    catalog_client& operator=(const catalog_client&) = delete;

    /// `GET /v1/config`: learns the prefix. Call once before the others (they use the
    /// configured prefix until then). Errors: `catalog_errc` values, `bad_uri`.
    task<result<catalog_config>> connect();
    /// Creates a namespace. `already_exists` when it exists.
    task<result<void>> create_namespace(std::vector<std::string> ns);
    /// Loads a table (its current metadata). `not_found` when it does not exist.
    task<result<loaded_table>> load_table(table_ident t);
    /// Creates a table in namespace `ns`. `already_exists` when it exists.
    task<result<loaded_table>> create_table(std::vector<std::string> ns, create_table_request r);
    /// Loads `t`; when it does not exist and `create` is set, creates its namespace (an
    /// existing one is fine) and the table from `r` (a table created meanwhile by someone
    /// else is loaded instead). Without `create`, `not_found` says to create it or set
    /// iceberg.create.
    task<result<loaded_table>> ensure_table(table_ident t, create_table_request r, bool create);
    /// Commits a CommitTableRequest (`body`, JSON) to `t`; the answer is the new metadata.
    /// Errors: `commit_conflict`, `unknown_outcome`, `not_found`, `unauthorized`, `forbidden`,
    /// `bad_request`, `bad_response`, `auth_failed`.
    task<result<loaded_table>> commit(table_ident t, std::string body);

    /// The prefix in use.
    [[nodiscard]] const std::string& prefix() const noexcept;
    [[nodiscard]] const catalog_options& options() const noexcept;
    [[nodiscard]] catalog_stats stats() const noexcept;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace iss::iceberg
