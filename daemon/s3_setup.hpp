// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Builds the pipeline's object store over lib/s3 from the configuration and probes the
/// store's conditional-write capabilities (docs/architecture.md §3.4). The one place the daemon touches
/// the S3 client.

#include "aws/providers.hpp"
#include "aws/refresh.hpp"
#include "config/config.hpp"
#include "http/types.hpp"
#include "pipeline/delivery.hpp"
#include "pipeline/ports.hpp"
#include "s3/client.hpp"
#include "s3/probe.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <memory>

namespace iss::app {

/// The object store and what the probe found. `owner` keeps the client alive.
struct s3_setup {
    std::shared_ptr<void> owner;
    pipeline::object_store* store = nullptr;
    s3::client* client =
        nullptr;  ///< the client behind `store` (its stats() feed the s3_* metrics; Iceberg metadata files)
    pipeline::store_capabilities caps;
    /// Whether the store refused a wrong x-amz-checksum-crc32c (s3::probe_crc32c); what
    /// `s3.checksum: auto` chose from.
    s3::capability crc32c_verified = s3::capability::unknown;
    std::string crc32c_detail;
};

/// Builds the credentials source of `o` (its STS/container/IMDS requests go through an HTTP
/// client with `http` settings), fetches the first credentials and logs the source in force
/// (`s3 credentials: web identity, role ..., expires ...`, never a secret). An error (exit 1)
/// lists what the chain tried.
boost::asio::awaitable<result<std::shared_ptr<aws::refreshing_source>>> start_credentials(
    boost::asio::any_io_executor ex, aws::chain_options o, http::client_options http);

/// Logs the proxy in force (passwords as `****`), or nothing when there is none.
void log_proxy(const http::proxy_options& p);

/// The S3 client options of `c` as `run` and `verify` connect with: s3.* mapped, the proxy
/// in force (logged), the credential chain started (its source logged). Errors: invalid
/// options, or the credentials' error listing what the chain tried.
boost::asio::awaitable<result<s3::client_options>> s3_client_options(boost::asio::any_io_executor ex,
                                                                     const config::sink_config& c);

/// Makes the client (group mode: every operation bounded by s3.retry.deadline; single mode:
/// no overall deadline, the pipeline retries without end) and runs the probe unless
/// `s3.conditional_writes: off`. An error says what to check; `iss::errc::timeout` means the
/// store did not answer (worth probing again), anything else needs an operator.
boost::asio::awaitable<result<s3_setup>> make_s3(boost::asio::any_io_executor ex, const config::sink_config& c,
                                                 pipeline::consumer_mode mode);

}  // namespace iss::app
