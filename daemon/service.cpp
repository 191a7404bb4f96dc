// SPDX-License-Identifier: Apache-2.0
// `run`'s service side: run_state and the supervising coroutine (daemon/service.hpp).
#include "daemon/service.hpp"

#include "aws/refresh.hpp"
#include "common/log.hpp"
#include "common/version.hpp"
#include "daemon/commands.hpp"
#include "pipeline/delivery.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <optional>
#include <variant>

namespace iss::app {

namespace net = boost::asio;
using steady_time = iss::clock::steady_time;

bool run_state::nothing_to_finish() const {
    return client != nullptr && !client->connected() && (router == nullptr || !router->holds_data());
}

run_state::scope::~scope() {
    st.loop = nullptr;
    st.sleeper = nullptr;
    st.router = nullptr;
    st.workers = nullptr;
    st.iceberg = nullptr;
}

admin::readiness_inputs run_state::readiness() const {
    // A reload's drain is not a stop: the daemon stays ready (readiness.hpp says why) and
    // /readyz says it is reloading.
    admin::readiness_inputs in{
        store_usable,
        client != nullptr && client->connected(),
        group_mode,
        loop != nullptr && loop->joined(),
        stopping,
        loop != nullptr ? admin::source_problems(*loop) : std::vector<std::string>{},
        router != nullptr ? admin::delivery_problems(router->health()) : std::vector<std::string>{}};
    in.reloading = reload_requested;
    return in;
}

admin::metric_sources run_state::metrics() const {
    admin::metric_sources m{
        router,           loop, s3 ? &s3->stats() : nullptr, client ? &client->stats() : nullptr, iss::version,
        iss::git_revision};
    m.reloads = &reloads;
    m.iceberg = iceberg;
    m.carried = &carried;
    m.credentials = s3 ? dynamic_cast<const aws::refreshing_source*>(s3->options().credentials_source.get()) : nullptr;
    return m;
}

void run_state::started_consuming() {
    if (!reload_applying) return;
    reload_applying = false;
    ++reloads.success;
    iss::log::logger{"app"}.info("configuration reloaded: consuming with the new configuration");
}

std::string run_state::status() const {
    if (stopping) return "stopping: uploading and committing what is buffered";
    if (reload_requested) return "reloading: uploading and committing what is buffered, then restarting";
    if (!store_usable) return "starting: probing the store";
    if (!client || !client->connected()) return "waiting for Iggy (not connected)";
    if (group_mode && (!loop || !loop->joined())) return "joining the consumer group";
    if (!loop || !router) return "starting";
    // Since the start, over reloads (the replaced pipelines' counters are carried, as on /metrics).
    const auto t = admin::totals_since_start(router, carried);
    return fmt::format("running: {} partitions assigned; {} messages in {} objects written, {} adopted",
                       loop->assignment().size(), t.messages, t.objects, t.adopted);
}

service::service(net::io_context& i, run_state& s, notifier& n, std::string file, std::chrono::milliseconds g)
    : io{i},
      st{s},
      notify{n},
      config_file{std::move(file)},
      grace{g},
      signals{i, SIGINT, SIGTERM, SIGHUP},
      sleeper{i.get_executor()} {}

std::optional<config::sink_config> reload_config(const std::string& file) {
    const iss::log::logger log{"app"};
    auto loaded = config::load_file(file, config::process_environment());
    const auto problems = config::check(loaded);
    if (!problems.empty()) {
        log.error({iss::log::kv("file", file)},
                  "SIGHUP: invalid configuration, {} problem{}; still running with the previous one", problems.size(),
                  problems.size() == 1 ? "" : "s");
        for (const auto& p : problems) log.error({iss::log::kv("file", file)}, "{}", config::to_string(p));
        return std::nullopt;
    }
    for (const auto& w : config::warnings(loaded.config)) log.warn("{}", config::to_string(w));
    return std::move(loaded.config);
}

void service::finished(int c) {
    done = true;
    code = c;
    signals.cancel();
    sleeper.interrupt();
}

void service::exit_now(int c) {
    code = c;
    io.stop();
}

namespace {

/// READY=1 and STATUS= lines for systemd, from run_state, sent when due.
struct status_reporter {
    bool ready_sent = false;
    std::string last_status;
    steady_time last_status_at{};

    void tick(const run_state& st, notifier& notify, steady_time now) {
        std::string msg;
        if (!ready_sent && !st.ending() && st.loop && st.loop->rounds() > 0 &&
            admin::unmet_conditions(st.readiness()).empty()) {
            ready_sent = true;
            msg = "READY=1\n";
        }
        const auto status = st.status();
        const bool changed_state = status.substr(0, status.find(':')) != last_status.substr(0, last_status.find(':'));
        if (!msg.empty() ||
            (status != last_status && (changed_state || now - last_status_at >= std::chrono::seconds{5}))) {
            msg += "STATUS=" + status;
            last_status = status;
            last_status_at = now;
            notify.notify(msg);
        }
    }
};

/// SIGHUP: a valid file becomes the pending configuration and the running generation drains;
/// an invalid one is counted and logged (reload_config). Returns whether a reload began.
bool on_reload_signal(service& s) {
    const iss::log::logger log{"app"};
    if (s.st.stopping) {
        log.warn("SIGHUP while stopping: not reloading");
        return false;
    }
    auto next = reload_config(s.config_file);
    if (!next) {
        ++s.st.reloads.failure;
        return false;
    }
    const bool draining = s.pending.has_value();
    s.pending = std::move(next);
    if (draining) {
        log.info("SIGHUP: configuration valid; it replaces the one waiting for the drain to end");
        return false;
    }
    s.st.reload_requested = true;
    const auto mono = std::chrono::duration_cast<std::chrono::microseconds>(s.clock.steady_now().time_since_epoch());
    s.notify.notify(fmt::format("RELOADING=1\nMONOTONIC_USEC={}\nSTATUS={}", mono.count(), s.st.status()));
    if (s.st.nothing_to_finish()) {
        // Waiting for an unreachable Iggy server with nothing buffered: nothing to drain, and
        // the wait may be what the new configuration fixes.
        log.info("SIGHUP: configuration valid; nothing buffered and Iggy not connected: restarting now");
        s.cancel_generation.emit(net::cancellation_type::terminal);
        return true;
    }
    log.info("SIGHUP: configuration valid; uploading and committing what is buffered, then restarting with it");
    if (s.st.loop) s.st.loop->request_stop();
    else if (s.st.sleeper) s.st.sleeper->interrupt();
    return true;
}

/// A stop signal. The first stops polling and returns when the grace period ends; a second
/// one (or the first with nothing to finish) ends the process and returns nullopt.
std::optional<steady_time> on_stop_signal(service& s, int sig) {
    const iss::log::logger log{"app"};
    if (s.st.stopping) {
        log.warn("second signal ({}): exiting now; what was not committed is re-read at the next start", sig);
        s.exit_now(exit_failure);
        return std::nullopt;
    }
    s.st.stopping = true;
    if (s.st.nothing_to_finish()) {
        log.info("signal {}: stopping now: nothing is buffered and Iggy is not connected", sig);
        s.done = true;
        s.exit_now(exit_ok);
        return std::nullopt;
    }
    // systemd: the stop has begun, and may take up to shutdown.grace (plus a margin for the
    // final commit and the group leave) before the stop timeout may kill us.
    s.notify.notify(
        fmt::format("STOPPING=1\nSTATUS={}\nEXTEND_TIMEOUT_USEC={}", s.st.status(),
                    std::chrono::duration_cast<std::chrono::microseconds>(s.grace + std::chrono::seconds{5}).count()));
    log.info("signal {}: stopping; uploading and committing what is buffered (shutdown.grace {} ms)", sig,
             s.grace.count());
    if (s.st.loop) s.st.loop->request_stop();
    else if (s.st.sleeper) s.st.sleeper->interrupt();
    return s.clock.steady_now() + s.grace;
}

}  // namespace

net::awaitable<void> supervise(service& s) {
    using namespace net::experimental::awaitable_operators;
    const iss::log::logger log{"app"};
    std::optional<std::chrono::microseconds> watchdog_every;
    if (s.notify.enabled() && s.notify.watchdog()) {
        const auto every =
            std::max<std::chrono::microseconds>(*s.notify.watchdog() / 2, std::chrono::microseconds{1000});
        log.info("systemd watchdog: WATCHDOG=1 every {} ms", every.count() / 1000);
        watchdog_every = every;
    }
    status_reporter status;
    auto next_watchdog = s.clock.steady_now();
    auto next_status = next_watchdog;
    auto grace_end = steady_time::max();
    while (!s.done) {
        const auto now = s.clock.steady_now();
        if (now >= grace_end) {
            log.error(
                "shutdown.grace passed before everything was committed: exiting; the rest is re-read at the next "
                "start");
            s.exit_now(exit_failure);
            co_return;
        }
        auto due = grace_end;
        if (watchdog_every) {
            if (now >= next_watchdog) {
                s.notify.notify("WATCHDOG=1");
                next_watchdog = now + *watchdog_every;
            }
            due = std::min(due, next_watchdog);
        }
        if (s.notify.enabled()) {
            if (now >= next_status) {
                status.tick(s.st, s.notify, now);
                next_status = now + std::chrono::milliseconds{200};
            }
            due = std::min(due, next_status);
        }
        // Whichever comes first; the other wait is cancelled (a cancelled sleep throws, and `||`
        // drops the loser's outcome). The signal wait's errors are values (as_tuple):
        // operation_aborted is how finished() ends it; finished() interrupts the sleep.
        // (Nothing due: a day, then the loop looks again.)
        const auto left = due == steady_time::max() ? std::chrono::milliseconds{std::chrono::hours{24}}
                                                    : std::chrono::ceil<std::chrono::milliseconds>(due - now);
        auto woke = co_await (s.signals.async_wait(net::as_tuple(net::use_awaitable)) ||
                              s.sleeper.sleep_for(std::max(left, std::chrono::milliseconds{0})));
        if (s.done || woke.index() != 0) continue;
        const auto [ec, sig] = std::get<0>(woke);
        if (ec) continue;
        if (sig == SIGHUP) {
            if (on_reload_signal(s)) status.ready_sent = false;  // READY=1 again once the new one runs
            continue;
        }
        const auto end = on_stop_signal(s, sig);
        if (!end) co_return;
        grace_end = *end;
    }
}

}  // namespace iss::app
