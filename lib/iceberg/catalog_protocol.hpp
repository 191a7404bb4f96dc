// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The Iceberg REST catalog protocol without I/O: request targets, request bodies, parsing of
/// the answers, and the one table that turns an HTTP status into what the table step does
/// next. The awaitable client (catalog.hpp) sends what this builds.
///
/// Source: the REST catalog spec, apache/iceberg `open-api/rest-catalog-open-api.yaml`
/// (paths `/v1/config`, `/v1/{prefix}/namespaces`, `/v1/{prefix}/namespaces/{namespace}/tables`,
/// `/v1/{prefix}/namespaces/{namespace}/tables/{table}`, `/v1/oauth/tokens`; schemas
/// `CatalogConfig`, `LoadTableResult`, `CommitTableResponse`, `IcebergErrorResponse`,
/// `OAuthTokenResponse`).
///
/// Status classification (`classify`), per operation:
///
/// | status | meaning in the spec | `catalog_errc` | the table step |
/// | --- | --- | --- | --- |
/// | 409 on a commit | CommitFailedException: a requirement failed | `commit_conflict` | reload, decide, rebuild on the new parent |
/// | 409 on a create | AlreadyExistsException | `already_exists` | load what exists |
/// | 500, 502, 504 on a commit; 503; a timeout or a lost connection after the request went out | CommitStateUnknownException / unavailable | `unknown_outcome` (commit) or `unavailable` (others) | reload and decide; never assume either way |
/// | 429, other 5xx (not a commit) | | `unavailable` | retry with backoff |
/// | 401, 419 | NotAuthorizedException, AuthenticationTimeout | `unauthorized` | fatal: check `iceberg.catalog.auth` |
/// | 403 | ForbiddenException | `forbidden` | fatal: grant the principal access |
/// | 404 | NoSuchNamespaceException / NoSuchTableException | `not_found` | create (with `iceberg.create`) or fatal |
/// | 400, 406, other 4xx | BadRequestException, ValidationException | `bad_request` | fatal: a request we should not have sent |

#include "common/error.hpp"
#include "sigv4/signer.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace iss::iceberg {

/// How requests to the catalog are authenticated (config `iceberg.catalog.auth.type`;
/// `catalog_auth_options` in catalog.hpp).
enum class auth_kind { none, bearer, oauth2, sigv4 };

/// What a catalog call ended with when it did not succeed (see the table above).
enum class catalog_errc {
    commit_conflict = 1,  ///< 409 on a commit: the table moved (requirements failed); reload and retry
    unknown_outcome,      ///< the commit may or may not have been applied (5xx, timeout): reload and decide
    unavailable,          ///< the catalog could not answer (5xx, 429, transport): retry later
    already_exists,       ///< 409 on a create: the namespace or table exists
    not_found,            ///< 404: the namespace or table does not exist
    unauthorized,         ///< 401/419: the catalog refused the credentials (check iceberg.catalog.auth)
    forbidden,            ///< 403: the principal may not do this (grant it access)
    bad_request,          ///< 400 and other 4xx: the catalog refused the request as invalid
    bad_response,         ///< the answer is not what the spec describes
    auth_failed,          ///< no credentials to send: the token endpoint or the signer failed
    bad_uri,              ///< iceberg.catalog.uri (or a token endpoint) is not a usable URL
};

const boost::system::error_category& catalog_category() noexcept;
inline error_code make_error_code(catalog_errc e) noexcept { return {static_cast<int>(e), catalog_category()}; }

/// Whether trying again later can help (`unavailable`, `unknown_outcome`, `commit_conflict`).
[[nodiscard]] bool retryable(const error& e) noexcept;

/// A table: its namespace levels and its name (`["analytics", "iggy"]`, `"events"`).
struct table_ident {
    std::vector<std::string> ns;
    std::string name;
    /// "analytics.iggy.events" (for logs and errors).
    [[nodiscard]] std::string to_string() const;
    friend bool operator==(const table_ident&, const table_ident&) = default;
};

/// "analytics.iggy" (levels joined by '.').
[[nodiscard]] std::string namespace_string(const std::vector<std::string>& ns);
/// The namespace as one path segment: each level percent-encoded (RFC 3986 unreserved kept),
/// joined by the unit separator `%1F` (spec, parameter `namespace`).
[[nodiscard]] std::string encode_namespace(const std::vector<std::string>& ns);

/// Builds request targets under the catalog's base path and prefix.
class catalog_paths {
public:
    /// \param base_path the path of `iceberg.catalog.uri` ("" or "/iceberg"; a trailing '/' is dropped)
    /// \param prefix the catalog prefix (from `/v1/config` or `iceberg.catalog.prefix`), used as
    ///        given (it is already URL-safe as the catalog sent it); "" for none
    catalog_paths(std::string base_path, std::string prefix);
    /// `{base}/v1/config` plus `?warehouse=...` when `warehouse` is not empty.
    [[nodiscard]] std::string config(std::string_view warehouse) const;
    /// `{base}/v1/{prefix}/namespaces`
    [[nodiscard]] std::string namespaces() const;
    /// `{base}/v1/{prefix}/namespaces/{ns}/tables`
    [[nodiscard]] std::string tables(const std::vector<std::string>& ns) const;
    /// `{base}/v1/{prefix}/namespaces/{ns}/tables/{table}` (load and commit)
    [[nodiscard]] std::string table(const table_ident& t) const;
    /// `{base}/v1/oauth/tokens`, the deprecated default token endpoint (no prefix).
    [[nodiscard]] std::string oauth_tokens() const;
    [[nodiscard]] const std::string& prefix() const noexcept { return prefix_; }

private:
    [[nodiscard]] std::string v1() const;
    std::string base_;
    std::string prefix_;
};

/// `GET /v1/config` (schema CatalogConfig): the properties the server sets.
struct catalog_config {
    std::map<std::string, std::string> defaults;
    std::map<std::string, std::string> overrides;
    /// The `prefix` override, or "" when the server gives none.
    [[nodiscard]] std::string prefix() const;
};
[[nodiscard]] result<catalog_config> parse_config(std::string_view body);

/// A loaded table (schema LoadTableResult; also CommitTableResponse without `config`).
/// `metadata_json` is the `metadata` object's text as the catalog sent it, for the metadata
/// readers of this module; the fields below are read from it here.
struct loaded_table {
    std::string metadata_location;                    ///< where the catalog keeps this version's metadata file
    std::string metadata_json;                        ///< the TableMetadata object (JSON text)
    std::string table_uuid;                           ///< `table-uuid`
    std::string location;                             ///< `location`: the table's base location (`s3://bucket/wh/ns/t`)
    int format_version = 0;                           ///< `format-version`
    std::optional<std::int64_t> current_snapshot_id;  ///< nullopt: no snapshot yet (-1 or absent)
    std::map<std::string, std::string> config;        ///< per-table configuration (`config`), may be empty
};
/// Parses a LoadTableResult or CommitTableResponse. Errors: `bad_response` naming the field.
[[nodiscard]] result<loaded_table> parse_load_table(std::string_view body);

/// Body of `POST /v1/{prefix}/namespaces` (CreateNamespaceRequest, no properties).
[[nodiscard]] std::string create_namespace_body(const std::vector<std::string>& ns);

/// What a table is created with (CreateTableRequest). The JSON texts come from this module's
/// schema and partition-spec builders.
struct create_table_request {
    std::string name;                               ///< the table name
    std::string schema_json;                        ///< a Schema object (with `schema-id` and field ids)
    std::string partition_spec_json;                ///< a PartitionSpec object; "" for unpartitioned
    std::string location;                           ///< "" lets the catalog choose (under the warehouse)
    std::map<std::string, std::string> properties;  ///< table properties (may be empty)
};
/// Body of `POST .../tables`: format version 2 is asked for with `format-version` in the
/// properties unless set. Errors: `bad_request` when a JSON text does not parse.
[[nodiscard]] result<std::string> create_table_body(const create_table_request& r);

/// An OAuth2 access token (schema OAuthTokenResponse) and when to fetch the next one.
struct oauth_token {
    std::string access_token;                        ///< secret: never log it
    std::optional<std::chrono::seconds> expires_in;  ///< nullopt: the server gave none
};
[[nodiscard]] result<oauth_token> parse_oauth_token(std::string_view body);

/// The error body (IcebergErrorResponse): `{"error": {"message", "type", "code"}}`. Fields
/// missing or a body that is not JSON give empty strings.
struct error_body {
    std::string type;     ///< "CommitFailedException"
    std::string message;  ///< the server's message
};
[[nodiscard]] error_body parse_error_body(std::string_view body);

/// The operation a status is classified for (a 409 means another thing on a commit).
enum class catalog_op { config, create_namespace, load_table, create_table, commit, token };

/// The error for a non-2xx answer. `what` names the object ("table analytics.events",
/// "namespace analytics"); `uri` is the catalog's URI for the message. The message names the
/// status, the server's exception type and message, and what to check.
[[nodiscard]] error classify(catalog_op op, unsigned status, std::string_view body, std::string_view what,
                             std::string_view uri);
/// The error for a transport failure (`http::errc`, timeouts): `unknown_outcome` for a commit
/// whose request may have reached the server, `unavailable` otherwise.
[[nodiscard]] error classify_transport(catalog_op op, const error& transport, std::string_view what,
                                       std::string_view uri);

/// The SigV4 headers for one catalog request (X-Amz-Date, x-amz-content-sha256 with the
/// body's SHA-256, X-Amz-Security-Token when the credentials have one, Authorization), for
/// service `signing_name` in `region`. Generic-service rules (not S3's): the path is
/// normalised and encoded once more for the canonical URI, as the AWS SDKs sign S3 Tables
/// and Glue requests. `target` is the wire path and query; `host` the Host header.
/// Errors: `auth_failed` naming what the signer refused (never a key).
[[nodiscard]] result<std::vector<sigv4::owned_header>> sign_catalog_request(
    std::string_view method, std::string_view target, std::string_view host, std::string_view content_type,
    std::string_view body, const sigv4::credentials& creds, std::string_view signing_name, std::string_view region,
    std::chrono::system_clock::time_point now);

}  // namespace iss::iceberg

namespace boost::system {
template <>
struct is_error_code_enum<iss::iceberg::catalog_errc> : std::true_type {};
}  // namespace boost::system
