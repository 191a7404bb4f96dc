// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The AWS Signature Version 4 signer: pure (no I/O, no Asio), time given as a parameter.
///
/// The signer signs a message, not a connection (docs/architecture.md §8.3.8):
///
///     sign(request_view, credentials, signing_params, time_point) -> result<signed_headers>
///
/// The caller adds `signed_headers::headers` (X-Amz-Security-Token, X-Amz-Date,
/// x-amz-content-sha256, Authorization, in that order) to the request it sends, and sends the
/// path as `encode_path(raw path)` and the query as `encode_query(params)` (encoding.hpp), so
/// that what is signed is what goes on the wire.
///
/// Spec: https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html and, for
/// S3, https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html.
///
/// Canonical request (task 1):
///
///     CanonicalRequest = HTTPMethod + '\n' + CanonicalURI + '\n' + CanonicalQueryString + '\n'
///                      + CanonicalHeaders + '\n' + SignedHeaders + '\n' + HashedPayload
///
/// String to sign (task 2):
///
///     "AWS4-HMAC-SHA256" + '\n' + timeStampISO8601Format + '\n'
///     + <yyyymmdd>/<region>/<service>/aws4_request + '\n' + Hex(SHA256(CanonicalRequest))
///
/// Signing key (task 3): HMAC chain "AWS4"+secret -> date -> region -> service -> "aws4_request".
/// Signature (task 4): Hex(HMAC(signing key, string to sign)).
///
/// Thread safety: every function is reentrant; a `signing_key_cache` is not thread-safe (one
/// per io_context/strand).

#include "common/types.hpp"
#include "sigv4/encoding.hpp"
#include "sigv4/error.hpp"
#include "sigv4/hash.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace iss::sigv4 {

/// The algorithm name in the Authorization header, the string to sign and X-Amz-Algorithm.
inline constexpr std::string_view algorithm = "AWS4-HMAC-SHA256";
/// Payload hash literal of `payload_mode::unsigned_payload`.
inline constexpr std::string_view unsigned_payload_literal = "UNSIGNED-PAYLOAD";
/// Payload hash literal of `payload_mode::streaming` (aws-chunked, chunked.hpp).
inline constexpr std::string_view streaming_payload_literal = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD";

/// One HTTP header as it will be sent (name in any case; value untrimmed is fine).
struct header {
    std::string_view name;
    std::string_view value;
};

/// An owned header, as produced by the signer.
struct owned_header {
    std::string name;
    std::string value;
};

/// How `request_view::path` is given.
enum class path_form {
    /// The unencoded path, e.g. "/bucket/my key+1.json" (an S3 key as the user named it).
    /// The wire path is `encode_path(path)`. S3 canonical URI = that same string.
    raw,
    /// Already percent-encoded as it will appear on the wire. S3 canonical URI = the path as
    /// given; with `double_encode_path` (generic services) it is UriEncode'd once more.
    encoded,
};

/// What the payload hash line of the canonical request holds (and `x-amz-content-sha256`).
enum class payload_mode {
    signed_payload,    ///< hex SHA-256 of the body (`request_view::payload_sha256` or computed)
    unsigned_payload,  ///< "UNSIGNED-PAYLOAD" (S3 over TLS, presigned URLs)
    streaming,         ///< "STREAMING-AWS4-HMAC-SHA256-PAYLOAD": seed signature for aws-chunked
};

/// A request to sign. Views only: the referenced strings must outlive the call.
struct request_view {
    std::string_view method;             ///< "GET", "PUT", ... (as sent, upper case)
    std::string_view path = "/";         ///< see `path_form`; must start with '/'
    path_form form = path_form::raw;     ///< be explicit: raw key path or already encoded
    std::span<const query_param> query;  ///< decoded name/value pairs, any order
    std::span<const header> headers;     ///< every header that will be sent; `Host` required
    std::string_view body;               ///< hashed when mode is signed and no hash is given
    std::string_view payload_sha256;     ///< lower-case hex SHA-256 of the body, if known
};

/// AWS credentials. The secret and the token print as `****` (common/types.hpp).
struct credentials {
    iss::access_key_id access_key_id;
    iss::secret_access_key secret_access_key;
    iss::session_token session_token;  ///< empty: no temporary credentials
};

/// How to sign: explicit, never inferred (docs/architecture.md §8.6.5). Defaults are S3's.
struct signing_params {
    std::string service = "s3";        ///< credential-scope service ("s3", "execute-api", ...)
    std::string region = "us-east-1";  ///< credential-scope region
    /// Remove dot segments and empty segments from the path before signing. S3: false
    /// ('//', '/./', '/../' are part of object keys and S3 signs them as they are).
    bool normalize_path = false;
    /// UriEncode the (wire-form) path once more for the canonical URI. S3: false (S3 signs the
    /// wire path as it is; double encoding turns `%24` into `%2524` and S3 answers
    /// SignatureDoesNotMatch). Generic AWS services: true.
    bool double_encode_path = false;
    payload_mode payload = payload_mode::signed_payload;
    /// Add and sign `x-amz-content-sha256` for `signed_payload`. S3 requires it on every
    /// header-signed request (true); the generic suite adds it only for `sign_body`. It is
    /// always added for `unsigned_payload` and `streaming`. Ignored by `presign`.
    bool add_content_sha256_header = true;
    /// Add the session token after signing, outside SignedHeaders (a few services, e.g. the
    /// suite's post-sts-header-after case, want it so). S3: false (the token is signed).
    bool omit_session_token = false;
};

/// The derived signing key: HMAC chain over date, region, service, "aws4_request". Secret
/// material: never print it (tests compare `to_hex(key.bytes)`).
struct signing_key {
    digest bytes{};
};

/// Derives the signing key (task 3). `date` is `yyyymmdd`.
[[nodiscard]] signing_key derive_signing_key(const iss::secret_access_key& secret, std::string_view date,
                                             std::string_view region, std::string_view service);

/// Caches the signing key per (secret, date, region, service): derivation costs 4 HMACs and the
/// key changes once a day. Holds the last few keys; not thread-safe.
class signing_key_cache {
public:
    /// The key for these inputs, derived on a miss.
    [[nodiscard]] const signing_key& get(const iss::secret_access_key& secret, std::string_view date,
                                         std::string_view region, std::string_view service);
    /// Number of derivations so far (tests and metrics).
    [[nodiscard]] std::uint64_t misses() const noexcept { return misses_; }
    /// Forgets every key (for example after a credentials refresh).
    void clear() noexcept;

private:
    struct entry {
        std::string secret_fingerprint;  ///< SHA-256 of the secret, not the secret itself
        std::string date, region, service;
        signing_key key;
    };
    static constexpr std::size_t capacity = 4;
    std::vector<entry> entries_;
    std::uint64_t misses_ = 0;
};

/// Result of header signing: the headers to add, plus every intermediate value for debugging.
struct signed_headers {
    /// To append to the request, in this order: X-Amz-Security-Token (if a token),
    /// X-Amz-Date, x-amz-content-sha256 (if added), Authorization.
    std::vector<owned_header> headers;
    std::string authorization;        ///< the Authorization value ("AWS4-HMAC-SHA256 Credential=...")
    std::string signature;            ///< 64 lower-case hex digits (the aws-chunked seed signature)
    std::string amz_date;             ///< "20150830T123600Z"
    std::string scope;                ///< "20150830/us-east-1/service/aws4_request"
    std::string payload_hash;         ///< the last line of the canonical request
    std::string signed_header_names;  ///< "host;x-amz-date"
    /// Task 1 and 2 outputs. Hold the session token when one is signed: redact before logging
    /// (trace level only, docs/architecture.md §8.5.2/§5.4).
    std::string canonical_request;
    std::string string_to_sign;
    signing_key key;  ///< for chunk signing (chunked.hpp); never print
};

/// Result of presigning: the X-Amz-* query parameters to append to the request's own query.
struct presigned_query {
    /// X-Amz-Algorithm, X-Amz-Credential, X-Amz-Date, X-Amz-SignedHeaders, X-Amz-Expires,
    /// X-Amz-Security-Token (if a token), X-Amz-Signature: decoded values, in this order.
    std::vector<owned_query_param> params;
    /// `params` encoded for the wire ("X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AK%2F...").
    /// Append after the request's own `encode_query(...)` with '&' (or '?' when it is empty).
    std::string query;
    std::string signature;
    std::string amz_date;
    std::string scope;
    std::string payload_hash;
    std::string signed_header_names;
    std::string canonical_request;  ///< holds the session token (redact before logging)
    std::string string_to_sign;
};

/// The request target to send on the wire for `req`: the path (encoded once with
/// `encode_path` when `req.form` is raw, as given otherwise), then `?` + `encode_query(req.query)`
/// when there is a query. This is exactly what the canonical request signs in S3 mode.
[[nodiscard]] std::string wire_target(const request_view& req);

/// The target of a presigned request: `wire_target(req)` followed by the presign parameters
/// (`?` or `&` + `p.query`). Prefix "https://" + host for a URL.
[[nodiscard]] std::string presigned_target(const request_view& req, const presigned_query& p);

/// Adapts any header container whose elements have `name_string()` and `value()` returning
/// string-like views (`boost::beast::http::fields`, without including Beast here) to the
/// signer's `header` list. The views point into `fields`, which must outlive the result.
template <class Fields>
[[nodiscard]] std::vector<header> headers_of(const Fields& fields) {
    std::vector<header> out;
    for (const auto& f : fields) {
        const auto n = f.name_string();
        const auto v = f.value();
        out.push_back({std::string_view{n.data(), n.size()}, std::string_view{v.data(), v.size()}});
    }
    return out;
}

/// "yyyymmddThhmmssZ" of `t` (UTC, truncated to seconds).
[[nodiscard]] std::string format_amz_date(std::chrono::system_clock::time_point t);

/// The canonical URI of `path` under `params` (normalisation, double encoding, path_form).
[[nodiscard]] result<std::string> canonical_uri(std::string_view path, path_form form, const signing_params& params);

/// Signs `req` with an Authorization header (header form).
/// \return the headers to add, or an error: `missing_host`, `reserved_header` (the request
///   already has Authorization, X-Amz-Date, x-amz-content-sha256 or X-Amz-Security-Token),
///   `invalid_header_name`, `invalid_path`, `invalid_payload_hash`, `missing_credentials`,
///   `invalid_scope`.
[[nodiscard]] result<signed_headers> sign(const request_view& req, const credentials& creds,
                                          const signing_params& params, std::chrono::system_clock::time_point now);
/// Same, with the signing key taken from `cache`.
[[nodiscard]] result<signed_headers> sign(const request_view& req, const credentials& creds,
                                          const signing_params& params, std::chrono::system_clock::time_point now,
                                          signing_key_cache& cache);

/// Presigns `req` (query form): signs only the request's own headers, adds X-Amz-* parameters.
/// The payload hash is `UNSIGNED-PAYLOAD` for `unsigned_payload` (what S3 presigned URLs use)
/// and the body's SHA-256 for `signed_payload`; `streaming` is `invalid_payload_mode`.
/// \param expires X-Amz-Expires, 1 s .. 604800 s (7 days), else `invalid_expiry`.
[[nodiscard]] result<presigned_query> presign(const request_view& req, const credentials& creds,
                                              const signing_params& params, std::chrono::system_clock::time_point now,
                                              std::chrono::seconds expires);
/// Same, with the signing key taken from `cache`.
[[nodiscard]] result<presigned_query> presign(const request_view& req, const credentials& creds,
                                              const signing_params& params, std::chrono::system_clock::time_point now,
                                              std::chrono::seconds expires, signing_key_cache& cache);

}  // namespace iss::sigv4
