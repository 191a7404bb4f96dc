// SPDX-License-Identifier: Apache-2.0
#pragma once
// For the common/net tests: runs the coroutine `f(executor)` on a fresh one-thread io_context
// until everything on it is done, and returns its result (rethrows its exception).
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

namespace test {
template <class F>
auto run(F f) {
    boost::asio::io_context ioc{1};
    auto fut = boost::asio::co_spawn(ioc, f(ioc.get_executor()), boost::asio::use_future);
    ioc.run();
    return fut.get();
}
}  // namespace test
