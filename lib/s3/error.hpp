// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// S3 errors and THE classification (docs/architecture.md §8.4.6): every failed attempt (a transport error,
/// an HTTP error status with its S3 `Code`, or a 2xx whose body is an error) goes through
/// `classify()`, which answers retry, resign, fail or not_found, plus a hint naming the config
/// key or clock to check. Nothing else in lib/s3 decides whether to retry.
///
/// | outcome   | when |
/// | --------- | ---- |
/// | retry     | SlowDown, InternalError, RequestTimeout, ServiceUnavailable, OperationAborted, ConditionalRequestConflict, any 5xx (also with an empty body), 429, connection reset/EOF before or during the response, a step deadline, refused connect, DNS failure |
/// | resign    | RequestTimeTooSkewed (once; the clock offset comes from the response's Date header) |
/// | refresh   | ExpiredToken, TokenRefreshRequired: renew the credentials (once) and send again; with credentials that cannot be renewed, fail |
/// | not_found | NoSuchKey, NoSuchUpload, 404 on HEAD |
/// | fail      | everything else: AccessDenied, KMS.* (the bucket's KMS key disabled, pending deletion or not allowed), InvalidAccessKeyId, SignatureDoesNotMatch, NoSuchBucket, PermanentRedirect, AuthorizationHeaderMalformed, PreconditionFailed (412: the key exists), BadDigest, EntityTooSmall, InvalidPart, a rejected certificate, cancellation |

#include "common/error.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace iss::s3 {

/// Errors of S3 operations (after the client's retries). Transport failures that exhausted
/// the retries keep their `http::errc` code; S3 answers get one of these.
enum class errc {
    precondition_failed = 1,  ///< 412: If-None-Match: * and the key exists
    no_such_key,              ///< NoSuchKey / 404
    no_such_upload,           ///< NoSuchUpload
    no_such_bucket,           ///< NoSuchBucket
    access_denied,            ///< AccessDenied / 403
    invalid_access_key,       ///< InvalidAccessKeyId
    signature_mismatch,       ///< SignatureDoesNotMatch
    wrong_region,             ///< PermanentRedirect / AuthorizationHeaderMalformed / 301
    clock_skew,               ///< RequestTimeTooSkewed, still after one re-sign
    bad_digest,               ///< BadDigest / InvalidDigest / XAmzContentSHA256Mismatch / checksum mismatch
    entity_too_small,         ///< EntityTooSmall: a part (not the last) under 5 MiB
    invalid_part,             ///< InvalidPart / InvalidPartOrder
    bad_request,              ///< another 4xx
    unavailable,              ///< 5xx / SlowDown / InternalError... until attempts or deadline ran out
    bad_response,             ///< a 2xx whose body could not be understood
    invalid_argument,         ///< a request that cannot be built (bad bucket name, part number, metadata)
    expired_token,            ///< ExpiredToken / TokenRefreshRequired, still after one credentials renewal
    kms_refused,              ///< KMS.DisabledException, KMS.KMSInvalidStateException, KMS.NotFoundException ...
};

const boost::system::error_category& s3_category() noexcept;
inline error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), s3_category()}; }

/// What to do after a failed attempt.
enum class outcome : std::uint8_t { retry, resign, fail, not_found, refresh };
[[nodiscard]] std::string_view to_string(outcome o) noexcept;

/// One failed attempt, as seen by the classifier: either a transport error, or a response
/// status with the S3 error code from its body (empty when the body had none).
struct failure {
    error_code transport;   ///< set for transport errors (http::errc, asio errors)
    unsigned status = 0;    ///< HTTP status when a response arrived
    std::string_view code;  ///< S3 `<Code>`, or "" (a HEAD answer, an empty body)
};

/// The verdict: what to do, the error to report if it is final, and what to check.
struct verdict {
    outcome what = outcome::fail;
    errc code = errc::bad_request;  ///< meaningful for S3 answers (not transport errors)
    std::string_view hint;          ///< "check s3.secret_access_key ..." or ""
};

/// THE classification function (one table, unit-tested in tests/unit/s3/error_test.cpp).
[[nodiscard]] verdict classify(const failure& f) noexcept;

/// How a caller (the pipeline's store adapter) should treat a final error of an operation.
enum class status : std::uint8_t {
    ok,
    exists,     ///< 412 on a conditional write: the key already exists
    not_found,  ///< NoSuchKey, NoSuchUpload, 404
    retryable,  ///< gave up within the budget (5xx, transport, deadline): a later try may work
    fatal,      ///< operator action needed (credentials, bucket, region, certificate, bad request)
};
[[nodiscard]] std::string_view to_string(status s) noexcept;
/// The status of a final error returned by `s3::client`.
/// @throws boost::system::system_error operation_aborted for a cancellation, which is not a
///   final error (docs/architecture.md §8.4.5).
[[nodiscard]] status status_of(const error& e);
/// Why a request got no answer from the store (`iggy_s3_sink_s3_connection_errors_total{reason}`,
/// the `store: unreachable: REASON` line of /readyz): `resolve` (DNS lookup failed),
/// `connect` (TCP connect refused or unreachable), `timeout` (a step's deadline passed:
/// s3.timeouts.connect for resolve, connect and handshake, s3.timeouts.request for each write
/// and read; a silently dropped connection ends so), `connection_closed` (reset or closed before
/// or during the response), `tls_certificate` (the certificate did not verify: expired, not yet
/// valid, untrusted), `tls_name` (it does not match the endpoint's host name), `tls_handshake`
/// (any other TLS failure), `other`. From the transport error an `http::client` returned.
[[nodiscard]] std::string_view connection_error_reason(const error& e) noexcept;
/// Every reason `connection_error_reason` gives, in a fixed order (metrics show each, from 0).
inline constexpr std::array<std::string_view, 8> connection_error_reasons{
    "resolve", "connect", "timeout", "connection_closed", "tls_certificate", "tls_name", "tls_handshake", "other"};

/// The store's answer in a final error returned by `s3::client`: the S3 `<Code>`
/// (`AccessDenied`, `KMS.DisabledException` ...), or the HTTP status ("403") when the answer
/// had no error body (a HEAD), or "" when no answer came (a transport error). Read back from
/// the detail the client writes (client.cpp: `OPERATION BUCKET/KEY: HTTP STATUS[ CODE][: ...]`).
[[nodiscard]] std::string answer_code(const error& e);

}  // namespace iss::s3

namespace boost::system {
template <>
struct is_error_code_enum<iss::s3::errc> : std::true_type {};
}  // namespace boost::system
