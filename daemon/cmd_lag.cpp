// SPDX-License-Identifier: Apache-2.0
// `iggy-s3-sink lag --config FILE [--wait-zero DURATION] [--json]`: per stream/topic/partition,
// the head offset, the committed offset and the lag of the configured consumer (group).
// Exit 0; 69 when Iggy cannot be reached; 1 when it refuses the credentials, when a configured
// topic or partition does not exist or, with --wait-zero, when the lag is not 0 in time.
// With `iceberg` set, each row also shows the offset its table's current snapshot holds
// (the summary's iggy-s3-sink.offsets); 69 also when the Iceberg catalog cannot be reached
// (Iggy's columns are printed all the same, TABLE as "-").
#include "common/clock.hpp"
#include "common/log.hpp"
#include "common/net/sleeper.hpp"
#include "daemon/cli.hpp"
#include "daemon/commands.hpp"
#include "daemon/iceberg_run.hpp"
#include "daemon/run_to_exit.hpp"
#include "daemon/s3_setup.hpp"
#include "daemon/wiring.hpp"
#include "iggy/error.hpp"
#include "pipeline/lag.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <map>
#include <memory>

namespace iss::app {

namespace {
namespace net = boost::asio;

struct lag_args {
    std::string config_file;
    std::optional<std::chrono::milliseconds> wait_zero;
    std::string wait_zero_text;  ///< as given; parsed into wait_zero after the command line
    bool json = false;
};

/// What `collect` found: a row per configured partition that exists, and what the config
/// names that the server does not have ("stream/topic" or "stream/topic/partition N").
struct lag_view {
    std::vector<pipeline::lag_row> rows;
    std::vector<std::string> missing;
};

/// Reads every configured partition's lag; an error when Iggy does not answer.
net::awaitable<result<lag_view>> collect(iggy::client& c, const config::sink_config& cfg) {
    lag_view view;
    auto& rows = view.rows;
    const auto name = consumer_name(cfg);
    const auto consumer = cfg.iggy.group_mode() ? proto::consumer::group(proto::identifier::named(name))
                                                : proto::consumer::single(proto::identifier::named(name));
    for (const auto& src : consumer_options(cfg).sources) {
        auto t =
            co_await c.get_topic(proto::identifier::named(src.topic.stream), proto::identifier::named(src.topic.topic));
        if (!t) co_return t.error();
        if (!*t) {
            view.missing.push_back(fmt::format("topic {}/{}", src.topic.stream, src.topic.topic));
            continue;
        }
        if (src.partitions) {
            for (const auto id : *src.partitions) {
                const auto& ps = (*t)->partitions;
                if (std::none_of(ps.begin(), ps.end(), [&](const auto& p) { return p.id == id; }))
                    view.missing.push_back(
                        fmt::format("partition {} of topic {}/{}", id, src.topic.stream, src.topic.topic));
            }
        }
        for (const auto& p : (*t)->partitions) {
            if (src.partitions &&
                std::find(src.partitions->begin(), src.partitions->end(), p.id) == src.partitions->end())
                continue;
            auto off = co_await c.get_offset(consumer, proto::identifier::named(src.topic.stream),
                                             proto::identifier::named(src.topic.topic), p.id);
            if (!off) co_return off.error();
            pipeline::lag_row row;
            row.partition = {src.topic.stream, src.topic.topic, p.id};
            row.messages_count = p.messages_count;
            row.head = p.current_offset;
            if (*off) row.committed = (*off)->stored_offset;
            row.lag = pipeline::compute_lag(row.messages_count, row.head, row.committed);
            rows.push_back(std::move(row));
        }
    }
    co_return view;
}

/// With a table: each row's `table_committed`, from its topic's table. An error when the
/// catalog does not answer.
net::awaitable<result<void>> add_table_offsets(table_reader& tables, std::vector<pipeline::lag_row>& rows) {
    std::map<pipeline::topic_ref, iceberg::offset_map> by_topic;
    for (auto& r : rows) {
        const pipeline::topic_ref t{r.partition.stream, r.partition.topic};
        if (!by_topic.count(t)) {
            auto state = co_await tables.load(t);
            if (!state) co_return state.error();
            iceberg::offset_map offsets;
            if (*state) {
                auto o = (*state)->committed_offsets();
                if (!o) co_return o.error();
                offsets = std::move(*o);
            }
            by_topic.emplace(t, std::move(offsets));
        }
        const auto& offsets = by_topic.at(t);
        r.table = true;
        const auto it = offsets.find({r.partition.stream, r.partition.topic, r.partition.partition});
        if (it != offsets.end() && it->second > 0) r.table_committed = it->second - 1;
    }
    co_return result<void>{};
}

net::awaitable<int> lag_main(const config::sink_config& cfg, iggy::client_options opts, lag_args a) {
    auto ex = co_await net::this_coro::executor;
    std::unique_ptr<table_reader> tables;
    if (cfg.iceberg.enabled) {
        // The catalog is reached as `run` reaches it (the S3 HTTP settings; SigV4 with the S3
        // credential chain).
        auto sopts = co_await s3_client_options(ex, cfg);
        if (!sopts) {
            print_error("lag", "s3: {}", sopts.error().message());
            co_return exit_failure;
        }
        tables = std::make_unique<table_reader>(ex, cfg, *sopts);
    }
    iggy::client c{ex, opts};
    auto print = [&](const std::vector<pipeline::lag_row>& rows) {
        fmt::print("{}", a.json ? pipeline::render_lag_json(rows) : pipeline::render_lag_table(rows));
        std::fflush(stdout);
    };
    if (auto r = co_await c.connect(); !r) {
        print_error("lag", "{}", iggy_connect_failure(cfg.iggy.address, r.error()));
        co_await c.close();
        co_return iggy_exit_code(r.error());
    }
    // --wait-zero: polls every 250 ms on the one sleeper, until the deadline on the clock.
    const iss::clock& clk = real_clock::instance();
    iss::asio_sleeper sleeper{ex};
    const auto deadline = clk.steady_now() + a.wait_zero.value_or(std::chrono::milliseconds{0});
    int code = exit_ok;
    for (;;) {
        auto rows = co_await collect(c, cfg);
        if (!rows) {
            print_error("lag", "{}", iggy::describe(rows.error()));
            code = iggy_exit_code(rows.error());
            break;
        }
        std::optional<error> table_error;
        if (tables) {
            if (auto t = co_await add_table_offsets(*tables, rows->rows); !t) {
                // Iggy's columns are still printed; the TABLE column is unknown ("-").
                table_error = t.error();
                for (auto& r : rows->rows) {
                    r.table = true;
                    r.table_committed.reset();
                }
            }
        }
        if (table_error && (!a.wait_zero || clk.steady_now() >= deadline)) {
            print(rows->rows);
            print_error("lag", "the Iceberg catalog at {} {}: {}; the TABLE column is unknown (-)",
                        cfg.iceberg.catalog.uri, iceberg::retryable(*table_error) ? "is unreachable" : "cannot be read",
                        table_error->message());
            code = exit_unavailable;
            break;
        }
        std::uint64_t total = 0;
        for (const auto& r : rows->rows) total += r.lag;
        // A topic or partition the config names but the server lacks is not "lag 0": say so
        // and fail, or (with --wait-zero) wait for it to appear like any other lag.
        const bool complete = rows->missing.empty();
        if (!table_error && (!a.wait_zero || (total == 0 && complete) || clk.steady_now() >= deadline)) {
            print(rows->rows);
            for (const auto& m : rows->missing)
                print_error("lag", "{} not found on the server (check sources in the config)", m);
            if (!complete) {
                code = exit_failure;
            } else if (a.wait_zero && total != 0) {
                print_error("lag", "lag is still {} after {} ms", total, a.wait_zero->count());
                code = exit_failure;
            }
            break;
        }
        co_await sleeper.sleep_for(std::chrono::milliseconds{250});
    }
    co_await c.close();
    co_return code;
}

int run_lag(lag_args a) {
    if (!a.wait_zero_text.empty()) a.wait_zero = *config::parse_duration(a.wait_zero_text);  // checked by the parser
    // A report tool: the client's lifecycle lines (connected, ...) would only clutter stderr.
    return run_report_tool(
        "lag", a.config_file, iss::log::level::warn,
        [&a](const config::sink_config& cfg, const iggy::client_options& opts) { return lag_main(cfg, opts, a); });
}

}  // namespace

command_main define_lag(CLI::App& sub) {
    auto a = std::make_shared<lag_args>();
    add_config_option(sub, a->config_file);
    sub.add_option("--wait-zero", a->wait_zero_text,
                   "wait until every lag is 0 (exit 0) or DURATION passed (exit 1), e.g. 30s")
        ->type_name("DURATION")
        ->check(duration_check());
    sub.add_flag("--json", a->json, "one JSON object instead of the table");
    set_help_text(sub,
                  "Prints, for every configured stream/topic/partition, the head offset, the offset committed\n"
                  "by the configured consumer group (or consumer) and the lag between them. An empty\n"
                  "partition has lag 0; with nothing committed yet, every message is lag. With iceberg set,\n"
                  "the TABLE column shows the offset each table's current snapshot holds (its summary's\n"
                  "iggy-s3-sink.offsets), beside the offset committed in Iggy.",
                  "  0   ok\n"
                  "  1   Iggy refused the credentials, a configured topic/partition does not exist, or the lag\n"
                  "      is not zero in time (--wait-zero)\n"
                  "  64  usage error\n"
                  "  69  Iggy (or the Iceberg catalog) cannot be reached (with the catalog down, Iggy's columns\n"
                  "      are printed and TABLE shows -; --wait-zero waits for the catalog too)\n"
                  "  78  invalid configuration");
    return [a] { return run_lag(*a); };
}

}  // namespace iss::app
