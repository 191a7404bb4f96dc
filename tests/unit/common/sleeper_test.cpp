// SPDX-License-Identifier: Apache-2.0
// common/net/sleeper.hpp: the production sleeper. Sleeps on one sleeper do not cut each other
// short; interrupt() wakes every sleep in progress (a normal return) and no later one; a
// cancelled sleep throws operation_aborted. No test measures time: the sleeps that must not end
// are an hour long, and the event loop is only polled past them.
#include "common/net/sleeper.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include "catch2_compat.hpp"

#include <chrono>
#include <exception>
#include <optional>
#include <string>

namespace net = boost::asio;
using namespace std::chrono_literals;

namespace {
/// How a spawned sleep ended: not yet, returned, or threw (the exception's code).
struct outcome {
    bool done = false;
    std::optional<boost::system::error_code> thrown;
};

auto record(outcome& o) {
    return [&o](std::exception_ptr e) {
        o.done = true;
        try {
            if (e) std::rethrow_exception(e);
        } catch (const boost::system::system_error& x) {
            o.thrown = x.code();
        }
    };
}
}  // namespace

TEST_CASE("asio_sleeper: a short sleep does not end a long one in progress on the same sleeper", "[net][sleeper]") {
    net::io_context ioc{1};
    iss::asio_sleeper s{ioc.get_executor()};
    outcome hour, none;
    net::co_spawn(ioc, s.sleep_for(1h), record(hour));
    net::co_spawn(ioc, s.sleep_for(0ms), record(none));
    while (!none.done) ioc.run_one();
    ioc.poll();
    CHECK_FALSE(none.thrown);
    CHECK_FALSE(hour.done);  // still sleeping: the second sleep did not cancel the first
    s.interrupt();
    ioc.run();
    CHECK(hour.done);
    CHECK_FALSE(hour.thrown);
}

TEST_CASE("asio_sleeper: interrupt wakes every sleep in progress, normally, and no later one", "[net][sleeper]") {
    net::io_context ioc{1};
    iss::asio_sleeper s{ioc.get_executor()};
    outcome a, b, later;
    net::co_spawn(ioc, s.sleep_for(1h), record(a));
    net::co_spawn(ioc, s.sleep_for(2h), record(b));
    ioc.poll();  // both are sleeping
    REQUIRE_FALSE(a.done);
    REQUIRE_FALSE(b.done);
    s.interrupt();
    ioc.poll();
    CHECK(a.done);
    CHECK(b.done);
    CHECK_FALSE(a.thrown);  // a wake-up, not a cancellation
    CHECK_FALSE(b.thrown);
    ioc.restart();  // it ran out of work
    net::co_spawn(ioc, s.sleep_for(1h), record(later));
    ioc.poll();
    CHECK_FALSE(later.done);  // waits in full
    s.interrupt();
    ioc.run();
    CHECK(later.done);
}

TEST_CASE("asio_sleeper: a cancelled sleep throws operation_aborted; the others sleep on", "[net][sleeper]") {
    net::io_context ioc{1};
    iss::asio_sleeper s{ioc.get_executor()};
    net::cancellation_signal stop;
    outcome cancelled, other;
    net::co_spawn(ioc, s.sleep_for(1h), net::bind_cancellation_slot(stop.slot(), record(cancelled)));
    net::co_spawn(ioc, s.sleep_for(1h), record(other));
    ioc.poll();
    stop.emit(net::cancellation_type::terminal);
    ioc.poll();
    REQUIRE(cancelled.done);
    REQUIRE(cancelled.thrown);
    CHECK(*cancelled.thrown == net::error::operation_aborted);
    CHECK_FALSE(other.done);
    s.interrupt();  // the cancelled sleep left the sleeper's list: only `other` is woken
    ioc.run();
    CHECK(other.done);
    CHECK_FALSE(other.thrown);
}
