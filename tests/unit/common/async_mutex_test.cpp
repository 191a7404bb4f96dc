// SPDX-License-Identifier: Apache-2.0
// common/net/async_mutex.hpp: one holder at a time, waiters served in arrival order, a
// cancelled waiter leaves the queue, cancel_all wakes everyone.
#include "common/net/async_mutex.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "catch2_compat.hpp"

#include <string>
#include <vector>

namespace net = boost::asio;

namespace {
/// Yields to the event loop once (other ready coroutines run).
net::awaitable<void> yield() { co_await net::post(co_await net::this_coro::executor, net::use_awaitable); }

/// Takes the mutex, records entry and exit around `turns` yields.
net::awaitable<void> critical(iss::async_mutex& m, std::vector<std::string>& log, std::string name, int turns) {
    auto g = co_await m.lock();
    log.push_back(name + "+");
    for (int i = 0; i < turns; ++i) co_await yield();
    log.push_back(name + "-");
}
}  // namespace

TEST_CASE("async mutex: one holder at a time, waiters in arrival order", "[net][mutex]") {
    net::io_context ioc{1};
    iss::async_mutex m{ioc.get_executor()};
    std::vector<std::string> log;
    for (const char* n : {"a", "b", "c"}) net::co_spawn(ioc, critical(m, log, n, 3), net::detached);
    ioc.run();
    CHECK(log == std::vector<std::string>{"a+", "a-", "b+", "b-", "c+", "c-"});
    CHECK_FALSE(m.locked());
    CHECK(m.waiting() == 0);
}

TEST_CASE("async mutex: a waiter cancelled in the queue throws and never holds it", "[net][mutex]") {
    net::io_context ioc{1};
    iss::async_mutex m{ioc.get_executor()};
    std::vector<std::string> log;
    net::cancellation_signal stop_b;
    bool b_aborted = false;
    net::co_spawn(ioc, critical(m, log, "a", 5), net::detached);
    net::co_spawn(ioc, critical(m, log, "b", 1), net::bind_cancellation_slot(stop_b.slot(), [&](std::exception_ptr e) {
                      try {
                          if (e) std::rethrow_exception(e);
                      } catch (const boost::system::system_error& x) {
                          b_aborted = x.code() == net::error::operation_aborted;
                      }
                  }));
    net::co_spawn(ioc, critical(m, log, "c", 1), net::detached);
    net::co_spawn(
        ioc,
        [&]() -> net::awaitable<void> {
            co_await yield();  // a holds it, b and c wait
            CHECK(m.waiting() == 2);
            stop_b.emit(net::cancellation_type::terminal);
        },
        net::detached);
    ioc.run();
    CHECK(b_aborted);
    CHECK(log == std::vector<std::string>{"a+", "a-", "c+", "c-"});
    CHECK_FALSE(m.locked());
}

TEST_CASE("async mutex: cancel_all wakes the waiters, who take it in turn", "[net][mutex]") {
    net::io_context ioc{1};
    iss::async_mutex m{ioc.get_executor()};
    std::vector<std::string> log;
    net::co_spawn(ioc, critical(m, log, "a", 4), net::detached);
    net::co_spawn(ioc, critical(m, log, "b", 1), net::detached);
    net::co_spawn(ioc, critical(m, log, "c", 1), net::detached);
    net::co_spawn(
        ioc,
        [&]() -> net::awaitable<void> {
            co_await yield();
            m.cancel_all();  // b and c wake, find it held, queue again
        },
        net::detached);
    ioc.run();
    REQUIRE(log.size() == 6);
    CHECK(log[0] == "a+");
    CHECK(log[1] == "a-");
    // Never two holders: each entry is followed by its own exit.
    for (std::size_t i = 0; i < log.size(); i += 2) CHECK(log[i].substr(0, 1) == log[i + 1].substr(0, 1));
    CHECK_FALSE(m.locked());
}
