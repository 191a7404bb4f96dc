// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// `run`'s service side (daemon/service.cpp): what the signals, the admin server and systemd's
/// status reach (`run_state`), and the one coroutine that supervises the daemon
/// (`supervise`): stop signals, configuration reloads (SIGHUP), the shutdown grace, systemd's
/// watchdog and status.
///
/// Naive version first: a callback per concern, each re-arming its own timer or signal wait
/// (`std::function`s that call themselves). Their order and their end (every callback checks
/// a shared `done`) are then spread over five closures. Here one loop waits for whichever
/// comes first, a signal or one sleep until the next thing due (a watchdog ping, a
/// status line, the end of the grace period), handles it, and ends when the daemon's
/// coroutine has finished.

#include "admin/metrics.hpp"
#include "admin/readiness.hpp"
#include "common/clock.hpp"
#include "common/net/sleeper.hpp"
#include "common/net/worker_pool.hpp"
#include "config/config.hpp"
#include "daemon/notify.hpp"
#include "iggy/client.hpp"
#include "pipeline/consumer.hpp"
#include "pipeline/ports.hpp"
#include "s3/client.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <chrono>
#include <optional>
#include <string>

namespace iss::app {

class run_clients;

/// What the signal handling, the admin server and the status line need to reach. The
/// pointers are set by the daemon's coroutine while their objects live (null before and
/// after). Event-loop thread only.
struct run_state {
    pipeline::consumer_loop* loop = nullptr;
    pipeline::sleeper* sleeper = nullptr;  ///< waits before the loop exists (S3 unreachable at start)
    iggy::client* client = nullptr;        ///< from its construction on
    pipeline::router* router = nullptr;    ///< from its construction on
    iss::worker_pool* workers = nullptr;   ///< the generation's pool, joined before its frame goes
    /// The generation's Iceberg table step's counters (`iceberg` set), carried when it ends.
    const pipeline::iceberg_table_stats* iceberg = nullptr;
    const s3::client* s3 = nullptr;
    bool store_usable = false;  ///< the start-up probe of the bucket succeeded
    bool group_mode = false;
    bool stopping = false;
    /// A valid new configuration waits (service::pending): the running generation drains
    /// (stops polling, uploads and commits what it holds) and ends.
    bool reload_requested = false;
    /// The generation runs a reloaded configuration that has not started consuming yet: it
    /// counts as a successful reload once it does (`started_consuming`).
    bool reload_applying = false;
    admin::config_reloads reloads;  ///< `iggy_s3_sink_config_reloads_total{result}`
    /// The counters of the pipelines and clients a reload replaced (daemon/run_clients.hpp).
    admin::carried_totals carried;

    /// A stop or a reload asked the running generation to end.
    [[nodiscard]] bool ending() const noexcept { return stopping || reload_requested; }
    /// Called by the generation once its consumer loop has started: a reloaded configuration
    /// counts as applied then.
    void started_consuming();

    /// Nothing to deliver and no Iggy connection to leave a group on: a stop can end the
    /// event loop at once (a connect or poll waiting for an unreachable server would
    /// otherwise hold the stop until shutdown.grace).
    [[nodiscard]] bool nothing_to_finish() const;
    /// Clears the pipeline's pointers (loop, sleeper, router) when a generation's objects go
    /// away; the clients' are run_clients'.
    struct scope {
        run_state& st;
        ~scope();
    };
    [[nodiscard]] admin::readiness_inputs readiness() const;
    [[nodiscard]] admin::metric_sources metrics() const;
    /// One line for systemd's STATUS=.
    [[nodiscard]] std::string status() const;
};

/// The service around the daemon's coroutine: its signals, its timer, the reload it waits to
/// apply, and how it ends. Lives in `run`'s frame, declared after the io_context it uses.
struct service {
    service(boost::asio::io_context& io, run_state& st, notifier& notify, std::string config_file,
            std::chrono::milliseconds grace);

    boost::asio::io_context& io;
    run_state& st;
    notifier& notify;
    std::string config_file;          ///< re-read at SIGHUP
    std::chrono::milliseconds grace;  ///< shutdown.grace of the running configuration
    /// The running generation's configuration (serve's; null outside serve). A reload applied
    /// in place (log, shutdown, admin) updates it.
    config::sink_config* running = nullptr;
    /// serve's clients (null outside serve): a reload's new store, once checked, is handed to
    /// them (run_clients::stage_store).
    run_clients* clients = nullptr;
    /// The configuration a reload validated, to start once the running generation ended.
    std::optional<config::sink_config> pending;
    /// A reload whose `s3` changed: the new store is being built and probed while the running
    /// pipeline goes on (nothing drained yet).
    bool checking_store = false;
    /// A SIGHUP arrived during that check: the file is read again once it ends.
    bool check_again = false;
    /// A reload began outside the supervisor's signal wait (after the store check): systemd
    /// gets READY=1 again once the new configuration runs.
    bool ready_again = false;
    /// Ends the store check at a stop.
    boost::asio::cancellation_signal cancel_check;
    /// Ends the running generation at once (terminal cancellation): a reload while it holds
    /// nothing and waits for an unreachable Iggy server.
    boost::asio::cancellation_signal cancel_generation;
    boost::asio::signal_set signals;  ///< SIGINT, SIGTERM, SIGHUP
    iss::asio_sleeper sleeper;        ///< the supervisor's one wait: until the next thing due
    /// The steady clock of the grace period, the watchdog and status times. Real: systemd reads
    /// MONOTONIC_USEC and the watchdog on CLOCK_MONOTONIC.
    const iss::clock& clock = real_clock::instance();
    int code = 1;       ///< the exit code
    bool done = false;  ///< the daemon's coroutine has finished

    /// The daemon's coroutine finished with `c`: the supervisor ends (its waits cancelled).
    void finished(int c);
    /// Ends the process now with `c` (stops the event loop): a second signal, the grace
    /// passed, or nothing to finish.
    void exit_now(int c);
};

/// Supervises until the daemon's coroutine has finished (`service::finished`) or the
/// process is ended (`service::exit_now`):
/// - the first SIGTERM or SIGINT stops polling (consumer_loop::request_stop) and starts
///   `shutdown.grace`; systemd is told STOPPING=1 with EXTEND_TIMEOUT_USEC; with nothing to
///   finish the process ends at once with 0;
/// - a second one, or the grace passing first, ends the process with 1;
/// - SIGHUP re-reads and validates the configuration file (`reload_config`, then
///   `check_buildable`). Invalid: every problem is logged at error, the reload counts as a
///   failure and nothing else changes. Valid, by what differs from the running configuration
///   (config::changed_sections; docs/operations.md "Reloading the configuration"):
///   - nothing: logged at info, counted `unchanged`, nothing else done (unless a partition is
///     stopped: the pipeline is then rebuilt as below, so it starts again);
///   - only `log`, `shutdown` or `admin`: applied in place, no drain, counted `success`;
///   - `s3` among others: the new store is built and probed first while the running pipeline
///     goes on; refused (credentials, bucket, no delivery guarantee) or silent: logged at
///     error, counted `failure`, nothing else changes; usable: handed to the clients, then
///     as below;
///   - else: it becomes `service::pending`, systemd is told RELOADING=1, and the running
///     generation drains and ends as a clean stop does (without the grace: a drain waits for
///     the store as long as it takes, until a stop signal); the generation loop in
///     daemon/cmd_run.cpp then starts the next one with it.
///   SIGHUP while stopping is ignored; during a drain the newest file wins, compared with
///   the waiting configuration (a different `s3` is checked first, as above: refused, the
///   waiting configuration stays);
/// - under systemd: WATCHDOG=1 at half of WATCHDOG_USEC, READY=1 once ready as /readyz says
///   and the first round has polled, STATUS= when the summary changes (at most every 5 s
///   while running, at once on a change of state).
boost::asio::awaitable<void> supervise(service& s);

/// Reads and checks `file` as `check-config` does (config::load_file, config::check, with
/// the process environment). Valid: the configuration, its warnings logged at warn. Invalid:
/// nullopt, after logging the count and then every problem, each at error, on logger `app`.
[[nodiscard]] std::optional<config::sink_config> reload_config(const std::string& file);

/// Warns for each admin.* key of `next` that differs from `was`: the admin server keeps its
/// address and connection cap until the next start.
void warn_admin_kept(const config::sink_config& was, const config::sink_config& next);

}  // namespace iss::app
