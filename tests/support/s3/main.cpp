// SPDX-License-Identifier: Apache-2.0
// s3-fault-front: the fault-injecting S3 front of fault_front.hpp as a process, for runs of the
// daemon as a process (tests/soak/soak.py). A TEST DOUBLE: it forwards to --upstream what no
// rule faults. One io_context, one thread.
//
// Rules are added and cleared while it runs, one command per line on stdin; each command is
// answered with one line on stdout. The first line on stdout is `listening on 127.0.0.1:PORT`.

#include "s3/fault_front.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <charconv>
#include <cstdio>
#include <istream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

namespace net = boost::asio;
using namespace iss;
using namespace std::chrono_literals;

namespace {

const char* const usage_text =
    R"(s3-fault-front: a TEST DOUBLE: an HTTP/1.1 front on 127.0.0.1:PORT (port picked by the OS)
that forwards every request unchanged to --upstream (so SigV4 signatures stay valid), unless a
rule faults it (tests/support/s3/fault_front.hpp).

Usage: s3-fault-front --upstream URL
Commands on stdin, one per line, each answered with one line on stdout (`ok` or `error: ...`):
  add ACTION [method=M] [target=S] [skip=N] [every=N] [times=N] [delay_ms=N]
        a rule: requests whose method is M (default any) and whose target contains S (default
        any); after `skip` matches (default 0), one match in `every` (default 1) gets ACTION,
        `times` times (default unlimited). Rules are tried in the order added.
  clear drop every rule
  stats one JSON line: {"requests": N, "faults": {ACTION: N, ...}}
ACTION: slow_down_503 internal_500_empty reset_before_response reset_mid_request
        truncate_response delay lowercase_headers drop_response corrupt_body verify_crc32c
        access_denied_403 kms_disabled_400 kms_access_denied_403
        conflict_409 internal_500_after_forward unauthorized_401 (Iceberg REST catalog answers)
Output: first line `listening on 127.0.0.1:PORT`; on SIGTERM/SIGINT or the end of stdin, the
  stats line, then exit 0.
Exit: 0 after SIGTERM/SIGINT or end of stdin, 2 on a bad argument.
)";

constexpr std::array<std::pair<std::string_view, test::fault>, 17> actions{{
    {"none", test::fault::none},
    {"slow_down_503", test::fault::slow_down_503},
    {"internal_500_empty", test::fault::internal_500_empty},
    {"reset_before_response", test::fault::reset_before_response},
    {"reset_mid_request", test::fault::reset_mid_request},
    {"truncate_response", test::fault::truncate_response},
    {"delay", test::fault::delay},
    {"lowercase_headers", test::fault::lowercase_headers},
    {"drop_response", test::fault::drop_response},
    {"corrupt_body", test::fault::corrupt_body},
    {"verify_crc32c", test::fault::verify_crc32c},
    {"access_denied_403", test::fault::access_denied_403},
    {"kms_disabled_400", test::fault::kms_disabled_400},
    {"kms_access_denied_403", test::fault::kms_access_denied_403},
    {"conflict_409", test::fault::conflict_409},
    {"internal_500_after_forward", test::fault::internal_500_after_forward},
    {"unauthorized_401", test::fault::unauthorized_401},
}};

std::string_view action_name(test::fault f) {
    for (const auto& [name, v] : actions)
        if (v == f) return name;
    return "unknown";
}

bool parse_uint(std::string_view s, unsigned& out) {
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc{} && p == s.data() + s.size() && !s.empty();
}

/// Counts of the requests seen, folded out of the front's request log (which would otherwise
/// grow for the whole run).
struct counters {
    std::uint64_t requests = 0;
    std::map<std::string_view, std::uint64_t> faults;

    void fold(test::fault_front& front) {
        for (const auto& r : front.requests()) {
            ++requests;
            if (r.applied != test::fault::none) ++faults[action_name(r.applied)];
        }
        front.clear_requests();
    }

    [[nodiscard]] std::string json() const {
        boost::json::object f;
        for (const auto& [name, n] : faults) f[name] = n;
        return boost::json::serialize(boost::json::object{{"requests", requests}, {"faults", std::move(f)}});
    }
};

/// One command line -> its answer line.
std::string apply(test::fault_front& front, counters& c, const std::string& line) {
    std::istringstream in{line};
    std::string verb;
    in >> verb;
    if (verb == "clear") {
        front.clear_rules();
        return "ok";
    }
    if (verb == "stats") {
        c.fold(front);
        return c.json();
    }
    if (verb != "add") return fmt::format("error: unknown command '{}' (add, clear, stats)", verb);
    std::string action;
    in >> action;
    test::fault_rule rule;
    rule.times = ~0U;
    bool known = false;
    for (const auto& [name, v] : actions)
        if (name == action) rule.action = v, known = true;
    if (!known) return fmt::format("error: unknown action '{}'", action);
    std::string kv;
    while (in >> kv) {
        const auto eq = kv.find('=');
        if (eq == std::string::npos) return fmt::format("error: '{}' is not KEY=VALUE", kv);
        const std::string key = kv.substr(0, eq), value = kv.substr(eq + 1);
        unsigned n = 0;
        if (key == "method") {
            rule.method = value;
        } else if (key == "target") {
            rule.target_contains = value;
        } else if (key != "skip" && key != "every" && key != "times" && key != "delay_ms") {
            return fmt::format("error: unknown key '{}'", key);
        } else if (!parse_uint(value, n)) {
            return fmt::format("error: {}: '{}' is not a whole number", key, value);
        } else if (key == "skip") {
            rule.skip = n;
        } else if (key == "every") {
            rule.every = n;
        } else if (key == "times") {
            rule.times = n;
        } else {
            rule.delay = std::chrono::milliseconds{n};
        }
    }
    front.add_rule(std::move(rule));
    return "ok";
}

void print_line(const std::string& s) {
    std::printf("%s\n", s.c_str());
    std::fflush(stdout);
}

net::awaitable<void> read_commands(net::posix::stream_descriptor& in, test::fault_front& front, counters& c,
                                   net::io_context& ioc) {
    net::streambuf buf;
    for (;;) {
        auto [ec, n] = co_await net::async_read_until(in, buf, '\n', net::as_tuple(net::use_awaitable));
        if (ec) break;  // end of stdin: the test that drove it is gone
        std::istream is{&buf};
        std::string line;
        std::getline(is, line);
        if (!line.empty()) print_line(apply(front, c, line));
    }
    c.fold(front);
    print_line(c.json());
    front.stop();
    ioc.stop();
}

net::awaitable<void> fold_periodically(test::fault_front& front, counters& c) {
    net::steady_timer t{co_await net::this_coro::executor};
    for (;;) {
        t.expires_after(1s);
        auto [ec] = co_await t.async_wait(net::as_tuple(net::use_awaitable));
        if (ec) co_return;
        c.fold(front);
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::string upstream;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--help" || a == "-h") {
            std::fputs(usage_text, stdout);
            return 0;
        }
        if (a == "--upstream" && i + 1 < argc) {
            upstream = argv[++i];
        } else {
            std::fprintf(stderr, "s3-fault-front: unknown or incomplete option %s\n\n%s", argv[i], usage_text);
            return 2;
        }
    }
    if (upstream.empty()) {
        std::fprintf(stderr, "s3-fault-front: --upstream URL is required\n\n%s", usage_text);
        return 2;
    }
    auto ep = http::parse_url(upstream);
    if (!ep) {
        std::fprintf(stderr, "s3-fault-front: --upstream '%s': %s\n", upstream.c_str(), ep.error().message().c_str());
        return 2;
    }

    net::io_context ioc{1};
    test::fault_front front{ioc.get_executor(), *ep};
    counters c;
    net::posix::stream_descriptor in{ioc, ::dup(STDIN_FILENO)};
    net::co_spawn(ioc, read_commands(in, front, c, ioc), net::detached);
    net::co_spawn(ioc, fold_periodically(front, c), net::detached);
    net::signal_set stop_signals{ioc, SIGTERM, SIGINT};
    stop_signals.async_wait([&](const boost::system::error_code& ec, int) {
        if (ec) return;
        c.fold(front);
        print_line(c.json());
        front.stop();
        ioc.stop();
    });
    print_line(fmt::format("listening on 127.0.0.1:{}", front.port()));
    ioc.run();
    return 0;
}
