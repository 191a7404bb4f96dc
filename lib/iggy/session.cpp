// SPDX-License-Identifier: Apache-2.0
#include "iggy/session.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace iss::iggy {

// ---- the retry loops' time -------------------------------------------------------------------

const iss::clock& retry_clock(const client_options& opts) noexcept {
    return opts.clock ? *opts.clock : real_clock::instance();
}

// ---- the session -----------------------------------------------------------------------------

session::session(net::any_io_executor ex, client_options opts)
    : ex_{ex},
      opts_{std::move(opts)},
      log_{"iggy", {log::kv("server", fmt::format("{}:{}", opts_.host, opts_.port))}},
      own_sleeper_{ex},
      conn_{ex, opts_},
      lock_{ex},
      negotiation_{opts_.protocol},
      g1_{context()},
      g2_{context()} {}

transport_context session::context() {
    return transport_context{opts_, log_, stats_, retry_sleeper(),
                             [this](const iss::error& why) { session_lost(why); }};
}

void session::disconnect() noexcept {
    logged_in_ = false;
    conn_.close();
}

void session::shutdown() noexcept {
    conn_.shutdown();
    logged_in_ = false;
    if (pings_) pings_->interrupt();
    lock_.cancel_all();
}

void session::session_lost(const iss::error& why) {
    // The transport closed the connection already. Said at warn, since group work held for
    // this session is now someone else's.
    log_.warn({log::kv("generation", generation_)}, "the server ended the session: {}; the next call reconnects{}",
              describe(why), groups_.empty() ? "" : " and joins the consumer group(s) again (a new member)");
}

void session::remember_group(identifier stream, identifier topic, identifier group) {
    if (!has_joined(stream, topic, group)) groups_.push_back({std::move(stream), std::move(topic), std::move(group)});
}

void session::forget_group(const identifier& stream, const identifier& topic, const identifier& group) {
    std::erase_if(groups_,
                  [&](const group_ref& g) { return g.stream == stream && g.topic == topic && g.group == group; });
}

bool session::has_joined(const identifier& stream, const identifier& topic, const identifier& group) const noexcept {
    return std::any_of(groups_.begin(), groups_.end(),
                       [&](const group_ref& g) { return g.stream == stream && g.topic == topic && g.group == group; });
}

net::awaitable<result<proto::bytes_view>> session::exchange(const request& req, reply_slot slot) {
    out_.clear();
    if (auto r = wire_->encode(out_, req); !r) {
        if (r.error().code().category() == client_category()) co_return r.error();
        co_return iss::error{errc::invalid_request, r.error().message()};
    }
    co_return co_await wire_->exchange(conn_, out_, slot);
}

net::awaitable<result<proto::bytes_view>> session::call(const request& req, reply_slot slot) {
    auto g = co_await lock_.lock();
    if (closed()) co_return iss::error{errc::closed};
    if (!connected()) {
        if (auto r = co_await reconnect(); !r) co_return r.error();
    }
    co_return co_await exchange(req, slot);
}

net::awaitable<result<void>> session::ensure_connected() {
    auto g = co_await lock_.lock();
    if (closed()) co_return iss::error{errc::closed};
    if (!connected()) co_return co_await reconnect();
    co_return result<void>{};
}

net::awaitable<result<void>> session::connect_once() {
    logged_in_ = false;
    negotiation_.begin();
    for (;;) {
        const auto plan = negotiation_.plan();
        if (auto t = co_await conn_.open(); !t) co_return t.error();
        wire_ = proto::is_g2(plan.protocol) ? static_cast<transport*>(&g2_) : &g1_;
        auto login = co_await wire_->login(conn_, plan);
        const auto next = negotiation_.on_login(login.event);
        if (next.detected) {
            const auto found = negotiation_.detected().value_or(plan.protocol);
            if (login.event.what == proto::login_result::kind::no_g2_answer)
                log_.info("iggy.protocol auto: no G2 answer ({}); speaking 0.8 (G1)", describe(login.status.error()));
            else if (login.event.what == proto::login_result::kind::evicted)
                log_.info("iggy.protocol auto: moving to {}", proto::wire_protocol_name(found));
            else
                log_.info("iggy.protocol auto: the server speaks {} ({})", proto::wire_protocol_name(found),
                          login.server);
        }
        if (next.step == proto::negotiation_step::proceed) break;
        disconnect();
        if (next.step == proto::negotiation_step::fail) co_return login.status.error();
    }
    logged_in_ = true;
    ++generation_;
    if (generation_ > 1) ++stats_.reconnects;
    if (auto r = co_await rejoin(); !r) {
        disconnect();
        co_return r.error();
    }
    log_.info({log::kv("generation", generation_), log::kv("tls", opts_.tls.enabled),
               log::kv("protocol", proto::wire_protocol_name(wire_->protocol()))},
              "connected and logged in");
    start_pings();
    co_return result<void>{};
}

net::awaitable<result<void>> session::rejoin() {
    for (std::size_t i = 0; i < groups_.size();) {
        auto& g = groups_[i];
        const request req = proto::join_consumer_group_request{g.stream, g.topic, g.group};
        auto r = co_await exchange(req, reply_slot::general);
        if (!r) {
            if (classify(r.error()) == outcome::not_found) {
                log_.warn({log::kv("stream", proto::field_text(g.stream)), log::kv("topic", proto::field_text(g.topic)),
                           log::kv("group", proto::field_text(g.group))},
                          "re-join after reconnect: {}; the group is forgotten", describe(r.error()));
                groups_.erase(groups_.begin() + static_cast<std::ptrdiff_t>(i));
                continue;
            }
            co_return r.error();
        }
        ++i;
    }
    co_return result<void>{};
}

net::awaitable<result<void>> session::reconnect() {
    // The backoff goes on from where an earlier call that gave up left it (`failures_`), so a
    // caller that retries in a loop does not hammer the server; no deadline: the attempts
    // (`reconnect_attempts`, 0 = no limit) and the classification end the loop.
    retry_budget budget{
        {opts_.reconnect_backoff, opts_.reconnect_attempts, std::chrono::milliseconds{0}, true, failures_},
        retry_clock(opts_),
        rng_};
    if (failures_ > 0) {
        if (const auto wait = budget.next_wait()) co_await retry_sleeper().sleep_for(*wait);
        if (closed()) co_return iss::error{errc::closed};
    }
    result<void> r = iss::error{errc::connection_failed, "no connect attempt left"};
    while (budget.try_attempt()) {
        r = co_await connect_once();
        if (r) {
            failures_ = 0;
            co_return r;
        }
        if (closed()) co_return iss::error{errc::closed};
        // Authentication and other refusals are final: returned once, never retried; so is a
        // rejected certificate where the caller asked so.
        if (classify(r.error()) != outcome::retry) {
            const auto code = server_code(r.error());
            log_.error("connect: {} (not retried{})", describe(r.error()),
                       code && is_auth_code(*code) ? "; check iggy.username and iggy.password, or iggy.token" : "");
            co_return r.error();
        }
        if (r.error() == errc::certificate_rejected && !opts_.retry_rejected_certificate) {
            log_.error("connect: {} (not retried)", describe(r.error()));
            co_return r.error();
        }
        ++failures_;
        const auto wait = budget.next_wait();
        if (!wait) {
            log_.warn("connect: {} (attempt {}/{}, giving up)", describe(r.error()), budget.attempts(),
                      opts_.reconnect_attempts);
            co_return r.error();
        }
        log_.warn("connect: {} (attempt {}, retrying)", describe(r.error()), budget.attempts());
        co_await retry_sleeper().sleep_for(*wait);  // a caller's cancellation propagates (throws)
        if (closed()) co_return iss::error{errc::closed};
    }
    co_return r;
}

void session::start_pings() {
    if (opts_.ping_interval.count() <= 0) return;
    if (pings_) pings_->interrupt();
    // Its own sleeper: the keep-alive runs on real time, never on a test's injected sleeper.
    pings_ = std::make_shared<iss::asio_sleeper>(ex_);
    net::co_spawn(ex_, ping_loop(shared_from_this(), generation_, pings_), [log = log_](std::exception_ptr e) {
        // The loop ends on close, reconnect or a failed ping (logged there); anything thrown
        // here is a cancellation or a bug: log it, the next call reconnects.
        if (!e) return;
        try {
            std::rethrow_exception(e);
        } catch (const std::exception& x) {
            log.debug("ping task ended: {}", x.what());
        }
    });
}

net::awaitable<void> session::ping_loop(std::shared_ptr<session> self, std::uint64_t gen,
                                        std::shared_ptr<iss::sleeper> pings) {
    for (;;) {
        co_await pings->sleep_for(self->opts_.ping_interval);  // interrupt(): a new generation or shutdown
        if (self->closed() || self->generation_ != gen || !self->connected()) co_return;
        auto g = co_await self->lock_.lock();
        if (self->closed() || self->generation_ != gen || !self->connected()) co_return;
        const request req = proto::ping_request{};
        auto r = co_await self->exchange(req, reply_slot::general);
        if (!r) {
            self->log_.warn("ping failed: {}; the next call reconnects", describe(r.error()));
            co_return;
        }
    }
}

}  // namespace iss::iggy
