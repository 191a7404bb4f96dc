// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// `s3.*` of the configuration -> s3::client_options, once (docs/architecture.md §8.6.4). Pure: no I/O.

#include "aws/providers.hpp"
#include "config/config.hpp"
#include "s3/probe.hpp"
#include "s3/request.hpp"

#include <string>
#include <string_view>

namespace iss::app {

/// Maps the `s3` section: endpoint, region, path style, credentials (the config already fell
/// back to AWS_* variables), TLS, part size, checksum, payload signing, timeouts, retry.
[[nodiscard]] s3::client_options s3_options(const config::sink_config& c);

/// The start-up log's account of `s3.checksum`: the checksum uploads carry and why, given
/// the probe's CRC-32C answer (`crc32c_verified`, with `detail` when it is not `yes`), e.g.
/// "auto: crc32c (the store refused a wrong x-amz-checksum-crc32c)", "auto: md5 (PutObject
/// with a wrong ... answered 200 ...)" or "md5 (set in the configuration)".
[[nodiscard]] std::string describe_checksum(const config::sink_config& c, s3::capability crc32c_verified,
                                            std::string_view detail);

/// The start-up log's account of `s3.payload_signing`: what `x-amz-content-sha256` carries
/// and why, e.g. "auto: UNSIGNED-PAYLOAD (https endpoint: TLS and the body checksum protect
/// the body)" or "auto: signed (plain http endpoint: ...)".
[[nodiscard]] std::string describe_payload_signing(const config::sink_config& c);

/// The credentials chain's options: `s3.credentials.source`, the static keys (left to the
/// chain's `env` step when the loader took them from AWS_* variables), `s3.assume_role`,
/// `s3.sts_endpoint`, the region and the timeouts; `env` is the process environment.
[[nodiscard]] aws::chain_options credentials_options(const config::sink_config& c, aws::env_lookup env);

/// The proxy for S3 and STS: `s3.proxy` for both schemes, else HTTPS_PROXY / HTTP_PROXY (or
/// their lower-case forms); NO_PROXY (or no_proxy) in both cases.
[[nodiscard]] http::proxy_options proxy_options(const config::sink_config& c, const aws::env_lookup& env);

}  // namespace iss::app
