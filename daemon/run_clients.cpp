// SPDX-License-Identifier: Apache-2.0
// `run`'s clients across reloads (daemon/run_clients.hpp).
#include "daemon/run_clients.hpp"

#include "common/backoff.hpp"
#include "common/clock.hpp"
#include "common/log.hpp"
#include "daemon/wiring.hpp"
#include "iggy/error.hpp"
#include "pipeline/adapters/iggy_ports.hpp"

#include <boost/asio/this_coro.hpp>

#include <algorithm>
#include <random>

namespace iss::app {

namespace net = boost::asio;

run_clients::~run_clients() {
    // The generation is over (serve's frame ends): nothing reads the pointers any more.
    st_.client = nullptr;
    st_.s3 = nullptr;
}

void run_clients::drop_s3() {
    if (!s3_) return;
    admin::metric_sources gone;
    gone.s3 = s3_->client ? &s3_->client->stats() : nullptr;
    gone.credentials =
        s3_->client ? dynamic_cast<const aws::refreshing_source*>(s3_->client->options().credentials_source.get())
                    : nullptr;
    st_.carried.carry(gone);
    st_.s3 = nullptr;
    st_.store_usable = false;
    s3_.reset();
    s3_for_.reset();
}

net::awaitable<result<const s3_setup*>> run_clients::store(const config::sink_config& cfg, pipeline::sleeper& sleeper) {
    const iss::log::logger log{"app"};
    if (s3_ && s3_for_ && *s3_for_ == cfg.s3) {
        log.info("s3: settings unchanged: keeping the client, its credentials and the probe's findings");
        st_.store_usable = true;
        co_return &*s3_;
    }
    if (staged_ && staged_for_ && *staged_for_ == cfg.s3) {
        // Checked at the reload: no probe again, and no moment without a usable store.
        drop_s3();
        s3_ = std::move(*staged_);
        s3_for_ = std::move(*staged_for_);
        staged_.reset();
        staged_for_.reset();
        st_.s3 = s3_->client;
        st_.store_usable = true;
        log.info("s3: settings changed: using the client checked at the reload (credentials and probe findings)");
        co_return &*s3_;
    }
    staged_.reset();
    staged_for_.reset();
    drop_s3();
    auto ex = co_await net::this_coro::executor;
    std::mt19937_64 rng{std::random_device{}()};
    // No attempt limit and no deadline: the store is waited for until a stop or a reload.
    retry_budget start_budget{{{cfg.s3.retry.base, std::max(cfg.s3.retry.cap, std::chrono::milliseconds{5000})},
                               0,
                               std::chrono::milliseconds{0}},
                              real_clock::instance(),
                              rng};
    result<s3_setup> s3 = iss::error{iss::errc::timeout, "not probed yet"};
    while (!st_.ending() && start_budget.try_attempt()) {
        s3 = co_await make_s3(ex, cfg, consumer_mode(cfg));
        if (s3 || s3.error() != iss::errc::timeout || st_.ending()) break;
        const auto wait = start_budget.next_wait();
        if (!wait) break;
        log.warn("S3: {}; retrying in {} ms", s3.error().detail(), wait->count());  // (timeout's text is noise here)
        co_await sleeper.sleep_for(*wait);
    }
    if (!s3) co_return s3.error();
    s3_ = std::move(*s3);
    s3_for_ = cfg.s3;
    st_.s3 = s3_->client;
    st_.store_usable = true;
    co_return &*s3_;
}

void run_clients::stage_store(config::s3_section section, s3_setup s) {
    staged_ = std::move(s);
    staged_for_ = std::move(section);
}

net::awaitable<void> run_clients::leave_kept(const std::set<pipeline::topic_ref>& keep) {
    if (!iggy_ || !iggy_for_) {
        kept_groups.clear();
        co_return;
    }
    pipeline::iggy_ports ports{*iggy_, iggy_ports_options(*iggy_for_)};
    const auto kept = kept_groups;
    for (const auto& t : kept) {
        if (keep.count(t)) continue;
        kept_groups.erase(t);
        const auto r = co_await ports.leave(t);
        const iss::log::fields f{iss::log::kv("stream", t.stream), iss::log::kv("topic", t.topic)};
        if (r == pipeline::source_status::ok)
            iss::log::logger{"app"}.info(f, "left consumer group {}", consumer_name(*iggy_for_));
        else
            iss::log::logger{"app"}.warn(
                f, "leaving consumer group {}: {} (the server drops the member with the connection)",
                consumer_name(*iggy_for_), pipeline::to_string(r));
    }
}

void run_clients::drop_iggy() {
    kept_groups.clear();
    if (!iggy_) return;
    admin::metric_sources gone;
    gone.iggy = &iggy_->stats();
    st_.carried.carry(gone);
    st_.client = nullptr;
    iggy_.reset();
    iggy_for_.reset();
}

net::awaitable<result<iggy::client*>> run_clients::iggy(const config::sink_config& cfg, iggy::client_options o) {
    const iss::log::logger log{"app"};
    if (iggy_ && iggy_for_ && iggy_for_->iggy == cfg.iggy) {
        std::set<pipeline::topic_ref> wanted;
        for (const auto& s : consumer_options(cfg).sources) wanted.insert(s.topic);
        co_await leave_kept(wanted);  // the topics `sources` no longer names
        iggy_for_ = cfg;
        log.info({iss::log::kv("groups_kept", kept_groups.size())},
                 "iggy: settings unchanged: keeping the connection{}",
                 kept_groups.empty() ? "" : " and the consumer group membership (no rebalance)");
        co_return iggy_.get();
    }
    if (iggy_) {
        log.info("iggy: settings changed: {}connecting again",
                 kept_groups.empty() ? "" : "leaving the consumer group and ");
        co_await leave_kept({});
        co_await iggy_->close();
        drop_iggy();
    }
    auto ex = co_await net::this_coro::executor;
    iggy_ = std::make_unique<iggy::client>(ex, std::move(o));
    iggy_for_ = cfg;
    st_.client = iggy_.get();
    if (auto r = co_await iggy_->connect(); !r) {
        log.error("Iggy at {}: {}", cfg.iggy.address, iggy::describe(r.error()));
        co_return r.error();
    }
    co_return iggy_.get();
}

net::awaitable<void> run_clients::close() {
    co_await leave_kept({});
    if (iggy_) co_await iggy_->close();
    drop_iggy();
    drop_s3();
}

}  // namespace iss::app
