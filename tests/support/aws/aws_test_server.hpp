// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// A loopback test double of the AWS credential endpoints (tests only): one HTTP/1.1 server
/// on 127.0.0.1:0 that answers as
///
/// - IMDSv2: `PUT /latest/api/token` (requires `X-aws-ec2-metadata-token-ttl-seconds`,
///   1..21600), `GET /latest/meta-data/iam/security-credentials/[ROLE]` (requires the token
///   it handed out in `X-aws-ec2-metadata-token`; a GET without it is an IMDSv1 attempt: 401
///   and a violation);
/// - the container endpoint: `GET /container/...` (requires `Authorization` to equal the
///   configured token);
/// - STS: `POST /` with a form body: `AssumeRoleWithWebIdentity` (must carry no signature;
///   checks the token, RoleArn, RoleSessionName, Version) and `AssumeRole` (its SigV4
///   signature is verified with lib/sigv4 against the base keys or any live key it issued;
///   checks RoleArn, RoleSessionName, DurationSeconds, ExternalId);
/// - an S3 front for every other request: verifies the SigV4 signature against the keys it
///   issued (an expired key gets 400 `ExpiredToken`, as AWS answers), then re-signs the
///   request with the upstream's own keys and forwards it (RGW only knows its own keys), or
///   answers 200 when there is no upstream.
///
/// Every issued credential lives `lifetime`, so a client must refresh. What the server saw
/// that a correct client never sends is recorded in `violations()`.
/// Runs on the given executor; not thread-safe beyond it.

#include "http/types.hpp"
#include "sigv4/signer.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace iss::test {

/// Counters, readable at any time.
struct aws_server_stats {
    unsigned imds_tokens = 0;       ///< IMDSv2 token PUTs answered
    unsigned issued = 0;            ///< credentials handed out (all endpoints)
    unsigned web_identity = 0;      ///< AssumeRoleWithWebIdentity answered
    unsigned assume_role = 0;       ///< AssumeRole answered
    unsigned container = 0;         ///< container credentials answered
    unsigned imds = 0;              ///< IMDS credentials answered
    unsigned s3_ok = 0;             ///< S3 requests with a valid live key (forwarded)
    unsigned s3_expired = 0;        ///< S3 requests signed with an expired key (answered ExpiredToken)
    unsigned s3_bad_signature = 0;  ///< S3 requests with an unknown key or a wrong signature
};

class aws_test_server {
public:
    explicit aws_test_server(boost::asio::any_io_executor ex);
    ~aws_test_server();
    aws_test_server(const aws_test_server&) = delete;
    aws_test_server& operator=(const aws_test_server&) = delete;

    [[nodiscard]] std::uint16_t port() const;
    [[nodiscard]] std::string url() const;  ///< http://127.0.0.1:PORT

    /// How long every issued credential is valid (default 3600 s).
    void set_lifetime(std::chrono::milliseconds d);
    void set_container_token(std::string t);     ///< required Authorization of the container endpoint
    void set_web_identity_token(std::string t);  ///< the token AssumeRoleWithWebIdentity must carry
    void set_imds_role(std::string r);           ///< the instance profile role name ("" = none: 404)
    /// Keys AssumeRole requests may be signed with (besides any live key issued here).
    void add_base_keys(sigv4::credentials k);
    /// The ExternalId AssumeRole must carry ("" = must carry none).
    void set_external_id(std::string e);
    /// Forward S3 requests to `upstream`, re-signed with `keys` (RGW's own).
    void set_upstream(http::endpoint upstream, sigv4::credentials keys, std::string region);
    /// The next `times` requests whose path starts with `prefix` get `status` (500: transient).
    void fail_next(std::string prefix, unsigned status, unsigned times);
    /// Every key issued so far expires now (the client still believes them valid).
    void expire_all();

    [[nodiscard]] const aws_server_stats& stats() const;
    /// Everything a correct client never does, one line each (empty when all was right).
    [[nodiscard]] const std::vector<std::string>& violations() const;
    /// Every secret and token handed out so far (for tests that grep logs for them).
    [[nodiscard]] std::vector<std::string> secrets_issued() const;
    /// Every (method, target) seen, in order.
    [[nodiscard]] const std::vector<std::pair<std::string, std::string>>& requests() const;
    void stop();

private:
    struct impl;
    std::shared_ptr<impl> impl_;
};

}  // namespace iss::test
