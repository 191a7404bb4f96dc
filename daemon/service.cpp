// SPDX-License-Identifier: Apache-2.0
// `run`'s service side: run_state and the supervising coroutine (daemon/service.hpp).
#include "daemon/service.hpp"

#include "aws/refresh.hpp"
#include "common/log.hpp"
#include "common/version.hpp"
#include "daemon/commands.hpp"
#include "daemon/run_clients.hpp"
#include "daemon/s3_setup.hpp"
#include "daemon/wiring.hpp"
#include "pipeline/delivery.hpp"
#include "pipeline/router.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <memory>
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
    for (auto& line : admin::catalog_problems(iceberg)) in.delivery_problems.push_back(std::move(line));
    if (s3 != nullptr)
        for (auto& p : admin::store_problems(s3->stats())) in.delivery_problems.push_back(std::move(p));
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

void warn_admin_kept(const config::sink_config& was, const config::sink_config& next) {
    const iss::log::logger log{"app"};
    if (next.admin.listen != was.admin.listen)
        log.warn("admin.listen changed to '{}': the admin server keeps its address until the next start",
                 next.admin.listen);
    if (next.admin.max_connections != was.admin.max_connections)
        log.warn("admin.max_connections changed to {}: the admin server keeps {} until the next start",
                 next.admin.max_connections, was.admin.max_connections);
}

void service::finished(int c) {
    done = true;
    code = c;
    signals.cancel();
    sleeper.interrupt();
    cancel_check.emit(net::cancellation_type::terminal);
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

/// The sections a reload applies without a drain: nothing in the pipeline depends on them
/// (log: the logger; shutdown: the grace of the next stop; admin: kept until the next start,
/// with a warning). Every other section shapes open objects, the clients or the consumer.
bool applies_in_place(const std::vector<std::string>& changed) {
    return std::all_of(changed.begin(), changed.end(),
                       [](const std::string& s) { return s == "log" || s == "shutdown" || s == "admin"; });
}

/// A partition the running pipeline stopped (on_bad_message: fail, a foreign object): a
/// rebuilt pipeline starts it again from its committed offset (docs/operations.md, Faults).
bool partition_stopped(const run_state& st) {
    if (st.router == nullptr) return false;
    for (const auto& p : st.router->partitions())
        if (const auto* w = st.router->find(p); w && w->state() == pipeline::writer_state::failed) return true;
    return false;
}

/// `next` becomes the pending configuration and the running generation drains. Returns
/// whether a reload began (false: one was draining already; the newest file wins).
bool begin_reload(service& s, config::sink_config next) {
    const iss::log::logger log{"app"};
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

bool on_reload_signal(service& s);

/// A reload's new store being checked (start_store_check): the configuration, and the
/// store once built and probed (or why not).
struct store_check {
    config::sink_config next;
    std::optional<result<s3_setup>> store;
};

/// Builds and probes the store of `c->next` (make_s3, then the delivery plan it allows).
net::awaitable<void> probe_store(std::shared_ptr<store_check> c) {
    auto ex = co_await net::this_coro::executor;
    auto made = co_await make_s3(ex, c->next, consumer_mode(c->next));
    if (made) {
        auto plan = pipeline::plan_delivery(made->caps, conditional_writes(c->next), consumer_mode(c->next));
        if (!plan) made = plan.error();
    }
    c->store = std::move(made);
}

/// After probe_store: usable, the store goes to the clients and the reload begins; refused,
/// silent or cancelled, a failed reload and nothing else changes.
void store_checked(service& s, const std::shared_ptr<store_check>& c, std::exception_ptr e) {
    const iss::log::logger log{"app"};
    s.checking_store = false;
    if (s.done || s.st.stopping || s.clients == nullptr) return;  // a stop: nothing to apply
    if (e || !c->store || !*c->store) {
        std::string why = "the check ended early";
        if (c->store && !*c->store)
            why = c->store->error() == iss::errc::timeout ? c->store->error().detail() : c->store->error().message();
        if (e) try {
                std::rethrow_exception(e);
            } catch (const std::exception& x) {
                why = x.what();
            }
        ++s.st.reloads.failure;
        log.error({iss::log::kv("file", s.config_file)}, "SIGHUP: the new s3 settings do not work: {}; {}", why,
                  s.pending ? "the configuration waiting for the drain still applies when it ends"
                            : "still running with the previous configuration (nothing was drained)");
    } else {
        s.clients->stage_store(c->next.s3, std::move(**c->store));
        if (begin_reload(s, std::move(c->next))) s.ready_again = true;
    }
    if (std::exchange(s.check_again, false) && on_reload_signal(s)) s.ready_again = true;
}

/// Checks the store of `next` while the running pipeline goes on (probe_store, then
/// store_checked). Its requests go to the new store only, on a client of its own (counted on
/// /metrics only once that client is used).
void start_store_check(service& s, config::sink_config next) {
    const iss::log::logger log{"app"};
    log.info({iss::log::kv("bucket", next.s3.bucket)},
             "SIGHUP: configuration valid; s3 changed: checking the new store {}",
             s.pending ? "before it replaces the configuration waiting for the drain"
                       : "before draining anything (the running pipeline goes on)");
    s.checking_store = true;
    auto c = std::make_shared<store_check>(store_check{std::move(next), std::nullopt});
    net::co_spawn(
        s.io, probe_store(c),
        net::bind_cancellation_slot(s.cancel_check.slot(), [&s, c](std::exception_ptr e) { store_checked(s, c, e); }));
}

/// SIGHUP: reads and checks the file, then does what its difference from the running
/// configuration needs (service.hpp, `supervise`). Returns whether a reload began.
bool on_reload_signal(service& s) {
    const iss::log::logger log{"app"};
    if (s.st.stopping) {
        log.warn("SIGHUP while stopping: not reloading");
        return false;
    }
    if (s.checking_store) {
        log.info("SIGHUP while the previous reload's store is checked: the file is read again after that check");
        s.check_again = true;
        return false;
    }
    auto next = reload_config(s.config_file);
    if (!next) {
        ++s.st.reloads.failure;
        return false;
    }
    if (auto built = check_buildable(*next); !built) {
        ++s.st.reloads.failure;
        log.error({iss::log::kv("file", s.config_file)},
                  "SIGHUP: invalid configuration, 1 problem; still running with the previous one");
        log.error({iss::log::kv("file", s.config_file)}, "{}", built.error());
        return false;
    }
    if (s.running == nullptr) return begin_reload(s, std::move(*next));
    // While a drain runs, the file is compared with the configuration waiting for it.
    const auto changed = config::changed_sections(s.pending ? *s.pending : *s.running, *next);
    if (changed.empty()) {
        ++s.st.reloads.unchanged;
        if (s.pending || !partition_stopped(s.st)) {
            log.info("SIGHUP: the configuration is unchanged: nothing to do (nothing drained, open objects stay open)");
            return false;
        }
        log.info(
            "SIGHUP: the configuration is unchanged, but a partition is stopped: rebuilding the pipeline so it "
            "starts again from its committed offset");
        return begin_reload(s, std::move(*next));
    }
    const auto names = fmt::format("{}", fmt::join(changed, ", "));
    if (!s.pending && applies_in_place(changed)) {
        iss::log::configure(next->log.level, next->log.format);
        warn_admin_kept(*s.running, *next);
        s.grace = next->shutdown.grace;
        *s.running = std::move(*next);
        ++s.st.reloads.success;
        log.info({iss::log::kv("changed", names)},
                 "SIGHUP: configuration reloaded in place (changed: {}): nothing drained, open objects stay open",
                 names);
        return false;
    }
    // An s3 change is checked before it may replace anything: the running configuration, or
    // the one waiting for a drain (a refused store must not take the waiting one's place).
    if (s.clients != nullptr && std::find(changed.begin(), changed.end(), "s3") != changed.end()) {
        start_store_check(s, std::move(*next));
        return false;
    }
    log.info({iss::log::kv("changed", names)}, "SIGHUP: configuration valid (changed: {})", names);
    return begin_reload(s, std::move(*next));
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
    s.cancel_check.emit(net::cancellation_type::terminal);  // a reload's store check: no reload now
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
        if (std::exchange(s.ready_again, false)) status.ready_sent = false;
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
