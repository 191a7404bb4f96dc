// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The credential providers and the default chain, in the AWS SDKs' order:
///
/// | step | source | what it reads |
/// | --- | --- | --- |
/// | 1 | `static` | `s3.access_key_id` / `s3.secret_access_key` / `s3.session_token` of the configuration |
/// | 2 | `env` | `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN` |
/// | 3 | `web_identity` | `AWS_WEB_IDENTITY_TOKEN_FILE`, `AWS_ROLE_ARN`, `AWS_ROLE_SESSION_NAME`: STS AssumeRoleWithWebIdentity (unsigned) |
/// | 4 | `profile` | `AWS_SHARED_CREDENTIALS_FILE` (~/.aws/credentials), `AWS_CONFIG_FILE` (~/.aws/config), `AWS_PROFILE` (default); `role_arn` + `source_profile` (or `web_identity_token_file`): STS AssumeRole signed with the source profile's keys |
/// | 5 | `container` | `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` (on http://169.254.170.2), or `AWS_CONTAINER_CREDENTIALS_FULL_URI` with `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE` or `AWS_CONTAINER_AUTHORIZATION_TOKEN` (EKS Pod Identity, ECS) |
/// | 6 | `imds` | IMDSv2 at `AWS_EC2_METADATA_SERVICE_ENDPOINT` (http://169.254.169.254): token PUT with a TTL, role name, credentials; never IMDSv1; off with `AWS_EC2_METADATA_DISABLED=true` |
///
/// The chain uses the first source that yields credentials and sticks to it for every
/// renewal. When none does, its error lists every source with the reason it gave.
/// `assume_role` wraps any of them: STS AssumeRole signed with the base credentials.
///
/// STS: https://docs.aws.amazon.com/STS/latest/APIReference/API_AssumeRole.html and
/// API_AssumeRoleWithWebIdentity.html; query API (POST form, Version 2011-06-15), the
/// endpoint `s3.sts_endpoint`, else `AWS_ENDPOINT_URL_STS`, else https://sts.REGION.amazonaws.com.
/// Files: https://docs.aws.amazon.com/sdkref/latest/guide/file-format.html.
/// Container: https://docs.aws.amazon.com/sdkref/latest/guide/feature-container-credentials.html.
/// IMDSv2: https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/configuring-instance-metadata-service.html.

#include "aws/credentials.hpp"
#include "aws/source_kind.hpp"
#include "common/clock.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <memory>
#include <string>
#include <vector>

namespace iss::http {
class client;
}

namespace iss::aws {

/// `s3.assume_role`: STS AssumeRole on top of the base credentials. Empty role_arn: none.
struct assume_role_options {
    std::string role_arn;
    std::string session_name;             ///< empty: "iggy-s3-sink-<unix time>"
    std::string external_id;              ///< empty: not sent
    std::chrono::seconds duration{3600};  ///< DurationSeconds, 900 .. 43200
};

/// Everything the providers need, resolved by the daemon.
struct chain_options {
    source_kind source = source_kind::automatic;
    sigv4::credentials static_keys;    ///< step 1 (empty access key id: not configured)
    std::string region = "us-east-1";  ///< STS region (regional endpoint, signing scope)
    std::string sts_endpoint;          ///< overrides AWS_ENDPOINT_URL_STS and the regional default
    assume_role_options assume_role;
    env_lookup env;                                 ///< the process environment (getenv) or a test's map
    std::chrono::milliseconds timeout{5'000};       ///< one STS / container request
    std::chrono::milliseconds imds_timeout{1'000};  ///< one IMDS request (not on EC2: fail fast)
};

/// Shared pieces of the network providers.
struct provider_context {
    boost::asio::any_io_executor ex;
    std::shared_ptr<http::client> http;
    const iss::clock* clk = &real_clock::instance();
    chain_options opts;

    /// The STS endpoint URL (option, env, regional default).
    [[nodiscard]] std::string sts_url() const;
    [[nodiscard]] std::optional<std::string> env(std::string_view name) const;
};

/// Step providers. Each returns `errc::not_configured` when its inputs are absent.
[[nodiscard]] std::shared_ptr<provider> make_static_provider(sigv4::credentials keys);
[[nodiscard]] std::shared_ptr<provider> make_env_provider(env_lookup env);
[[nodiscard]] std::shared_ptr<provider> make_web_identity_provider(std::shared_ptr<const provider_context> ctx);
[[nodiscard]] std::shared_ptr<provider> make_profile_provider(std::shared_ptr<const provider_context> ctx);
[[nodiscard]] std::shared_ptr<provider> make_container_provider(std::shared_ptr<const provider_context> ctx);
[[nodiscard]] std::shared_ptr<provider> make_imds_provider(std::shared_ptr<const provider_context> ctx);
/// AssumeRole with the credentials of `base`.
[[nodiscard]] std::shared_ptr<provider> make_assume_role_provider(std::shared_ptr<const provider_context> ctx,
                                                                  std::shared_ptr<provider> base,
                                                                  assume_role_options role);
/// Tries `steps` in order; sticks to the first that answers.
[[nodiscard]] std::shared_ptr<provider> make_chain(std::vector<std::shared_ptr<provider>> steps);

/// The provider `opts` asks for: the chain (or one pinned step), wrapped in AssumeRole when
/// `opts.assume_role.role_arn` is set. `http` carries STS, container and IMDS requests.
[[nodiscard]] std::shared_ptr<provider> make_provider(boost::asio::any_io_executor ex,
                                                      std::shared_ptr<http::client> http, chain_options opts,
                                                      const iss::clock& clk = real_clock::instance());

/// STS calls (shared by the providers; public for tests).
/// AssumeRoleWithWebIdentity: unsigned POST with the token.
task<result<identity>> sts_assume_role_with_web_identity(const provider_context& ctx, std::string role_arn,
                                                         std::string session_name, std::string token);
/// AssumeRole: POST signed (SigV4, service `sts`) with `base`.
task<result<identity>> sts_assume_role(const provider_context& ctx, sigv4::credentials base, assume_role_options role);

}  // namespace iss::aws
