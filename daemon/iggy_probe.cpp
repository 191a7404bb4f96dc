// SPDX-License-Identifier: Apache-2.0
#include "daemon/iggy_probe.hpp"

#include "daemon/commands.hpp"
#include "daemon/wiring.hpp"
#include "iggy/client.hpp"
#include "iggy/error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace iss::app {

namespace net = boost::asio;
using proto::identifier;

net::awaitable<int> probe_iggy(const config::sink_config& c) {
    auto opts = iggy_options(c);
    if (!opts) {
        fmt::print("iggy reachable: no - {}\n", opts.error().message());
        co_return exit_config;
    }
    opts->reconnect_attempts = 2;
    opts->retry_rejected_certificate = false;  // rejected once, rejected again: exit 1 at once
    opts->ping_interval = std::chrono::milliseconds{0};
    iggy::client client{co_await net::this_coro::executor, *opts};
    auto conn = co_await client.connect();
    if (!conn) {
        const auto code = iggy::server_code(conn.error());
        const bool rejected = conn.error() == iggy::errc::certificate_rejected;
        if (rejected) {
            fmt::print("iggy reachable: yes ({})\n", c.iggy.address);
            fmt::print("iggy TLS certificate: REJECTED - {}\n", iggy::describe(conn.error()));
        } else if (code && iggy::is_auth_code(*code)) {
            fmt::print("iggy reachable: yes ({})\n", c.iggy.address);
            fmt::print("iggy login: FAILED - {} (check iggy.username, iggy.password or iggy.token)\n",
                       iggy::describe(conn.error()));
        } else {
            fmt::print("iggy reachable: no ({}) - {}\n", c.iggy.address, iggy::describe(conn.error()));
        }
        co_await client.close();
        co_return rejected || (code && iggy::is_auth_code(*code)) ? exit_failure : exit_unavailable;
    }
    fmt::print("iggy reachable: yes ({}{})\n", c.iggy.address, c.iggy.tls.enabled ? ", TLS" : "");
    fmt::print("iggy login: ok ({})\n",
               c.iggy.token.empty() ? "user " + c.iggy.username : std::string{"personal access token"});
    bool usable = true;
    auto topic_line = [&](const std::string& stream, const std::string& topic,
                          std::string_view role) -> net::awaitable<std::optional<proto::topic_details>> {
        auto t = co_await client.get_topic(identifier::named(stream), identifier::named(topic));
        if (!t) {
            fmt::print("iggy {} {}/{}: FAILED - {}\n", role, stream, topic, iggy::describe(t.error()));
            co_return std::nullopt;
        }
        if (!*t) {
            fmt::print("iggy {} {}/{}: NOT FOUND (check the stream and topic names; create them first)\n", role, stream,
                       topic);
            co_return std::nullopt;
        }
        co_return std::move(**t);
    };
    for (const auto& src : consumer_options(c).sources) {
        const auto& [stream, topic] = src.topic;
        auto t = co_await topic_line(stream, topic, "topic");
        if (!t) {
            usable = false;
            continue;
        }
        std::string parts = fmt::format("{} partitions", t->partitions.size());
        bool topic_ok = true;
        if (src.partitions) {
            std::vector<std::uint32_t> missing;
            for (auto p : *src.partitions)
                if (std::none_of(t->partitions.begin(), t->partitions.end(), [&](const auto& q) { return q.id == p; }))
                    missing.push_back(p);
            if (!missing.empty()) {
                usable = topic_ok = false;
                parts += fmt::format("; configured partitions {} do NOT exist", fmt::join(missing, ", "));
            }
        }
        fmt::print("iggy topic {}/{}: {} ({})\n", stream, topic, topic_ok ? "ok" : "PROBLEM", parts);
        if (c.iggy.group_mode()) {
            auto g = co_await client.get_consumer_group(identifier::named(stream), identifier::named(topic),
                                                        identifier::named(c.iggy.consumer_group));
            if (!g) {
                fmt::print("iggy consumer group {} on {}/{}: FAILED - {}\n", c.iggy.consumer_group, stream, topic,
                           iggy::describe(g.error()));
                usable = false;
            } else if (!*g) {
                fmt::print("iggy consumer group {} on {}/{}: not there yet (created at start)\n", c.iggy.consumer_group,
                           stream, topic);
            } else {
                fmt::print("iggy consumer group {} on {}/{}: exists ({} members)\n", c.iggy.consumer_group, stream,
                           topic, (*g)->members.size());
            }
        } else {
            fmt::print("iggy consumer {} on {}/{}: single consumer (offsets stored per partition)\n", c.iggy.consumer,
                       stream, topic);
        }
    }
    if (c.delivery.on_bad_message == pipeline::bad_message_policy::dead_letter) {
        auto t = co_await topic_line(c.delivery.dead_letter.stream, c.delivery.dead_letter.topic, "dead-letter topic");
        if (t)
            fmt::print("iggy dead-letter topic {}/{}: ok\n", c.delivery.dead_letter.stream,
                       c.delivery.dead_letter.topic);
        else usable = false;
    }
    co_await client.close();
    co_return usable ? exit_ok : exit_failure;
}

}  // namespace iss::app
