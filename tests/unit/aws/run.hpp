// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs one coroutine to completion on a test io_context (servers keep the context busy, so
// the completion handler stops it).
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <exception>
#include <functional>
#include <optional>

namespace iss::test {

template <class T>
T run(boost::asio::io_context& ioc, std::function<boost::asio::awaitable<T>()> task) {
    std::optional<T> out;
    std::exception_ptr err;
    boost::asio::co_spawn(ioc, task(), [&](std::exception_ptr e, T v) {
        err = e;
        if (!e) out = std::move(v);
        ioc.stop();
    });
    ioc.restart();
    ioc.run();
    if (err) std::rethrow_exception(err);
    return std::move(*out);
}

}  // namespace iss::test
