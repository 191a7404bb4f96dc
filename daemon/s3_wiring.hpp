#pragma once
/// \file
/// `s3.*` of the configuration -> s3::client_options, once (style.md §6.4). Pure: no I/O.

#include "config/config.hpp"
#include "s3/request.hpp"

namespace iss::app {

/// Maps the `s3` section: endpoint, region, path style, credentials (the config already fell
/// back to AWS_* variables), TLS, part size, checksum, payload signing, timeouts, retry.
[[nodiscard]] s3::client_options s3_options(const config::sink_config& c);

}  // namespace iss::app
