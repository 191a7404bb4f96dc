// SPDX-License-Identifier: Apache-2.0
#include "s3/error.hpp"

#include "http/types.hpp"

#include <boost/asio/error.hpp>

#include "catch2_compat.hpp"
#include <fmt/format.h>

#include <string_view>
#include <utility>
#include <vector>

using namespace iss;
using s3::outcome;

namespace {
s3::verdict answer(unsigned status, std::string_view code) {
    s3::failure f;
    f.status = status;
    f.code = code;
    return s3::classify(f);
}
s3::verdict transport(http::errc e) {
    s3::failure f;
    f.transport = make_error_code(e);
    return s3::classify(f);
}
}  // namespace

TEST_CASE("throttling and server errors are retried", "[s3][classify]") {
    CHECK(answer(503, "SlowDown").what == outcome::retry);
    CHECK(answer(500, "InternalError").what == outcome::retry);
    CHECK(answer(400, "RequestTimeout").what == outcome::retry);
    CHECK(answer(503, "ServiceUnavailable").what == outcome::retry);
    CHECK(answer(500, "").what == outcome::retry);  // 5xx with an empty body
    CHECK(answer(502, "").what == outcome::retry);
    CHECK(answer(429, "").what == outcome::retry);
    CHECK(answer(409, "OperationAborted").what == outcome::retry);
}

TEST_CASE("transport failures are retried except certificate and URL problems", "[s3][classify]") {
    CHECK(transport(http::errc::closed_before_response).what == outcome::retry);
    CHECK(transport(http::errc::truncated_response).what == outcome::retry);
    CHECK(transport(http::errc::timeout).what == outcome::retry);
    CHECK(transport(http::errc::connect_failed).what == outcome::retry);
    CHECK(transport(http::errc::resolve_failed).what == outcome::retry);
    CHECK(transport(http::errc::write_failed).what == outcome::retry);
    CHECK(transport(http::errc::certificate_rejected).what == outcome::fail);
    CHECK(transport(http::errc::invalid_url).what == outcome::fail);
    s3::failure f;
    f.transport = boost::asio::error::operation_aborted;
    CHECK(s3::classify(f).what == outcome::fail);  // cancellation is never retried
}

TEST_CASE("clock skew re-signs", "[s3][classify]") {
    auto v = answer(403, "RequestTimeTooSkewed");
    CHECK(v.what == outcome::resign);
    CHECK(v.code == s3::errc::clock_skew);
    CHECK_FALSE(v.hint.empty());
}

TEST_CASE("auth, permission and bucket errors fail at once and name what to check", "[s3][classify]") {
    auto a = answer(403, "SignatureDoesNotMatch");
    CHECK(a.what == outcome::fail);
    CHECK(a.code == s3::errc::signature_mismatch);
    CHECK(std::string{a.hint}.find("s3.secret_access_key") != std::string::npos);
    auto b = answer(403, "InvalidAccessKeyId");
    CHECK(b.code == s3::errc::invalid_access_key);
    CHECK(std::string{b.hint}.find("s3.access_key_id") != std::string::npos);
    CHECK(answer(403, "AccessDenied").code == s3::errc::access_denied);
    auto nb = answer(404, "NoSuchBucket");
    CHECK(nb.what == outcome::fail);
    CHECK(std::string{nb.hint}.find("s3.bucket") != std::string::npos);
    CHECK(answer(301, "PermanentRedirect").code == s3::errc::wrong_region);
    CHECK(answer(400, "AuthorizationHeaderMalformed").code == s3::errc::wrong_region);
    CHECK(answer(403, "").what == outcome::fail);  // HEAD: status alone
}

TEST_CASE("missing keys and uploads are not_found; 412 is its own failure", "[s3][classify]") {
    CHECK(answer(404, "NoSuchKey").what == outcome::not_found);
    CHECK(answer(404, "NoSuchUpload").what == outcome::not_found);
    CHECK(answer(404, "").what == outcome::not_found);
    auto p = answer(412, "PreconditionFailed");
    CHECK(p.what == outcome::fail);
    CHECK(p.code == s3::errc::precondition_failed);
    CHECK(answer(412, "").code == s3::errc::precondition_failed);
    CHECK(answer(400, "EntityTooSmall").code == s3::errc::entity_too_small);
    CHECK(answer(400, "BadDigest").code == s3::errc::bad_digest);
    CHECK(answer(400, "InvalidPart").code == s3::errc::invalid_part);
}

TEST_CASE("status_of maps final errors for callers", "[s3][classify]") {
    CHECK(s3::status_of(error{s3::errc::precondition_failed}) == s3::status::exists);
    CHECK(s3::status_of(error{s3::errc::no_such_key}) == s3::status::not_found);
    CHECK(s3::status_of(error{s3::errc::no_such_upload}) == s3::status::not_found);
    CHECK(s3::status_of(error{s3::errc::unavailable}) == s3::status::retryable);
    CHECK(s3::status_of(error{http::errc::timeout}) == s3::status::retryable);
    CHECK(s3::status_of(error{http::errc::certificate_rejected}) == s3::status::fatal);
    CHECK(s3::status_of(error{s3::errc::signature_mismatch}) == s3::status::fatal);
    // a cancellation is thrown, never a status (docs/architecture.md §8.4.5)
    CHECK_THROWS_AS(s3::status_of(error{boost::asio::error::operation_aborted}), boost::system::system_error);
}

TEST_CASE("SSE-KMS refusals fail at once, name the key to check, and are fatal to callers", "[s3][classify]") {
    for (const auto code : {"KMS.DisabledException", "KMS.KMSInvalidStateException", "KMS.NotFoundException"}) {
        const auto v = answer(400, code);
        CHECK(v.what == outcome::fail);
        CHECK(v.code == s3::errc::kms_refused);
        CHECK_THAT(std::string{v.hint}, Catch::Matchers::ContainsSubstring("KMS key"));
    }
    CHECK(s3::status_of(error{s3::errc::kms_refused}) == s3::status::fatal);
    // A missing kms:GenerateDataKey permission is S3's plain AccessDenied.
    CHECK(answer(403, "AccessDenied").code == s3::errc::access_denied);
}

TEST_CASE("answer_code reads the store's code back from the client's error detail", "[s3][classify]") {
    using s3::answer_code;
    CHECK(
        answer_code(error{s3::errc::access_denied,
                          "PutObject b/k: HTTP 403 AccessDenied: Access Denied (request id r1, attempt 1/3); check"}) ==
        "AccessDenied");
    CHECK(answer_code(error{s3::errc::kms_refused,
                            "PutObject b/k: HTTP 400 KMS.DisabledException: The request was "
                            "rejected (request id -, attempt 1/3)"}) == "KMS.DisabledException");
    CHECK(answer_code(error{s3::errc::access_denied, "HeadObject b/k: HTTP 403 (request id -, attempt 1/1)"}) == "403");
    CHECK(answer_code(error{http::errc::timeout, "PutObject b/k: timed out (attempt 3/3)"}).empty());
}

TEST_CASE("connection_error_reason names why no answer came, the TLS name apart", "[s3][classify]") {
    using s3::connection_error_reason;
    CHECK(connection_error_reason(error{http::errc::resolve_failed, "s3.example: Host not found"}) == "resolve");
    CHECK(connection_error_reason(error{http::errc::connect_failed, "127.0.0.1:9: Connection refused"}) == "connect");
    CHECK(connection_error_reason(error{http::errc::timeout, "read from http://h:1 timed out"}) == "timeout");
    CHECK(connection_error_reason(error{http::errc::closed_before_response, "h: end of stream"}) ==
          "connection_closed");
    CHECK(connection_error_reason(error{http::errc::certificate_rejected, "https://h:1: certificate has expired"}) ==
          "tls_certificate");
    CHECK(connection_error_reason(error{http::errc::certificate_rejected, "https://h:1: hostname mismatch"}) ==
          "tls_name");
    CHECK(connection_error_reason(error{http::errc::tls_handshake_failed, "https://h:1: wrong version number"}) ==
          "tls_handshake");
    CHECK(connection_error_reason(error{s3::errc::unavailable, "?"}) == "other");
    for (const auto r : s3::connection_error_reasons) CHECK_FALSE(r.empty());
}

TEST_CASE("an answer's advice is said once: in its hint, not again in its code's message", "[s3][classify]") {
    for (const auto& [status, code] : std::vector<std::pair<unsigned, std::string_view>>{{403, "SignatureDoesNotMatch"},
                                                                                         {403, "InvalidAccessKeyId"},
                                                                                         {403, "AccessDenied"},
                                                                                         {403, ""},
                                                                                         {404, "NoSuchBucket"},
                                                                                         {301, "PermanentRedirect"},
                                                                                         {403, "RequestTimeTooSkewed"},
                                                                                         {400, "ExpiredToken"},
                                                                                         {400, "KMS.DisabledException"},
                                                                                         {400, "BadDigest"},
                                                                                         {400, "EntityTooSmall"}}) {
        const auto v = answer(status, code);
        INFO(status << " " << code << ": " << make_error_code(v.code).message());
        CHECK_FALSE(v.hint.empty());
        const auto text = error{v.code, fmt::format("Op b/k: HTTP {} {}; {}", status, code, v.hint)}.message();
        CHECK(text.find("check ") == text.rfind("check "));  // one piece of advice
    }
}
