// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The Iggy half of `iggy-s3-sink probe`: reachability, login, the configured streams and
/// topics (and explicit partitions), the consumer group, the dead-letter topic; one line each.

#include "config/config.hpp"

#include <boost/asio/awaitable.hpp>

namespace iss::app {

/// Prints the Iggy lines; returns the exit code (daemon/commands.hpp): exit_ok when the sink
/// could run against this server (reachable, login accepted, every configured
/// stream/topic/partition present; a missing group is fine, the sink creates it),
/// exit_unavailable when the server cannot be reached, exit_failure otherwise.
boost::asio::awaitable<int> probe_iggy(const config::sink_config& c);

}  // namespace iss::app
