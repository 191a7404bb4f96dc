// SPDX-License-Identifier: Apache-2.0
// `iggy-s3-sink healthcheck [--url URL] [--ready] [--timeout DURATION]`: asks a running
// daemon's admin server (`admin.listen`) for /healthz (or /readyz) and exits 0 when it answers
// 200. For container HEALTHCHECKs and scripts where no curl is installed (docker/Dockerfile).
#include "config/config.hpp"
#include "daemon/cli.hpp"
#include "daemon/commands.hpp"
#include "daemon/run_to_exit.hpp"
#include "http/client.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/this_coro.hpp>

#include <fmt/format.h>

#include <chrono>
#include <memory>
#include <string>

namespace iss::app {

namespace {

namespace net = boost::asio;

struct healthcheck_args {
    std::string url;  ///< empty: http://127.0.0.1:9464 plus the endpoint's path
    bool ready = false;
    std::string timeout = "3s";
};

/// The one GET; 0 on 200, 1 on another status (the body's first line is printed), 69 when
/// nothing answered within the timeout.
net::awaitable<int> check(std::string url, std::chrono::milliseconds timeout) {
    auto ep = http::parse_url(url);
    if (!ep) {
        print_error("healthcheck", "--url {}: {}", url, ep.error().message());
        co_return exit_usage;
    }
    std::string path{http::url_path(url)};
    http::client_options o;
    o.timeout.connect = o.timeout.read = o.timeout.write = timeout;
    http::client c{co_await net::this_coro::executor, o};
    // A named request moved in: GCC 12 frees a braced temporary passed by value to a
    // coroutine twice (lib/http/types.hpp, `endpoint`).
    http::request req;
    req.target = path.empty() ? "/" : path;
    http::endpoint target = *ep;
    auto r = co_await c.send(std::move(target), std::move(req), timeout);
    if (!r) {
        print_error("healthcheck", "{}: {}", url, r.error().message());
        co_return exit_unavailable;
    }
    const auto first_line = r->body.substr(0, r->body.find('\n'));
    if (r->status != 200) {
        print_error("healthcheck", "{}: {} {}", url, r->status, first_line);
        co_return exit_failure;
    }
    fmt::print("{}: {}\n", url, first_line.empty() ? "ok" : first_line);
    co_return exit_ok;
}

int run_healthcheck(const healthcheck_args& a) {
    const auto timeout = config::parse_duration(a.timeout);
    const std::string url =
        a.url.empty() ? fmt::format("http://127.0.0.1:9464/{}", a.ready ? "readyz" : "healthz") : a.url;
    return run_to_exit(check(url, timeout ? *timeout : std::chrono::milliseconds{3000}), exit_failure);
}

}  // namespace

command_main define_healthcheck(CLI::App& sub) {
    auto a = std::make_shared<healthcheck_args>();
    auto* url = sub.add_option("--url", a->url, "the admin endpoint to ask (default http://127.0.0.1:9464/healthz)")
                    ->type_name("URL");
    // --ready with --url would be ignored (the URL names the path): refused (exit 64) instead.
    sub.add_flag("--ready", a->ready,
                 "ask /readyz instead of /healthz (with the default URL; with --url, name /readyz in it)")
        ->excludes(url);
    sub.add_option("--timeout", a->timeout, "how long to wait for the answer (default 3s; above 0)")
        ->type_name("DURATION")
        ->check(duration_check(true));
    set_help_text(sub,
                  "Asks a running daemon's admin server (admin.listen) for /healthz, or /readyz with --ready,\n"
                  "and exits 0 when it answers 200. Meant for container HEALTHCHECKs (the image has no curl).",
                  "  0   the endpoint answered 200\n  1   it answered another status (printed)\n"
                  "  64  usage error\n  69  nothing answered within the timeout");
    return [a] { return run_healthcheck(*a); };
}

}  // namespace iss::app
