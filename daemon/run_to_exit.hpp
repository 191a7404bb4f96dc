// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The report subcommands' common tail (`lag`, `verify`): an Iggy client that gives up soon,
/// and one coroutine run to completion on its own single-threaded io_context.

#include "iggy/client.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <exception>
#include <utility>

namespace iss::app {

/// Client options for a one-shot report: an unreachable server means exit 2 after a few
/// tries, not a retry loop; no pings (the call is short).
inline void make_report_client(iggy::client_options& o) {
    o.reconnect_attempts = 3;
    o.ping_interval = std::chrono::milliseconds{0};
}

/// Runs `main_task` on a fresh `io_context{1}` and returns its exit code. An exception that
/// escapes the coroutine is rethrown (main turns it into one log line and a failure exit).
inline int run_to_exit(boost::asio::awaitable<int> main_task, int code_if_unset) {
    boost::asio::io_context io{1};
    int code = code_if_unset;
    std::exception_ptr failure;
    boost::asio::co_spawn(io, std::move(main_task), [&](std::exception_ptr e, int c) {
        failure = e;
        code = c;
    });
    io.run();
    if (failure) std::rethrow_exception(failure);
    return code;
}

}  // namespace iss::app
