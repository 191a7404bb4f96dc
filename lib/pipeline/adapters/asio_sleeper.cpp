// SPDX-License-Identifier: Apache-2.0
#include "pipeline/adapters/asio_sleeper.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace iss::pipeline {

namespace net = boost::asio;

task<void> asio_sleeper::sleep_for(std::chrono::milliseconds d) {
    timer_.expires_after(d);
    // operation_aborted is the expected outcome of interrupt(): not an error.
    auto [ec] = co_await timer_.async_wait(net::as_tuple(net::use_awaitable));
    (void)ec;
}

void asio_sleeper::interrupt() {
    // Ends the wait in progress only: later waits (retry backoffs while the stop uploads what
    // is buffered) must still wait, or a failing store would be hammered until the grace ends.
    timer_.cancel();
}

}  // namespace iss::pipeline
