// SPDX-License-Identifier: Apache-2.0
// `iggy-s3-sink run --config FILE`: the daemon. Iggy -> pipeline -> S3 until SIGTERM/SIGINT.
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
#include "admin/metrics.hpp"
#include "admin/readiness.hpp"
#include "admin/server.hpp"
#include "common/backoff.hpp"
#include "common/log.hpp"
#include "common/version.hpp"
#include "daemon/commands.hpp"
#include "daemon/notify.hpp"
#include "daemon/s3_setup.hpp"
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

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <date/tz.h>
#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <exception>
#include <functional>
#include <optional>
#include <random>
#include <string>

namespace iss::app {

int run_run(std::span<const std::string_view> args);

namespace {
namespace net = boost::asio;

void print_usage(std::FILE* to) {
    fmt::print(to,
               "Usage: iggy-s3-sink run --config FILE\n\n"
               "Consumes the configured Iggy streams and writes them to S3 as rotating objects, storing\n"
               "Iggy offsets only after the data is durable. SIGTERM, SIGINT or SIGHUP: stop polling, upload and\n"
               "commit what is buffered within shutdown.grace, leave the consumer group, exit 0; a second\n"
               "signal exits at once.\n\n"
               "Options:\n"
               "  --config FILE   the configuration file (YAML; see check-config --help-config)\n"
               "  --help          show this help\n\n"
               "Exit codes: 0 clean stop, 1 failure, 2 usage error, 78 invalid configuration.\n");
}

/// What the signal handler, the admin server and the service ticker need to reach. The
/// pointers are set by daemon_main while their objects live (null before and after).
struct run_state {
    pipeline::consumer_loop* loop = nullptr;
    pipeline::sleeper* sleeper = nullptr;  ///< waits before the loop exists (S3 unreachable at start)
    iggy::client* client = nullptr;        ///< from its construction on
    pipeline::router* router = nullptr;    ///< from its construction on
    const s3::client* s3 = nullptr;
    bool store_usable = false;  ///< the start-up probe of the bucket succeeded
    bool group_mode = false;
    bool stopping = false;

    /// Nothing to deliver and no Iggy connection to leave a group on: a stop can end the
    /// event loop at once (a connect or poll waiting for an unreachable server would
    /// otherwise hold the stop until shutdown.grace).
    [[nodiscard]] bool nothing_to_finish() const {
        return client != nullptr && !client->connected() && (router == nullptr || !router->holds_data());
    }

    /// Clears the pointers when daemon_main's objects go away.
    struct scope {
        run_state& st;
        ~scope() {
            st.loop = nullptr;
            st.sleeper = nullptr;
            st.router = nullptr;
            st.client = nullptr;
            st.s3 = nullptr;
        }
    };

    [[nodiscard]] admin::readiness_inputs readiness() const {
        return {store_usable, client != nullptr && client->connected(),
                group_mode,   loop != nullptr && loop->joined(),
                stopping,     loop != nullptr ? admin::source_problems(*loop) : std::vector<std::string>{}};
    }
    [[nodiscard]] admin::metric_sources metrics() const {
        return {router,           loop, s3 ? &s3->stats() : nullptr, client ? &client->stats() : nullptr, iss::version,
                iss::git_revision};
    }
    /// One line for systemd's STATUS=.
    [[nodiscard]] std::string status() const {
        if (stopping) return "stopping: uploading and committing what is buffered";
        if (!store_usable) return "starting: probing the store";
        if (!client || !client->connected()) return "waiting for Iggy (not connected)";
        if (group_mode && (!loop || !loop->joined())) return "joining the consumer group";
        if (!loop || !router) return "starting";
        const auto t = router->totals();
        return fmt::format("running: {} partitions assigned; {} messages in {} objects written, {} adopted",
                           loop->assignment().size(), t.records_written, t.objects_written, t.objects_adopted);
    }
};

std::string endpoint_text(const boost::asio::ip::tcp::endpoint& e) {
    if (e.address().is_v6()) return fmt::format("[{}]:{}", e.address().to_string(), e.port());
    return fmt::format("{}:{}", e.address().to_string(), e.port());
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
    // S3 unreachable at start is waited out (nothing is polled, nothing committed meanwhile);
    // refused credentials or a missing bucket need an operator: exit 1.
    std::mt19937_64 rng{std::random_device{}()};
    if (st.stopping) co_return exit_ok;
    // No attempt limit and no deadline: the store is waited for until a stop.
    retry_budget start_budget{{{cfg.s3.retry.base, std::max(cfg.s3.retry.cap, std::chrono::milliseconds{5000})},
                               0,
                               std::chrono::milliseconds{0}},
                              real_clock::instance(),
                              rng};
    result<s3_setup> s3 = iss::error{iss::errc::timeout, "not probed yet"};
    while (!st.stopping && start_budget.try_attempt()) {
        s3 = co_await make_s3(ex, cfg, mode);
        if (s3 || s3.error() != iss::errc::timeout || st.stopping) break;
        const auto wait = start_budget.next_wait();
        if (!wait) break;
        log.warn("S3: {}; retrying in {} ms", s3.error(), wait->count());
        co_await sleeper.sleep_for(*wait);
    }
    // A stop asked for while the store was being set up: nothing is polled or buffered yet.
    if (st.stopping) co_return exit_ok;
    if (!s3) {
        log.error("S3: {}", s3.error());
        // Options the client refuses are a configuration problem (config::validate checks the
        // same rules first, so this is a backstop).
        const bool refused = s3.error() == iss::errc::invalid_argument || s3.error() == iss::s3::errc::invalid_argument;
        co_return refused ? exit_config : exit_failure;
    }
    st.s3 = s3->client;
    st.store_usable = true;
    auto plan = pipeline::plan_delivery(s3->caps, conditional_writes(cfg), mode);
    if (!plan) {
        log.error("{}", plan.error());
        co_return exit_failure;
    }
    const iss::log::fields caps{iss::log::kv("conditional_put", s3->caps.conditional_put),
                                iss::log::kv("conditional_complete", s3->caps.conditional_complete)};
    if (plan->strategy == pipeline::upload_strategy::head_then_write)
        log.warn(caps, "delivery guarantee (degraded): {}", plan->guarantee);  // docs/architecture.md §3.4: say so
    else log.info(caps, "delivery guarantee: {}", plan->guarantee);

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
    if (st.stopping) loop.request_stop();

    log.info({iss::log::kv("mode", mode == pipeline::consumer_mode::group ? "group" : "single"),
              iss::log::kv("consumer", consumer_name(cfg)), iss::log::kv("bucket", cfg.s3.bucket)},
             "started");
    int code = exit_ok;
    const bool started = co_await loop.start();  // (GCC 12: no co_await inside a condition)
    if (!started) {
        code = exit_failure;
    } else {
        co_await loop.run();
    }
    const bool delivered = co_await loop.shutdown();
    st.loop = nullptr;
    co_await client.close();
    if (!delivered)
        log.warn("stopped with undelivered data; it is re-read from the committed offsets at the next start");
    co_return code;
}

}  // namespace

int run_run(std::span<const std::string_view> args) {
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
    bool missing = false;
    auto a = split_config_arg(args, missing);
    for (auto r : a.rest) {
        if (r == "--help" || r == "-h") {
            print_usage(stdout);
            return exit_ok;
        }
        fmt::print(stderr, "iggy-s3-sink run: unknown argument '{}'\n", r);
        print_usage(stderr);
        return exit_usage;
    }
    if (missing || a.config_file.empty()) {
        fmt::print(stderr, "iggy-s3-sink run: --config FILE is required\n");
        print_usage(stderr);
        return exit_usage;
    }
    auto cfg = load_config_or_report("run", a.config_file);
    if (!cfg) return exit_config;
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
    int code = exit_failure;
    std::exception_ptr failure;
    bool done = false;
    // SIGHUP (terminal closed, `kill -HUP`) is a clean stop too: there is no reload.
    net::signal_set signals{io, SIGINT, SIGTERM, SIGHUP};
    net::steady_timer grace{io};

    std::function<void(const boost::system::error_code&, int)> on_signal = [&](const boost::system::error_code& ec,
                                                                               int sig) {
        if (ec || done) return;
        if (st.stopping) {
            log.warn("second signal ({}): exiting now; what was not committed is re-read at the next start", sig);
            code = exit_failure;
            io.stop();
            return;
        }
        st.stopping = true;
        if (st.nothing_to_finish()) {
            log.info("signal {}: stopping now: nothing is buffered and Iggy is not connected", sig);
            code = exit_ok;
            done = true;
            io.stop();
            return;
        }
        // systemd: the stop has begun, and may take up to shutdown.grace (plus a margin for
        // the final commit and the group leave) before the stop timeout may kill us.
        notify.notify(fmt::format(
            "STOPPING=1\nSTATUS={}\nEXTEND_TIMEOUT_USEC={}", st.status(),
            std::chrono::duration_cast<std::chrono::microseconds>(cfg->shutdown.grace + std::chrono::seconds{5})
                .count()));
        log.info("signal {}: stopping; uploading and committing what is buffered (shutdown.grace {} ms)", sig,
                 cfg->shutdown.grace.count());
        if (st.loop) st.loop->request_stop();
        else if (st.sleeper) st.sleeper->interrupt();
        grace.expires_after(cfg->shutdown.grace);
        grace.async_wait([&](const boost::system::error_code& gec) {
            if (gec || done) return;
            log.error(
                "shutdown.grace passed before everything was committed: exiting; the rest is re-read at the "
                "next start");
            code = exit_failure;
            io.stop();
        });
        signals.async_wait(on_signal);
    };
    signals.async_wait(on_signal);
    pthread_sigmask(SIG_UNBLOCK, &held, nullptr);

    // systemd: WATCHDOG=1 at half of WATCHDOG_USEC from this event loop (a hung loop sends
    // nothing and gets restarted); READY=1 once ready as /readyz says and the first round has
    // polled the assignment; STATUS= when the one-line summary changes (at most every 5 s while
    // running, at once on a change of state).
    net::steady_timer watchdog{io};
    std::function<void(const boost::system::error_code&)> on_watchdog;
    if (notify.enabled() && notify.watchdog()) {
        const auto every = std::max<std::chrono::microseconds>(*notify.watchdog() / 2, std::chrono::microseconds{1000});
        log.info("systemd watchdog: WATCHDOG=1 every {} ms", every.count() / 1000);
        on_watchdog = [&, every](const boost::system::error_code& ec) {
            if (ec || done) return;
            notify.notify("WATCHDOG=1");
            watchdog.expires_after(every);
            watchdog.async_wait(on_watchdog);
        };
        on_watchdog({});
    }
    net::steady_timer ticker{io};
    std::function<void(const boost::system::error_code&)> on_tick;
    bool ready_sent = false;
    std::string last_status;
    std::chrono::steady_clock::time_point last_status_at{};
    if (notify.enabled()) {
        on_tick = [&](const boost::system::error_code& ec) {
            if (ec || done) return;
            const auto now = std::chrono::steady_clock::now();
            std::string msg;
            if (!ready_sent && !st.stopping && st.loop && st.loop->rounds() > 0 &&
                admin::unmet_conditions(st.readiness()).empty()) {
                ready_sent = true;
                msg = "READY=1\n";
            }
            const auto status = st.status();
            const bool changed_state =
                status.substr(0, status.find(':')) != last_status.substr(0, last_status.find(':'));
            if (!msg.empty() ||
                (status != last_status && (changed_state || now - last_status_at >= std::chrono::seconds{5}))) {
                msg += "STATUS=" + status;
                last_status = status;
                last_status_at = now;
                notify.notify(msg);
            }
            ticker.expires_after(std::chrono::milliseconds{200});
            ticker.async_wait(on_tick);
        };
        on_tick({});
    }

    net::co_spawn(io, daemon_main(*cfg, *iopts, st), [&](std::exception_ptr e, int c) {
        done = true;
        failure = e;
        code = c;
        signals.cancel();
        grace.cancel();
        watchdog.cancel();
        ticker.cancel();
        if (admin_server) admin_server->stop();
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
    return code;
}

}  // namespace iss::app
