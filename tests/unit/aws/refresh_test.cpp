// SPDX-License-Identifier: Apache-2.0
#include "aws/refresh.hpp"

#include "aws/error.hpp"
#include "run.hpp"
#include "tests/support/clock_sleeper.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "catch2_compat.hpp"

using namespace iss;
using namespace iss::aws;
namespace net = boost::asio;
using namespace std::chrono_literals;

namespace {

/// A provider that hands out keys "K1", "K2"... valid `lifetime` from the manual clock's
/// now, after a short real delay (so concurrent callers overlap), or fails while `fail` > 0.
class counting_provider final : public provider {
public:
    counting_provider(net::any_io_executor ex, const manual_clock& c, std::chrono::seconds l)
        : ex_{ex}, clk_{c}, lifetime{l} {}
    task<result<identity>> fetch() override {
        ++fetches;
        net::steady_timer t{ex_};
        t.expires_after(20ms);
        co_await t.async_wait(net::as_tuple(net::use_awaitable));
        if (fail > 0) {
            --fail;
            co_return iss::error{aws::errc::fetch_failed, "injected"};
        }
        identity id;
        id.keys = {access_key_id{"K" + std::to_string(fetches)}, secret_access_key{"S" + std::to_string(fetches)},
                   session_token{"T"}};
        id.expiry = clk_.system_now() + lifetime;
        id.source = "test";
        co_return id;
    }
    std::string name() const override { return "test"; }
    int fetches = 0;
    int fail = 0;

private:
    net::any_io_executor ex_;
    const manual_clock& clk_;

public:
    std::chrono::seconds lifetime;
};

}  // namespace

TEST_CASE("refresh time: 5 minutes before a long expiry, at three quarters of a short lifetime", "[aws]") {
    const system_time t0{std::chrono::seconds{1'800'000'000}};
    CHECK(refresh_time(t0, t0 + 1h, 300s) == t0 + 55min);
    CHECK(refresh_time(t0, t0 + 15min, 300s) == t0 + 15min - 225s);
    CHECK(refresh_time(t0, t0 + 4s, 300s) == t0 + 3s);
    CHECK(usable_until(t0, t0 + 1h) == t0 + 1h - 10s);
    CHECK(usable_until(t0, t0 + 4s) == t0 + 4s - 400ms);
}

TEST_CASE("concurrent callers with expired credentials share one fetch", "[aws]") {
    net::io_context ioc{1};
    manual_clock clk;
    auto p = std::make_shared<counting_provider>(ioc.get_executor(), clk, 60s);
    auto src = std::make_shared<refreshing_source>(ioc.get_executor(), p, clk);
    auto first = test::run<result<identity>>(ioc, [&]() { return src->start(false); });
    REQUIRE(first.has_value());
    CHECK(p->fetches == 1);
    clk.advance(61s);  // expired
    std::vector<std::string> got;
    int done = 0;
    for (int i = 0; i < 5; ++i) {
        net::co_spawn(ioc, src->current(), [&](std::exception_ptr, result<signing_credentials> r) {
            REQUIRE(r.has_value());
            got.push_back(r->keys.access_key_id.get());
            if (++done == 5) ioc.stop();
        });
    }
    ioc.restart();
    ioc.run();
    CHECK(p->fetches == 2);
    CHECK(got == std::vector<std::string>(5, "K2"));
    src->stop();
}

TEST_CASE("credentials still valid are answered from memory without a fetch", "[aws]") {
    net::io_context ioc{1};
    manual_clock clk;
    auto p = std::make_shared<counting_provider>(ioc.get_executor(), clk, 3600s);
    auto src = std::make_shared<refreshing_source>(ioc.get_executor(), p, clk);
    REQUIRE((test::run<result<identity>>(ioc, [&]() { return src->start(false); })).has_value());
    clk.advance(30min);
    for (int i = 0; i < 3; ++i) {
        auto r = test::run<result<signing_credentials>>(ioc, [&]() { return src->current(); });
        REQUIRE(r.has_value());
        CHECK(r->generation == 1);
    }
    CHECK(p->fetches == 1);
    src->stop();
}

TEST_CASE("expiry is judged on the monotonic clock: wall-clock steps neither renew nor keep expired keys", "[aws]") {
    net::io_context ioc{1};
    manual_clock clk;
    auto p = std::make_shared<counting_provider>(ioc.get_executor(), clk, 3600s);
    auto src = std::make_shared<refreshing_source>(ioc.get_executor(), p, clk);
    REQUIRE((test::run<result<identity>>(ioc, [&]() { return src->start(false); })).has_value());
    const auto fetched_at = clk.system_now();
    // NTP steps the wall clock 2 h forward: by the wall clock the keys expired an hour ago, but
    // only a minute of their lifetime has passed.
    clk.advance(1min);
    clk.set_system(fetched_at + 2h);
    auto r = test::run<result<signing_credentials>>(ioc, [&]() { return src->current(); });
    REQUIRE(r.has_value());
    CHECK(r->generation == 1);
    CHECK(p->fetches == 1);
    // Stepped 2 h back: by the wall clock the keys have most of an hour left, but their hour
    // has passed on the monotonic clock: a fetch.
    clk.set_system(fetched_at - 2h);
    clk.advance(60min);
    r = test::run<result<signing_credentials>>(ioc, [&]() { return src->current(); });
    REQUIRE(r.has_value());
    CHECK(r->generation == 2);
    CHECK(p->fetches == 2);
    src->stop();
}

TEST_CASE("a rejection of an old generation does not fetch again; of the current one it does, once", "[aws]") {
    net::io_context ioc{1};
    manual_clock clk;
    auto p = std::make_shared<counting_provider>(ioc.get_executor(), clk, 3600s);
    auto src = std::make_shared<refreshing_source>(ioc.get_executor(), p, clk);
    REQUIRE((test::run<result<identity>>(ioc, [&]() { return src->start(false); })).has_value());
    // Three uploads rejected at once with generation 1: one fetch, all get generation 2.
    int done = 0;
    std::vector<std::uint64_t> gens;
    for (int i = 0; i < 3; ++i) {
        net::co_spawn(ioc, src->refresh_rejected(1), [&](std::exception_ptr, result<signing_credentials> r) {
            REQUIRE(r.has_value());
            gens.push_back(r->generation);
            if (++done == 3) ioc.stop();
        });
    }
    ioc.restart();
    ioc.run();
    CHECK(p->fetches == 2);
    CHECK(gens == std::vector<std::uint64_t>{2, 2, 2});
    auto late = test::run<result<signing_credentials>>(ioc, [&]() { return src->refresh_rejected(1); });
    REQUIRE(late.has_value());
    CHECK(late->generation == 2);
    CHECK(p->fetches == 2);
    CHECK(src->stats().forced == 3);
    src->stop();
}

TEST_CASE("a failed refresh keeps the old credentials while they are valid, and fails once they expired", "[aws]") {
    net::io_context ioc{1};
    manual_clock clk;
    auto p = std::make_shared<counting_provider>(ioc.get_executor(), clk, 100s);
    auto src = std::make_shared<refreshing_source>(ioc.get_executor(), p, clk);
    REQUIRE((test::run<result<identity>>(ioc, [&]() { return src->start(false); })).has_value());
    p->fail = 100;
    clk.advance(80s);  // past the refresh time (75 s), still usable (until 90 s)
    auto r = test::run<result<signing_credentials>>(ioc, [&]() { return src->current(); });
    REQUIRE(r.has_value());
    CHECK(r->keys.access_key_id.get() == "K1");
    clk.advance(15s);  // past usable
    auto expired = test::run<result<signing_credentials>>(ioc, [&]() { return src->current(); });
    REQUIRE_FALSE(expired.has_value());
    CHECK(expired.error() == aws::errc::fetch_failed);
    p->fail = 0;
    auto back = test::run<result<signing_credentials>>(ioc, [&]() { return src->current(); });
    REQUIRE(back.has_value());
    CHECK(back->generation == 2);
    src->stop();
}

TEST_CASE("start retries transient failures, then gives up with the provider's error", "[aws]") {
    net::io_context ioc{1};
    manual_clock clk;
    auto p = std::make_shared<counting_provider>(ioc.get_executor(), clk, 100s);
    p->fail = 2;
    iss::test::clock_sleeper sleeper{clk};
    refresh_options o;
    o.retry = {1ms, 2ms};
    o.sleeper = &sleeper;
    auto src = std::make_shared<refreshing_source>(ioc.get_executor(), p, clk, o);
    auto r = test::run<result<identity>>(ioc, [&]() { return src->start(false); });
    REQUIRE(r.has_value());
    CHECK(p->fetches == 3);
    // The two waits went through the sleeper (at least 50 ms each), on the manual clock.
    CHECK(sleeper.waits == std::vector<std::chrono::milliseconds>(2, 50ms));
    p->fail = 5;
    auto src2 = std::make_shared<refreshing_source>(ioc.get_executor(), p, clk, o);
    auto r2 = test::run<result<identity>>(ioc, [&]() { return src2->start(false); });
    REQUIRE_FALSE(r2.has_value());
    CHECK(r2.error() == aws::errc::fetch_failed);
}
