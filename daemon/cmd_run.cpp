// SPDX-License-Identifier: Apache-2.0
// `iggy-s3-sink run --config FILE`: the daemon. Iggy -> pipeline -> S3 until SIGTERM/SIGINT;
// SIGHUP reloads the file (serve, below; daemon/service.hpp).
//
// Shutdown sequence (docs/architecture.md §8.3.6, docs/architecture.md §3.6), naive version first: "on SIGTERM, exit"
// loses every buffered record that was polled but not uploaded (it is re-read on restart, so
// nothing is lost, but a clean stop should not cost a replay) and leaves the group member to
// the server's timeout. So:
//   1. first signal: stop polling (consumer_loop::request_stop; its waits end at once);
//   2. the loop returns; shutdown() closes and uploads every non-empty object, commits,
//      and leaves the consumer group; exit 0;
//   3. `shutdown.grace` after the first signal, if that has not finished, or at a second
//      signal: stop the event loop at once and exit 1. What was not committed is re-read at
//      the next start (and adopted where it was uploaded: docs/architecture.md §3.3).
// The signals, the grace, systemd's watchdog and status are one coroutine beside the daemon's
// (`supervise`, daemon/service.hpp).
#include "admin/metrics.hpp"
#include "admin/server.hpp"
#include "aws/refresh.hpp"
#include "common/log.hpp"
#include "common/net/sleeper.hpp"
#include "common/version.hpp"
#include "daemon/cli.hpp"
#include "daemon/commands.hpp"
#include "daemon/iceberg_run.hpp"
#include "daemon/notify.hpp"
#include "daemon/run_clients.hpp"
#include "daemon/s3_setup.hpp"
#include "daemon/service.hpp"
#include "daemon/wiring.hpp"
#include "format/key_template.hpp"
#include "iggy/error.hpp"
#include "pipeline/adapters/format_encoder.hpp"
#include "pipeline/adapters/iggy_ports.hpp"
#include "pipeline/adapters/key_namer.hpp"
#include "pipeline/adapters/s3_store.hpp"
#include "pipeline/consumer.hpp"
#include "s3/checksum.hpp"
#include "s3/client.hpp"
#include "s3/error.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/this_coro.hpp>

#include <date/tz.h>
#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace iss::app {

namespace {
namespace net = boost::asio;

std::string endpoint_text(const boost::asio::ip::tcp::endpoint& e) {
    if (e.address().is_v6()) return fmt::format("[{}]:{}", e.address().to_string(), e.port());
    return fmt::format("{}:{}", e.address().to_string(), e.port());
}

/// The delivery plan for what the probe found (pipeline::plan_delivery), logged: the
/// guarantee in force, at warn when degraded (docs/architecture.md §3.4: say so); nullopt
/// (logged at error) when none holds.
std::optional<pipeline::delivery_plan> plan_and_say(const s3_setup& s3, const config::sink_config& cfg,
                                                    pipeline::consumer_mode mode) {
    const iss::log::logger log{"app"};
    auto plan = pipeline::plan_delivery(s3.caps, conditional_writes(cfg), mode);
    if (!plan) {
        log.error("{}", plan.error());
        return std::nullopt;
    }
    const iss::log::fields caps{iss::log::kv("conditional_put", s3.caps.conditional_put),
                                iss::log::kv("conditional_complete", s3.caps.conditional_complete)};
    if (plan->strategy == pipeline::upload_strategy::head_then_write)
        log.warn(caps, "delivery guarantee (degraded): {}", plan->guarantee);
    else log.info(caps, "delivery guarantee: {}", plan->guarantee);
    return *plan;
}

/// What a generation's pipeline is built from, besides the configuration: the parts checked
/// without a connection, and the clients.
struct generation_parts {
    pipeline::rotation_policy rotation;
    pipeline::format_encoders& encoders;
    const pipeline::key_namer& namer;
    iss::asio_sleeper& sleeper;
    const s3_setup& s3;
    pipeline::delivery_plan plan;
    iggy::client& client;
    iceberg_run* iceberg = nullptr;  ///< `iceberg` set: the table step, its namer and resume point
};

/// The pipeline of one generation over the clients in hand: consumes until a stop or a reload,
/// then drains it (consumer_loop::shutdown). On a reload the consumer groups stay joined for
/// the next generation (run_clients::kept_groups); on a stop they are left. The router's
/// counters are carried (admin::carried_totals) as it goes.
net::awaitable<int> run_pipeline(const config::sink_config& cfg, generation_parts g, run_state& st,
                                 run_clients& clients) {
    const iss::log::logger log{"app"};
    const auto mode = consumer_mode(cfg);
    pipeline::iggy_ports iggy{g.client, iggy_ports_options(cfg)};
    // With a table, the resume point is the larger of Iggy's stored offset and the table's.
    const auto resume = g.iceberg ? g.iceberg->resume(iggy, iggy) : nullptr;
    const pipeline::writer_options wo = delivery_options(cfg, g.plan);
    pipeline::writer_ports ports{*g.s3.store,
                                 resume ? *resume : static_cast<pipeline::offset_store&>(iggy),
                                 g.encoders,
                                 g.namer,
                                 g.sleeper,
                                 real_clock::instance(),
                                 wo.on_bad_message == pipeline::bad_message_policy::dead_letter ? &iggy : nullptr};
    pipeline::memory_budget memory{memory_limits(cfg)};
    ports.memory = &memory;
    ports.table = g.iceberg;  // invariant 7: each durable object into its table before its offset is stored
    log.info({iss::log::kv("max_buffered", cfg.memory.max_buffered), iss::log::kv("max_spool", cfg.memory.max_spool)},
             "memory budget: {}", memory.describe(cfg.s3.part_size, g.encoders.state_bytes()));
    // performance.workers (0: one per core): 1 keeps formatting on this thread (no pool).
    const std::size_t workers = cfg.performance.workers == 0 ? iss::available_cores() : cfg.performance.workers;
    iss::worker_pool pool{workers > 1 ? workers : 0};
    ports.workers = &pool;
    st.workers = &pool;  // joined after io.run() when a second signal stopped the loop
    struct forget_pool {
        run_state& st;
        ~forget_pool() { st.workers = nullptr; }
    } const forget{st};
    // The digests requests carry (CRC-32C or MD5, a signed payload's SHA-256): each part's are
    // computed while its bytes are produced (after the probe: s3.checksum auto decided).
    if (g.s3.client) ports.part_hashers = pipeline::part_hashers_for(*g.s3.client);
    log.info({iss::log::kv("workers", workers)}, "formatting and compression: {}",
             workers > 1 ? fmt::format("{} worker threads", workers) : std::string{"on the event-loop thread"});
    pipeline::router router{wo, std::move(g.rotation), ports};
    st.router = &router;
    st.iceberg = g.iceberg ? &g.iceberg->stats() : nullptr;
    // However the generation ends, its counters stay and its pointers go: the router's, the
    // table step's and the consumer's (offset_restarts_total), carried once, by the guard after
    // the loop while the loop lives, else by this one.
    struct carry_router {
        run_state& st;
        const pipeline::router& router;
        bool done = false;
        void carry(const pipeline::consumer_loop* loop) {
            if (std::exchange(done, true)) return;
            admin::metric_sources gone;
            gone.router = &router;
            gone.consumer = loop;
            gone.iceberg = st.iceberg;
            st.carried.carry(gone);
            st.loop = nullptr;
            st.router = nullptr;
            st.iceberg = nullptr;
        }
        ~carry_router() { carry(nullptr); }
    } carry{st, router};
    pipeline::consumer_loop loop{consumer_options(cfg), iggy, router, g.sleeper, real_clock::instance()};
    struct carry_loop {
        carry_router& carry;
        const pipeline::consumer_loop& loop;
        ~carry_loop() { carry.carry(&loop); }
    } const carry_consumer{carry, loop};
    loop.take_over(std::exchange(clients.kept_groups, {}));
    st.loop = &loop;
    if (st.ending()) loop.request_stop();

    log.info({iss::log::kv("mode", mode == pipeline::consumer_mode::group ? "group" : "single"),
              iss::log::kv("consumer", consumer_name(cfg)), iss::log::kv("bucket", cfg.s3.bucket)},
             "started");
    int code = exit_ok;
    const bool started = co_await loop.start();  // (GCC 12: no co_await inside a condition)
    if (!started) {
        code = exit_failure;
    } else {
        st.started_consuming();
        co_await loop.run();
    }
    // A stop or a reload: the table batches are committed at once from here on, so the drain
    // below stores the offsets of everything durable (nothing waits for iceberg.commit_interval).
    if (g.iceberg) g.iceberg->flush_now();
    // A reload keeps the groups for the next generation (run_clients decides whether it may
    // keep them); a stop leaves them.
    const bool keep_groups = st.reload_requested && !st.stopping;
    const bool delivered = co_await loop.shutdown(!keep_groups);
    if (keep_groups) clients.kept_groups = loop.joined_topics();
    if (!delivered)
        log.warn("stopped with undelivered data; it is re-read from the committed offsets at the next start");
    co_return code;
}

net::awaitable<int> daemon_main(config::sink_config cfg, iggy::client_options iopts, run_state& st,
                                run_clients& clients) {
    const iss::log::logger log{"app"};
    const auto mode = consumer_mode(cfg);
    const run_state::scope clear_pointers{st};

    // Everything that can be refused without a connection, first.
    auto rotation = pipeline::rotation_policy::make(rotation_options(cfg));
    if (!rotation) {
        log.error("{}", rotation.error());
        co_return exit_config;
    }
    const auto wopts = writer_options(cfg);
    pipeline::format_encoders encoders{wopts, cfg.iggy.verify_checksum};
    auto namer = key_namer(cfg, encoders.extension());
    if (!namer) {
        log.error("{}", namer.error());
        co_return exit_config;
    }
    for (const auto& w : config::warnings(cfg)) log.warn("{}", config::to_string(w));

    iss::asio_sleeper sleeper{co_await net::this_coro::executor};
    st.sleeper = &sleeper;
    if (st.ending()) co_return exit_ok;
    auto s3 = co_await clients.store(cfg, sleeper);
    // A stop asked for while the store was being set up: nothing is polled or buffered yet.
    if (st.ending()) co_return exit_ok;
    if (!s3) {
        log.error("S3: {}", s3.error());
        // Options the client refuses are a configuration problem (config::validate checks the
        // same rules first, so this is a backstop).
        const bool refused = s3.error() == iss::errc::invalid_argument || s3.error() == iss::s3::errc::invalid_argument;
        co_return refused ? exit_config : exit_failure;
    }
    const auto plan = plan_and_say(**s3, cfg, mode);
    if (!plan) co_return exit_failure;

    // The tables before Iggy: a table that does not fit the configuration joins no group.
    std::unique_ptr<iceberg_run> tables;
    std::optional<pipeline::format_encoders> table_encoders;  // encoders that gather the manifests' column statistics
    if (cfg.iceberg.enabled) {
        auto made = iceberg_run::make(co_await net::this_coro::executor, cfg, *(*s3)->client);
        if (!made) {
            log.error("{}", made.error());
            co_return exit_config;
        }
        tables = std::move(*made);
        st.iceberg = &tables->stats();  // /readyz and /metrics while the tables are opened (the catalog down)
        const auto opened = co_await tables->open(sleeper, [&st] { return st.ending(); });
        if (st.ending()) co_return exit_ok;  // stopped while the catalog was waited for
        if (!opened) {
            log.error("{}", opened.error());
            co_return opened.error() == iss::errc::invalid_argument ? exit_config : exit_failure;
        }
        table_encoders.emplace(wopts, cfg.iggy.verify_checksum, tables->schema());
    }

    auto client = co_await clients.iggy(cfg, std::move(iopts));
    if (!client) co_return exit_failure;
    generation_parts parts{std::move(*rotation),
                           table_encoders ? *table_encoders : encoders,
                           tables ? tables->namer() : static_cast<const pipeline::key_namer&>(**namer),
                           sleeper,
                           **s3,
                           *plan,
                           **client,
                           tables.get()};
    co_return co_await run_pipeline(cfg, std::move(parts), st, clients);
}

/// Runs the daemon, one generation per configuration, over the clients in `clients`. A valid
/// reload (SIGHUP; daemon/service.hpp) ends the running generation as a clean stop does, except
/// that the consumer groups stay joined: polling stops, every open object is uploaded and its
/// offsets committed; then the next generation starts with the new configuration from the
/// committed offsets. It keeps the Iggy connection and its group membership when `iggy` is
/// unchanged (the group's other members see no rebalance), and the S3 client when `s3` is
/// (daemon/run_clients.hpp). So nothing is lost or written twice across a reload
/// (docs/architecture.md §3). A reloaded configuration whose generation ends before it
/// consumed (credentials refused, no such bucket: exit 1 or 78) counts as a failed reload, and
/// the previous configuration is started again (after_generation). Returns the generation's
/// exit code.
net::awaitable<int> next_generation(service& s, const config::sink_config& cfg, run_clients& clients) {
    const iss::log::logger log{"app"};
    auto iopts = iggy_options(cfg);  // checked with the rest of the file before
    if (!iopts) {
        log.error("iggy: {}", iopts.error());
        co_return exit_config;
    }
    s.st.group_mode = cfg.iggy.group_mode();
    s.grace = cfg.shutdown.grace;
    int code = exit_ok;
    try {
        code = co_await daemon_main(cfg, *iopts, s.st, clients);
    } catch (const boost::system::system_error& e) {
        // A reload while nothing was buffered and Iggy unreachable ends the generation by
        // cancellation (daemon/service.cpp, on_reload_signal); the Iggy client was connecting:
        // it is not kept.
        if (e.code() != net::error::operation_aborted || !s.pending) throw;
        clients.drop_iggy();
    }
    co_return code;
}

/// After a generation ended with `code`: the configuration to run next (nullopt: exit).
std::optional<config::sink_config> after_generation(service& s, config::sink_config& cfg,
                                                    std::optional<config::sink_config>& previous, int code) {
    const iss::log::logger log{"app"};
    const bool never_consumed = s.st.reload_applying;
    s.st.reload_applying = false;
    if (s.st.stopping) return std::nullopt;
    if (s.pending) {
        const auto changed = config::changed_sections(cfg, *s.pending);
        if (!never_consumed) previous = std::move(cfg);
        auto next = std::move(*s.pending);
        s.pending.reset();
        s.st.reload_requested = false;
        // The same configuration again (a stopped partition restarted; service.cpp): counted
        // `unchanged` at the signal, and nothing to fall back to.
        s.st.reload_applying = !changed.empty();
        iss::log::configure(next.log.level, next.log.format);
        if (previous) warn_admin_kept(*previous, next);
        log.info("restarting with the reloaded configuration (changed: {})",
                 changed.empty() ? std::string{"nothing"} : fmt::format("{}", fmt::join(changed, ", ")));
        return next;
    }
    if (never_consumed && previous) {
        ++s.st.reloads.failure;
        log.error("the reloaded configuration stopped before it consumed (exit {}); restarting with the previous one",
                  code);
        auto next = std::move(*previous);
        previous.reset();
        iss::log::configure(next.log.level, next.log.format);
        return next;
    }
    return std::nullopt;
}

/// The generations (next_generation, after_generation) over the clients they keep across
/// reloads; at the end the kept groups are left and the Iggy connection closed.
net::awaitable<int> serve(service& s, config::sink_config cfg) {
    run_clients clients{s.st};
    s.running = &cfg;
    s.clients = &clients;
    std::optional<config::sink_config> previous;  // until a reloaded configuration has consumed
    int code = exit_ok;
    for (;;) {
        code = co_await next_generation(s, cfg, clients);
        co_await net::this_coro::reset_cancellation_state();
        auto next = after_generation(s, cfg, previous, code);
        if (!next) break;
        cfg = std::move(*next);
    }
    s.running = nullptr;
    s.clients = nullptr;
    co_await clients.close();
    co_return code;
}

int run_run(const std::string& config_file) {
    // A SIGTERM that arrives while the config is read must not kill the process by default:
    // hold both signals until the signal_set below takes them (pending ones are delivered
    // then), so a stop requested right after start is still a clean stop.
    sigset_t held;
    sigemptyset(&held);
    sigaddset(&held, SIGTERM);
    sigaddset(&held, SIGINT);
    sigaddset(&held, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &held, nullptr);
    // A closed stderr pipe (`run ... 2>&1 | head`) must not kill the daemon with buffered data:
    // writes then fail with EPIPE instead (sockets already use MSG_NOSIGNAL).
    std::signal(SIGPIPE, SIG_IGN);
    auto cfg = load_config_or_report("run", config_file);
    if (!cfg) return exit_config;
    iss::log::configure(cfg->log.level, cfg->log.format);
    auto iopts = iggy_options(*cfg);
    if (!iopts) {
        print_error("run", "{}", iopts.error());
        return exit_config;
    }

    const iss::log::logger log{"app"};
    run_state st;  // before io: the coroutine frames io destroys last refer to it
    net::io_context io{1};
    st.group_mode = cfg->iggy.group_mode();
    notifier notify;

    // The admin server answers from the start (/healthz while the store is probed); a port
    // that cannot be bound is an operator's problem: exit 1 naming it.
    std::optional<admin::server> admin_server;
    if (!cfg->admin.listen.empty()) {
        auto at = admin::parse_listen(cfg->admin.listen);  // validated with the config
        if (!at) {
            log.error("admin.listen: {}", at.error());
            return exit_config;
        }
        admin::handlers h;
        h.metrics = [&st, &admin_server] {
            auto m = st.metrics();
            if (admin_server) m.admin = &admin_server->stats();
            return admin::render_metrics(m);
        };
        h.unmet = [&st] { return admin::unmet_conditions(st.readiness()); };
        h.notes = [&st] { return admin::readiness_notes(st.readiness()); };
        admin::server_options so;
        so.max_connections = cfg->admin.max_connections;
        admin_server.emplace(io.get_executor(), *at, std::move(h), so);
        if (auto r = admin_server->listen(); !r) {
            log.error(
                "{} (another process on that port? change admin.listen, or set it to \"\" to turn the admin "
                "server off)",
                r.error());
            return exit_failure;
        }
        log.info({iss::log::kv("address", endpoint_text(admin_server->local_endpoint()))},
                 "admin server listening on http://{}/ (/metrics, /healthz, /readyz)",
                 endpoint_text(admin_server->local_endpoint()));
        admin_server->start();
    }
    service svc{io, st, notify, config_file, cfg->shutdown.grace};
    pthread_sigmask(SIG_UNBLOCK, &held, nullptr);
    std::exception_ptr failure;
    net::co_spawn(io, serve(svc, *cfg),
                  net::bind_cancellation_slot(svc.cancel_generation.slot(), [&](std::exception_ptr e, int c) {
                      failure = e;
                      svc.finished(c);
                      if (admin_server) admin_server->stop();
                  }));
    // The supervisor ends when the daemon's coroutine has finished; an exception in it would
    // leave the stop signals unanswered: log it and stop.
    net::co_spawn(io, supervise(svc), [&](std::exception_ptr e) {
        if (!e) return;
        try {
            std::rethrow_exception(e);
        } catch (const std::exception& x) {
            log.error("signal handling failed: {}; exiting", x.what());
        }
        svc.exit_now(exit_failure);
    });
    io.run();
    // A second signal stops the event loop at once (service::exit_now), possibly while a pool
    // thread runs a formatting job that writes into an open object of the generation's frame.
    // ~io_context destroys that frame: the job must be over first.
    if (st.workers) st.workers->join();
    if (failure) {
        try {
            std::rethrow_exception(failure);
        } catch (const std::exception& e) {
            log.error("fatal: {}", e.what());
        }
        return exit_failure;
    }
    return svc.code;
}

}  // namespace

command_main define_run(CLI::App& sub) {
    auto file = std::make_shared<std::string>();
    add_config_option(sub, *file);
    set_help_text(sub,
                  "Consumes the configured Iggy streams and writes them to S3 as rotating objects, storing\n"
                  "Iggy offsets only after the data is durable. SIGTERM or SIGINT: stop polling, upload and\n"
                  "commit what is buffered within shutdown.grace, leave the consumer group, exit 0; a second\n"
                  "signal exits at once. SIGHUP (systemctl reload): re-read and check FILE; invalid, keep\n"
                  "running as before and log every problem; unchanged, do nothing; only log, shutdown or\n"
                  "admin changed, apply it in place; a changed s3 section is probed first (refused: keep\n"
                  "running as before); otherwise upload and commit what is buffered, then restart the\n"
                  "pipeline with it, keeping the Iggy connection and consumer group membership unless\n"
                  "iggy.* changed, and the S3 client unless s3.* changed.",
                  "  0   clean stop\n  1   runtime failure\n  64  usage error\n  78  invalid configuration");
    return [file] { return run_run(*file); };
}

}  // namespace iss::app
