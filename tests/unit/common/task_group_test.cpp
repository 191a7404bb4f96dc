// SPDX-License-Identifier: Apache-2.0
// common/net/task_group.hpp: wait resumes after the LAST child, results reach the callback,
// the first exception is rethrown after every child finished.
#include "common/net/task_group.hpp"

#include "run_coro.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_future.hpp>

#include "catch2_compat.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace net = boost::asio;

namespace {
net::awaitable<std::size_t> child(std::size_t turns, std::vector<std::size_t>& finished) {
    auto ex = co_await net::this_coro::executor;
    for (std::size_t i = 0; i < turns; ++i) co_await net::post(ex, net::use_awaitable);
    finished.push_back(turns);
    co_return turns * 10;
}

net::awaitable<void> failing(std::size_t turns, std::string what) {
    auto ex = co_await net::this_coro::executor;
    for (std::size_t i = 0; i < turns; ++i) co_await net::post(ex, net::use_awaitable);
    throw std::runtime_error{what};
}

using test::run;
}  // namespace

TEST_CASE("task group: wait resumes after the last child, with every result", "[net][task_group]") {
    std::vector<std::size_t> finished;
    const auto total = run([&](net::any_io_executor ex) -> net::awaitable<std::size_t> {
        iss::task_group g{ex};
        std::size_t sum = 0;
        for (std::size_t turns : {5u, 1u, 3u}) g.spawn(child(turns, finished), [&](std::size_t n) { sum += n; });
        CHECK(g.running() == 3);
        co_await g.wait();
        CHECK(g.running() == 0);
        CHECK(finished.size() == 3);  // all done before wait returned
        co_return sum;
    });
    CHECK(total == 90);
    CHECK(finished == std::vector<std::size_t>{1, 3, 5});
}

TEST_CASE("task group: the first exception is rethrown, after the other children finished", "[net][task_group]") {
    std::vector<std::size_t> finished;
    std::string caught;
    run([&](net::any_io_executor ex) -> net::awaitable<void> {
        iss::task_group g{ex};
        g.spawn(failing(1, "first"));
        g.spawn(failing(2, "second"));
        g.spawn(child(6, finished), [](std::size_t) {});
        try {
            co_await g.wait();
        } catch (const std::runtime_error& e) {
            caught = e.what();
        }
        CHECK(finished == std::vector<std::size_t>{6});  // the slow child was waited for
    });
    CHECK(caught == "first");
}

TEST_CASE("task group: wait with no child returns at once", "[net][task_group]") {
    run([](net::any_io_executor ex) -> net::awaitable<void> {
        iss::task_group g{ex};
        co_await g.wait();
        CHECK(g.running() == 0);
    });
}
