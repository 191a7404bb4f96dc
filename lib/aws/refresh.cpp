// SPDX-License-Identifier: Apache-2.0
#include "aws/refresh.hpp"

#include "aws/error.hpp"
#include "common/log.hpp"
#include "common/net/async_mutex.hpp"
#include "common/net/sleeper.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

namespace iss::aws {

namespace net = boost::asio;
using namespace std::chrono_literals;

namespace {

const log::logger& logger() {
    static const log::logger l{"aws"};
    return l;
}

bool transient(const error& e) { return e == errc::fetch_failed || e.code().category() != aws_category(); }

}  // namespace

system_time refresh_time(system_time obtained, system_time expiry, std::chrono::seconds ahead) {
    const auto lifetime = std::max<system_time::duration>(expiry - obtained, 0s);
    return expiry - std::min<system_time::duration>(ahead, lifetime / 4);
}

system_time usable_until(system_time obtained, system_time expiry) {
    const auto lifetime = std::max<system_time::duration>(expiry - obtained, 0s);
    return expiry - std::min<system_time::duration>(10s, lifetime / 10);
}

struct refreshing_source::impl : std::enable_shared_from_this<impl> {
    using steady_time = iss::clock::steady_time;
    net::any_io_executor ex;
    std::shared_ptr<provider> prov;
    const iss::clock& clk;
    refresh_options opts;
    std::mt19937_64 rng;
    identity current;
    bool have = false;
    std::uint64_t generation = 0;
    /// When to renew and until when the credentials are used, as the wall clock read them at
    /// the fetch (for log lines), and as monotonic deadlines (what decides: a step of the
    /// wall clock, NTP or an operator's, neither renews early nor uses expired keys).
    system_time next_refresh{};
    system_time valid_until{};
    steady_time refresh_deadline{};
    steady_time valid_deadline{};
    /// One fetch at a time: a caller that arrives while one runs waits for the lock and takes
    /// that fetch's outcome (`fetched` counts finished fetches, so it sees one finished).
    iss::async_mutex fetch_lock;
    std::uint64_t fetched = 0;
    result<identity> last_outcome = error{errc::fetch_failed, "not fetched"};
    iss::asio_sleeper own_sleeper;
    iss::sleeper& sleep;  ///< `opts.sleeper`, else `own_sleeper`
    bool loop_running = false;
    bool background = true;
    bool stopped = false;
    refresh_stats stats;

    impl(net::any_io_executor e, std::shared_ptr<provider> p, const iss::clock& c, refresh_options o,
         std::uint64_t seed)
        : ex{e},
          prov{std::move(p)},
          clk{c},
          opts{o},
          rng{seed},
          fetch_lock{e},
          own_sleeper{e},
          sleep{opts.sleeper ? *opts.sleeper : own_sleeper} {}

    void install(identity id) {
        const auto now = clk.system_now();
        const auto mono = clk.steady_now();
        current = std::move(id);
        have = true;
        ++generation;
        if (current.expiry) {
            next_refresh = refresh_time(now, *current.expiry, opts.ahead);
            valid_until = usable_until(now, *current.expiry);
            // The lifetime left, measured once on the wall clock at the fetch, then kept on
            // the monotonic one.
            refresh_deadline = mono + std::max<system_time::duration>(next_refresh - now, 0s);
            valid_deadline = mono + std::max<system_time::duration>(valid_until - now, 0s);
        } else {
            next_refresh = system_time::max();
            valid_until = system_time::max();
            refresh_deadline = steady_time::max();
            valid_deadline = steady_time::max();
        }
    }

    bool valid_now() const { return have && clk.steady_now() < valid_deadline; }

    /// The one refresh: starts it, or joins the one in flight.
    task<result<identity>> refresh_once() {
        auto self = shared_from_this();
        const auto seen = fetched;
        auto held = co_await fetch_lock.lock();       // a cancellation throws (§8.4.5)
        if (fetched != seen) co_return last_outcome;  // joined the fetch that just finished
        ++stats.fetches;
        result<identity> r = error{errc::fetch_failed, "not fetched"};
        try {
            r = co_await prov->fetch();
        } catch (const boost::system::system_error& e) {
            if (e.code() == net::error::operation_aborted) throw;  // a cancellation, not a failure
            r = error{errc::fetch_failed, e.what()};
        } catch (const std::exception& e) {
            r = error{errc::fetch_failed, e.what()};
        }
        if (r) {
            if (r->expiry && *r->expiry <= clk.system_now()) {
                r = error{errc::expired, fmt::format("{}: expired at {}", r->source, format_iso8601(*r->expiry))};
            } else {
                install(*r);
            }
        }
        if (!r) ++stats.failures;
        ++fetched;
        last_outcome = r;
        co_return r;
    }

    void ensure_loop() {
        if (!background || loop_running || stopped || !have || !current.expiry) return;
        loop_running = true;
        auto self = shared_from_this();
        net::co_spawn(ex, loop(), [self](std::exception_ptr e) {
            self->loop_running = false;
            if (!e) return;
            try {
                std::rethrow_exception(e);
            } catch (const boost::system::system_error& ex) {
                if (ex.code() == net::error::operation_aborted) logger().debug("credential renewal task cancelled");
                else logger().error("credential renewal task ended: {}", ex.what());
            } catch (const std::exception& ex) {
                logger().error("credential renewal task ended: {}", ex.what());
            }
        });
    }

    /// The background renewal: sleeps until the refresh time, renews, retries failures.
    task<void> loop() {
        auto self = shared_from_this();
        unsigned failures = 0;
        // No attempt limit and no deadline: renewal goes on while the daemon runs; the budget
        // hands out the backoff and starts over after each success.
        const retry_budget::limits forever{opts.retry, 0, 0ms};
        retry_budget budget{forever, clk, rng};
        while (!stopped) {
            std::chrono::milliseconds wait{0};
            if (failures > 0) {
                wait = budget.next_wait().value_or(opts.retry.cap);
                // Never sleep past the point where the credentials stop being usable.
                const auto left =
                    std::chrono::duration_cast<std::chrono::milliseconds>(valid_deadline - clk.steady_now());
                if (left > 0ms) wait = std::min(wait, std::max(left / 2, 50ms));
                wait = std::max(wait, 20ms);
            } else {
                const auto until = refresh_deadline - clk.steady_now();
                wait = std::max(std::chrono::duration_cast<std::chrono::milliseconds>(until), 0ms);
            }
            co_await sleep.sleep_for(wait);  // stop() interrupts it
            if (stopped) co_return;
            if (failures == 0 && clk.steady_now() < refresh_deadline) continue;  // renewed meanwhile
            const auto r = co_await refresh_once();
            if (stopped) co_return;
            if (r) {
                if (failures > 0)
                    logger().info("s3 credentials renewed after {} failed attempts: {}", failures, r->describe());
                else logger().info("s3 credentials renewed: {}", r->describe());
                failures = 0;
                budget = retry_budget{forever, clk, rng};
                continue;
            }
            ++failures;
            (void)budget.try_attempt();
            if (valid_now())
                logger().warn(
                    "s3 credentials renewal failed (attempt {}), retrying; the current ones stay valid until {}: {}",
                    failures, format_iso8601(valid_until), r.error().message());
            else
                logger().error(
                    "s3 credentials renewal failed (attempt {}) and the current ones have expired; retrying: {}",
                    failures, r.error().message());
            if (!current.expiry) co_return;
        }
    }
};

refreshing_source::refreshing_source(net::any_io_executor ex, std::shared_ptr<provider> p, const iss::clock& clk,
                                     refresh_options o, std::uint64_t seed)
    : impl_{std::make_shared<impl>(std::move(ex), std::move(p), clk, o, seed)} {}

refreshing_source::~refreshing_source() { stop(); }

task<result<identity>> refreshing_source::start(bool background) {
    auto i = impl_;
    i->background = background;
    const unsigned attempts = std::max(1U, i->opts.start_attempts);
    result<identity> r = error{errc::fetch_failed, "not fetched"};
    retry_budget budget{{i->opts.retry, attempts, 0ms}, i->clk, i->rng};
    while (budget.try_attempt()) {
        r = co_await i->refresh_once();
        if (r || !transient(r.error())) break;
        const auto next = budget.next_wait();
        if (!next) break;
        const auto wait = std::max(*next, 50ms);
        logger().warn("s3 credentials: {} (attempt {}/{}), retrying in {} ms", r.error().message(), budget.attempts(),
                      attempts, wait.count());
        co_await i->sleep.sleep_for(wait);
    }
    if (r && background) i->ensure_loop();
    co_return r;
}

void refreshing_source::stop() {
    if (!impl_) return;
    impl_->stopped = true;
    impl_->sleep.interrupt();
}

task<result<signing_credentials>> refreshing_source::current() {
    auto i = impl_;
    if (i->valid_now()) {
        // Due for renewal but still usable: the background task (or a spawned one) renews it.
        if (i->clk.steady_now() >= i->refresh_deadline && !i->fetch_lock.locked() && !i->loop_running && !i->stopped)
            i->ensure_loop();
        co_return signing_credentials{i->current.keys, i->generation};
    }
    auto r = co_await i->refresh_once();
    if (!r) {
        if (i->valid_now()) co_return signing_credentials{i->current.keys, i->generation};
        co_return r.error();
    }
    if (!i->stopped) i->ensure_loop();
    co_return signing_credentials{i->current.keys, i->generation};
}

task<result<signing_credentials>> refreshing_source::refresh_rejected(std::uint64_t generation) {
    auto i = impl_;
    if (i->have && i->generation > generation) co_return signing_credentials{i->current.keys, i->generation};
    ++i->stats.forced;
    logger().warn("the store rejected the s3 credentials as expired; renewing them now");
    auto r = co_await i->refresh_once();
    if (!r) co_return r.error();
    co_return signing_credentials{i->current.keys, i->generation};
}

bool refreshing_source::refreshable() const noexcept { return !impl_->have || impl_->current.expiry.has_value(); }
const identity& refreshing_source::last() const noexcept { return impl_->current; }
std::uint64_t refreshing_source::generation() const noexcept { return impl_->generation; }
const refresh_stats& refreshing_source::stats() const noexcept { return impl_->stats; }

}  // namespace iss::aws
