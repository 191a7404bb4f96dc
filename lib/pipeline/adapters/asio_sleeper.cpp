#include "pipeline/adapters/asio_sleeper.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace iss::pipeline {

namespace net = boost::asio;

task<void> asio_sleeper::sleep_for(std::chrono::milliseconds d) {
    if (interrupted_) co_return;  // stopping: backoffs and poll waits end at once
    timer_.expires_after(d);
    // operation_aborted is the expected outcome of interrupt(): not an error.
    auto [ec] = co_await timer_.async_wait(net::as_tuple(net::use_awaitable));
    (void)ec;
}

void asio_sleeper::interrupt() {
    interrupted_ = true;
    timer_.cancel();
}

}  // namespace iss::pipeline
