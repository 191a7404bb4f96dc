// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The report subcommands' common tail (`lag`, `verify`): an Iggy client that gives up soon,
/// and one coroutine run to completion on its own single-threaded io_context.

#include "common/log.hpp"
#include "daemon/cli.hpp"
#include "daemon/commands.hpp"
#include "daemon/wiring.hpp"
#include "iggy/client.hpp"
#include "iggy/error.hpp"
#include "s3/error.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <utility>

namespace iss::app {

/// Client options for a one-shot report: an unreachable server means exit 69 after a few
/// tries, not a retry loop; no pings (the call is short).
inline void make_report_client(iggy::client_options& o) {
    o.reconnect_attempts = 3;
    o.retry_rejected_certificate = false;  // the same certificate is rejected again: exit 1 at once
    o.ping_interval = std::chrono::milliseconds{0};
}

/// The exit code of an Iggy error in a report command: 69 (EX_UNAVAILABLE) when Iggy could
/// not be reached or the connection failed (iggy::classify says retry), 1 when it answered and
/// refused (InvalidCredentials, Unauthorized, ...) or its TLS certificate was rejected: a
/// runtime failure, retrying will not help.
inline int iggy_exit_code(const iss::error& e) noexcept {
    if (e == iggy::errc::certificate_rejected) return exit_failure;
    return iggy::classify(e) == iggy::outcome::retry ? exit_unavailable : exit_failure;
}

/// What a report command says when connecting to Iggy at `address` failed with `e`.
inline std::string iggy_connect_failure(std::string_view address, const iss::error& e) {
    if (e == iggy::errc::certificate_rejected) return fmt::format("Iggy at {}: {}", address, iggy::describe(e));
    if (iggy::classify(e) == iggy::outcome::retry)
        return fmt::format("cannot reach Iggy at {}: {}", address, iggy::describe(e));
    const auto code = iggy::server_code(e);
    return fmt::format(
        "Iggy at {} refused the session: {}{}", address, iggy::describe(e),
        code && iggy::is_auth_code(*code) ? " (check iggy.username and iggy.password, or iggy.token)" : "");
}

/// The exit code of an S3 error (after the client's retries) in a report command: 69 when the
/// store could not be reached (a transport error, or 5xx/SlowDown until the retries ran out:
/// s3::errc::unavailable), 1 when it answered and refused (AccessDenied 403,
/// InvalidAccessKeyId, SignatureDoesNotMatch, NoSuchBucket, KMS, ...).
inline int s3_exit_code(const iss::error& e) noexcept {
    return e.code().category() == s3::s3_category() && e != s3::errc::unavailable ? exit_failure : exit_unavailable;
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

/// A report subcommand `name` (`lag`, `verify`) from its config file to its exit code: the
/// config loaded (or every problem reported, 78), logging no chattier than `quietest`, the
/// Iggy options of a report client, then `main(cfg, iggy_options)` (an awaitable<int>) run.
template <class Main>
int run_report_tool(std::string_view name, const std::string& config_file, iss::log::level quietest, Main&& main) {
    auto cfg = load_config_or_report(name, config_file);
    if (!cfg) return exit_config;
    iss::log::configure(std::max(cfg->log.level, quietest), cfg->log.format);
    auto opts = iggy_options(*cfg);
    if (!opts) {
        print_error(name, "{}", opts.error());
        return exit_config;
    }
    make_report_client(*opts);
    return run_to_exit(main(*cfg, *opts), exit_failure);
}

}  // namespace iss::app
