#pragma once
/// \file
/// `s3.*` of the configuration -> s3::client_options, once (docs/architecture.md §8.6.4). Pure: no I/O.

#include "aws/providers.hpp"
#include "config/config.hpp"
#include "s3/request.hpp"

namespace iss::app {

/// Maps the `s3` section: endpoint, region, path style, credentials (the config already fell
/// back to AWS_* variables), TLS, part size, checksum, payload signing, timeouts, retry.
[[nodiscard]] s3::client_options s3_options(const config::sink_config& c);

/// The credentials chain's options: `s3.credentials.source`, the static keys (left to the
/// chain's `env` step when the loader took them from AWS_* variables), `s3.assume_role`,
/// `s3.sts_endpoint`, the region and the timeouts; `env` is the process environment.
[[nodiscard]] aws::chain_options credentials_options(const config::sink_config& c, aws::env_lookup env);

/// The proxy for S3 and STS: `s3.proxy` for both schemes, else HTTPS_PROXY / HTTP_PROXY (or
/// their lower-case forms); NO_PROXY (or no_proxy) in both cases.
[[nodiscard]] http::proxy_options proxy_options(const config::sink_config& c, const aws::env_lookup& env);

}  // namespace iss::app
