// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The Iggy half of `iggy-s3-sink probe`: reachability, login, the configured streams and
/// topics (and explicit partitions), the consumer group, the dead-letter topic; one line each.

#include "config/config.hpp"

#include <boost/asio/awaitable.hpp>

namespace iss::app {

/// Prints the Iggy lines; true when the sink could run against this server (reachable, login
/// accepted, every configured stream/topic/partition present). A missing group is fine (the
/// sink creates it).
boost::asio::awaitable<bool> probe_iggy(const config::sink_config& c);

}  // namespace iss::app
