// SPDX-License-Identifier: Apache-2.0
#include "s3/error.hpp"

#include "http/types.hpp"

#include <boost/asio/error.hpp>
#include <boost/system/system_error.hpp>

namespace iss::s3 {

namespace {
const char* s3_message(int ev) noexcept {
    switch (static_cast<errc>(ev)) {
        case errc::precondition_failed: return "precondition failed (412): the object already exists";
        case errc::no_such_key: return "no such key";
        case errc::no_such_upload: return "no such multipart upload";
        case errc::no_such_bucket: return "no such bucket";
        case errc::access_denied: return "access denied";
        case errc::invalid_access_key: return "unknown access key";
        case errc::signature_mismatch: return "signature does not match";
        case errc::wrong_region: return "wrong region or endpoint for this bucket";
        case errc::clock_skew: return "request time too skewed";
        case errc::bad_digest: return "the body does not match its checksum";
        case errc::entity_too_small: return "part too small";
        case errc::invalid_part: return "invalid part list for CompleteMultipartUpload";
        case errc::bad_request: return "request refused by the store";
        case errc::unavailable: return "store unavailable (retries exhausted)";
        case errc::bad_response: return "unexpected response body";
        case errc::invalid_argument: return "invalid request argument";
        case errc::expired_token: return "the store says the credentials expired";
        case errc::kms_refused: return "the bucket's KMS key refused the request";
    }
    return nullptr;
}

bool is(std::string_view a, std::string_view b) noexcept { return a == b; }
}  // namespace

const boost::system::error_category& s3_category() noexcept {
    static const simple_category cat{"s3", s3_message};
    return cat;
}

std::string_view to_string(outcome o) noexcept {
    switch (o) {
        case outcome::retry: return "retry";
        case outcome::resign: return "resign";
        case outcome::fail: return "fail";
        case outcome::not_found: return "not_found";
        case outcome::refresh: return "refresh";
    }
    return "?";
}

std::string_view to_string(status s) noexcept {
    switch (s) {
        case status::ok: return "ok";
        case status::exists: return "exists";
        case status::not_found: return "not_found";
        case status::retryable: return "retryable";
        case status::fatal: return "fatal";
    }
    return "?";
}

verdict classify(const failure& f) noexcept {
    using o = outcome;
    if (f.transport) {
        const auto& ec = f.transport;
        if (ec == boost::asio::error::operation_aborted) return {o::fail, errc::bad_request, "cancelled"};
        if (ec == http::errc::certificate_rejected || ec == http::errc::tls_setup_failed)
            return {o::fail, errc::bad_request,
                    "check s3.tls.ca_file and that s3.endpoint's host matches the certificate"};
        if (ec == http::errc::invalid_url) return {o::fail, errc::invalid_argument, "check s3.endpoint"};
        // resets, EOF before/inside the response, step deadlines, refused connects, DNS: transient.
        return {o::retry, errc::unavailable, ""};
    }
    const auto c = f.code;
    // Throttling and server trouble: retry (docs/architecture.md §8.4.6).
    if (is(c, "SlowDown") || is(c, "InternalError") || is(c, "RequestTimeout") || is(c, "ServiceUnavailable") ||
        is(c, "OperationAborted") || is(c, "ConditionalRequestConflict") || is(c, "RequestTimeoutException") ||
        is(c, "TooManyRequests") || f.status >= 500 || f.status == 429)
        return {o::retry, errc::unavailable, ""};
    if (is(c, "RequestTimeTooSkewed")) return {o::resign, errc::clock_skew, "check the system clock (NTP)"};
    if (is(c, "NoSuchKey")) return {o::not_found, errc::no_such_key, ""};
    if (is(c, "NoSuchUpload")) return {o::not_found, errc::no_such_upload, ""};
    if (is(c, "NoSuchBucket")) return {o::fail, errc::no_such_bucket, "check s3.bucket"};
    if (is(c, "InvalidAccessKeyId")) return {o::fail, errc::invalid_access_key, "check s3.access_key_id"};
    if (is(c, "SignatureDoesNotMatch"))
        return {o::fail, errc::signature_mismatch, "check s3.secret_access_key (and that no proxy rewrites requests)"};
    if (is(c, "ExpiredToken") || is(c, "TokenRefreshRequired"))
        return {o::refresh, errc::expired_token, "check s3.credentials.source"};
    // SSE-KMS: S3 answers with the KMS error prefixed (KMS.DisabledException,
    // KMS.KMSInvalidStateException, KMS.NotFoundException; 400); a missing kms:GenerateDataKey
    // permission is a plain AccessDenied (below).
    if (c.starts_with("KMS."))
        return {o::fail, errc::kms_refused,
                "check the bucket's KMS key: enabled, not pending deletion, and kms:GenerateDataKey allowed for these "
                "credentials"};
    if (is(c, "AccessDenied") || is(c, "AllAccessDisabled") || is(c, "AccountProblem") || is(c, "InvalidToken"))
        return {o::fail, errc::access_denied, "check the credentials' permissions on s3.bucket (and s3.session_token)"};
    if (is(c, "PermanentRedirect") || is(c, "AuthorizationHeaderMalformed") ||
        is(c, "IllegalLocationConstraintException") || f.status == 301 || f.status == 307)
        return {o::fail, errc::wrong_region, "check s3.region and s3.endpoint"};
    if (is(c, "PreconditionFailed") || f.status == 412) return {o::fail, errc::precondition_failed, ""};
    if (is(c, "BadDigest") || is(c, "InvalidDigest") || is(c, "XAmzContentSHA256Mismatch") || is(c, "InvalidChecksum"))
        return {o::fail, errc::bad_digest,
                "the body was corrupted in transit (or s3.checksum disagrees with the store)"};
    if (is(c, "EntityTooSmall")) return {o::fail, errc::entity_too_small, "check s3.part_size (>= 5 MiB)"};
    if (is(c, "InvalidPart") || is(c, "InvalidPartOrder")) return {o::fail, errc::invalid_part, ""};
    // A bare status (a HEAD answer has no body): 404 is a missing key, 403 a refusal.
    if (f.status == 404) return {o::not_found, errc::no_such_key, ""};
    if (f.status == 403)
        return {o::fail, errc::access_denied,
                "check s3.access_key_id, s3.secret_access_key and the permissions on s3.bucket"};
    return {o::fail, errc::bad_request, ""};
}

status status_of(const error& e) {
    const auto& ec = e.code();
    if (!ec) return status::ok;
    // A cancellation is not a final error: thrown, as every call of the client does (§8.4.5).
    if (ec == boost::asio::error::operation_aborted) throw boost::system::system_error{ec};
    if (ec.category() == s3_category()) {
        switch (static_cast<errc>(ec.value())) {
            case errc::precondition_failed: return status::exists;
            case errc::no_such_key:
            case errc::no_such_upload: return status::not_found;
            case errc::unavailable:
            case errc::bad_response: return status::retryable;
            default: return status::fatal;
        }
    }
    if (ec.category() == http::http_category()) {
        if (ec == http::errc::certificate_rejected || ec == http::errc::tls_setup_failed ||
            ec == http::errc::invalid_url)
            return status::fatal;
        return status::retryable;
    }
    if (ec == iss::errc::timeout) return status::retryable;
    return status::fatal;
}

std::string_view connection_error_reason(const error& e) noexcept {
    const auto& ec = e.code();
    if (ec.category() != http::http_category()) return ec == iss::errc::timeout ? "timeout" : "other";
    switch (static_cast<http::errc>(ec.value())) {
        case http::errc::resolve_failed: return "resolve";
        case http::errc::connect_failed: return "connect";
        case http::errc::timeout: return "timeout";
        case http::errc::closed_before_response:
        case http::errc::truncated_response:
        case http::errc::write_failed: return "connection_closed";
        case http::errc::certificate_rejected:
            // OpenSSL's verify reason for a name the certificate does not carry (lib/common/net/connect.cpp).
            return e.detail().find("hostname mismatch") != std::string::npos ||
                           e.detail().find("IP address mismatch") != std::string::npos
                       ? "tls_name"
                       : "tls_certificate";
        case http::errc::tls_handshake_failed:
        case http::errc::tls_setup_failed: return "tls_handshake";
        default: return "other";
    }
}

std::string answer_code(const error& e) {
    const std::string& d = e.detail();
    const auto at = d.find(": HTTP ");
    if (at == std::string::npos) return {};
    std::size_t i = at + 7;
    const std::size_t digits = i;
    while (i < d.size() && d[i] >= '0' && d[i] <= '9') ++i;
    if (i == digits) return {};
    const std::string status = d.substr(digits, i - digits);
    if (i >= d.size() || d[i] != ' ') return status;
    const std::size_t start = ++i;
    while (i < d.size() && d[i] != ':' && d[i] != ' ') ++i;
    // "(request id ..." follows a status without a code
    if (i == start || d[start] == '(') return status;
    return d.substr(start, i - start);
}

}  // namespace iss::s3
