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
#include "common/backoff.hpp"
#include "common/log.hpp"
#include "common/version.hpp"
#include "daemon/cli.hpp"
#include "daemon/commands.hpp"
#include "daemon/notify.hpp"
#include "daemon/s3_setup.hpp"
#include "daemon/service.hpp"
#include "daemon/wiring.hpp"
#include "format/key_template.hpp"
#include "iggy/error.hpp"
#include "pipeline/adapters/asio_sleeper.hpp"
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
#include <random>
#include <string>

namespace iss::app {

namespace {
namespace net = boost::asio;

std::string endpoint_text(const boost::asio::ip::tcp::endpoint& e) {
    if (e.address().is_v6()) return fmt::format("[{}]:{}", e.address().to_string(), e.port());
    return fmt::format("{}:{}", e.address().to_string(), e.port());
}

/// The store at start (make_s3): unreachable, it is waited out with backoff until it answers
/// or a stop or reload ends the generation (nothing is polled, nothing committed meanwhile);
/// refused credentials or a missing bucket need an operator and are returned at once.
net::awaitable<result<s3_setup>> wait_for_store(const config::sink_config& cfg, pipeline::consumer_mode mode,
                                                pipeline::asio_sleeper& sleeper, const run_state& st) {
    const iss::log::logger log{"app"};
    auto ex = co_await net::this_coro::executor;
    std::mt19937_64 rng{std::random_device{}()};
    // No attempt limit and no deadline: the store is waited for until a stop.
    retry_budget start_budget{{{cfg.s3.retry.base, std::max(cfg.s3.retry.cap, std::chrono::milliseconds{5000})},
                               0,
                               std::chrono::milliseconds{0}},
                              real_clock::instance(),
                              rng};
    result<s3_setup> s3 = iss::error{iss::errc::timeout, "not probed yet"};
    while (!st.ending() && start_budget.try_attempt()) {
        s3 = co_await make_s3(ex, cfg, mode);
        if (s3 || s3.error() != iss::errc::timeout || st.ending()) break;
        const auto wait = start_budget.next_wait();
        if (!wait) break;
        log.warn("S3: {}; retrying in {} ms", s3.error(), wait->count());
        co_await sleeper.sleep_for(*wait);
    }
    co_return s3;
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

net::awaitable<int> daemon_main(config::sink_config cfg, iggy::client_options iopts, run_state& st) {
    const iss::log::logger log{"app"};
    auto ex = co_await net::this_coro::executor;
    const auto mode = consumer_mode(cfg);
    const run_state::scope clear_pointers{st};

    // Everything that can be refused without a connection, first.
    auto rotation = pipeline::rotation_policy::make(rotation_options(cfg));
    if (!rotation) {
        log.error("{}", rotation.error());
        co_return exit_config;
    }
    auto tmpl = format::key_template::parse(cfg.naming.key);
    if (!tmpl) {
        log.error("naming.key: {}", tmpl.error());
        co_return exit_config;
    }
    const auto wopts = writer_options(cfg);
    pipeline::format_encoders encoders{wopts, cfg.iggy.verify_checksum};
    auto time_source = format::parse_time_source(cfg.naming.time_source);
    if (!time_source) {
        log.error("naming.time_source: {}", time_source.error());
        co_return exit_config;
    }
    const date::time_zone* naming_zone = nullptr;
    try {
        naming_zone = date::locate_zone(cfg.naming.timezone);
    } catch (const std::exception& e) {
        log.error("naming.timezone: unknown time zone '{}' ({})", cfg.naming.timezone, e.what());
        co_return exit_config;
    }
    for (const auto& w : config::warnings(cfg)) log.warn("{}", config::to_string(w));
    pipeline::template_key_namer namer{*tmpl,        cfg.s3.prefix, encoders.extension(),
                                       *time_source, naming_zone,   cfg.naming.missing_value};
    if (auto k = pipeline::check_key_namer(namer, {"stream", "topic", 0}); !k) {
        log.error("naming.key: {}", k.error());
        co_return exit_config;
    }

    pipeline::asio_sleeper sleeper{ex};
    st.sleeper = &sleeper;
    if (st.ending()) co_return exit_ok;
    auto s3 = co_await wait_for_store(cfg, mode, sleeper, st);
    // A stop asked for while the store was being set up: nothing is polled or buffered yet.
    if (st.ending()) co_return exit_ok;
    if (!s3) {
        log.error("S3: {}", s3.error());
        // Options the client refuses are a configuration problem (config::validate checks the
        // same rules first, so this is a backstop).
        const bool refused = s3.error() == iss::errc::invalid_argument || s3.error() == iss::s3::errc::invalid_argument;
        co_return refused ? exit_config : exit_failure;
    }
    st.s3 = s3->client;
    st.store_usable = true;
    const auto plan = plan_and_say(*s3, cfg, mode);
    if (!plan) co_return exit_failure;

    iggy::client client{ex, iopts};
    st.client = &client;
    struct forget_ports {  // the signal handler must not reach these once they are gone
        run_state& st;
        ~forget_ports() {
            st.client = nullptr;
            st.router = nullptr;
        }
    } forget{st};
    if (auto r = co_await client.connect(); !r) {
        log.error("Iggy at {}: {}", cfg.iggy.address, iggy::describe(r.error()));
        co_await client.close();
        co_return exit_failure;
    }
    pipeline::iggy_ports iggy{client, iggy_ports_options(cfg)};

    const pipeline::writer_options wo = delivery_options(cfg, *plan);
    pipeline::writer_ports ports{*s3->store,
                                 iggy,
                                 encoders,
                                 namer,
                                 sleeper,
                                 real_clock::instance(),
                                 wo.on_bad_message == pipeline::bad_message_policy::dead_letter ? &iggy : nullptr};
    pipeline::memory_budget memory{memory_limits(cfg)};
    ports.memory = &memory;
    log.info({iss::log::kv("max_buffered", cfg.memory.max_buffered), iss::log::kv("max_spool", cfg.memory.max_spool)},
             "memory budget: {}", memory.describe(cfg.s3.part_size, encoders.state_bytes()));
    // performance.workers (0: one per core): 1 keeps formatting on this thread (no pool).
    const std::size_t workers = cfg.performance.workers == 0 ? iss::available_cores() : cfg.performance.workers;
    iss::worker_pool pool{workers > 1 ? workers : 0};
    ports.workers = &pool;
    // The digests requests carry (CRC-32C or MD5, a signed payload's SHA-256): each part's are
    // computed while its bytes are produced (after the probe: s3.checksum auto decided).
    if (s3->client) ports.part_hashers = pipeline::part_hashers_for(*s3->client);
    log.info({iss::log::kv("workers", workers)}, "formatting and compression: {}",
             workers > 1 ? fmt::format("{} worker threads", workers) : std::string{"on the event-loop thread"});
    pipeline::router router{wo, std::move(*rotation), ports};
    st.router = &router;
    pipeline::consumer_loop loop{consumer_options(cfg), iggy, router, sleeper, real_clock::instance()};
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
    const bool delivered = co_await loop.shutdown();
    st.loop = nullptr;
    co_await client.close();
    if (!delivered)
        log.warn("stopped with undelivered data; it is re-read from the committed offsets at the next start");
    co_return code;
}

/// Runs the daemon, one generation per configuration. A valid reload (SIGHUP; daemon/service.hpp)
/// ends the running generation as a clean stop does: polling stops, every open object is
/// uploaded and its offsets committed, the group is left; then the next generation starts
/// with the new configuration, with new clients, and joins again. So nothing is lost or
/// written twice across a reload: what was committed is where the next one starts
/// (docs/architecture.md §3). A reloaded configuration whose generation ends before it
/// consumed (credentials refused, no such bucket: exit 1 or 78) counts as a failed reload,
/// and the previous configuration is started again.
net::awaitable<int> serve(service& s, config::sink_config cfg) {
    const iss::log::logger log{"app"};
    std::optional<config::sink_config> previous;  // until a reloaded configuration has consumed
    for (;;) {
        auto iopts = iggy_options(cfg);  // checked with the rest of the file before
        if (!iopts) {
            log.error("iggy: {}", iopts.error());
            co_return exit_config;
        }
        s.st.group_mode = cfg.iggy.group_mode();
        s.grace = cfg.shutdown.grace;
        int code = exit_ok;
        try {
            code = co_await daemon_main(cfg, *iopts, s.st);
        } catch (const boost::system::system_error& e) {
            // A reload while nothing was buffered and Iggy unreachable ends the generation by
            // cancellation (daemon/service.cpp, on_reload_signal).
            if (e.code() != net::error::operation_aborted || !s.pending) throw;
        }
        co_await net::this_coro::reset_cancellation_state();
        const bool never_consumed = s.st.reload_applying;
        s.st.reload_applying = false;
        s.st.store_usable = false;
        if (s.st.stopping) co_return code;
        if (s.pending) {
            if (!never_consumed) previous = std::move(cfg);
            cfg = std::move(*s.pending);
            s.pending.reset();
            s.st.reload_requested = false;
            s.st.reload_applying = true;
            iss::log::configure(cfg.log.level, cfg.log.format);
            if (previous && cfg.admin.listen != previous->admin.listen)
                log.warn("admin.listen changed to '{}': the admin server keeps its address until the next start",
                         cfg.admin.listen);
            log.info("restarting with the reloaded configuration");
            continue;
        }
        if (never_consumed && previous) {
            ++s.st.reloads.failure;
            log.error(
                "the reloaded configuration stopped before it consumed (exit {}); restarting with the previous one",
                code);
            cfg = std::move(*previous);
            previous.reset();
            iss::log::configure(cfg.log.level, cfg.log.format);
            continue;
        }
        co_return code;
    }
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
    if (cfg->iceberg.enabled) {
        // lib/iceberg builds the table's metadata and commit requests; the catalog client and
        // the table step that send them are not wired into `run` yet (issue 36). Refuse, rather
        // than write objects that no table lists.
        fmt::print(stderr,
                   "iggy-s3-sink run: iceberg: committing to Iceberg tables is not available in this build yet; "
                   "remove the iceberg section to write objects only\n");
        return exit_config;
    }
    iss::log::configure(cfg->log.level, cfg->log.format);
    auto iopts = iggy_options(*cfg);
    if (!iopts) {
        fmt::print(stderr, "iggy-s3-sink run: {}\n", iopts.error());
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
        h.metrics = [&st] { return admin::render_metrics(st.metrics()); };
        h.unmet = [&st] { return admin::unmet_conditions(st.readiness()); };
        admin_server.emplace(io.get_executor(), *at, std::move(h));
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
                  "running as before and log every problem; valid, upload and commit what is buffered, then\n"
                  "restart the pipeline with it.",
                  "  0   clean stop\n  1   runtime failure\n  64  usage error\n  78  invalid configuration");
    return [file] { return run_run(*file); };
}

}  // namespace iss::app
