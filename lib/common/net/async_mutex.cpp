// SPDX-License-Identifier: Apache-2.0
#include "common/net/async_mutex.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>

namespace iss {

namespace net = boost::asio;

net::awaitable<async_mutex::guard> async_mutex::lock() {
    while (busy_) {
        auto t = std::make_shared<net::steady_timer>(ex_, net::steady_timer::time_point::max());
        waiters_.push_back(t);
        co_await t->async_wait(net::as_tuple(net::use_awaitable));  // woken by cancel() from unlock() or cancel_all()
        std::erase(waiters_, t);
        auto cs = co_await net::this_coro::cancellation_state;
        if (cs.cancelled() != net::cancellation_type::none)
            throw boost::system::system_error{net::error::operation_aborted};
    }
    busy_ = true;
    co_return guard{this};
}

void async_mutex::unlock() noexcept {
    busy_ = false;
    if (!waiters_.empty()) {
        auto t = waiters_.front();
        waiters_.pop_front();
        t->cancel();
    }
}

void async_mutex::cancel_all() noexcept {
    for (auto& w : waiters_) w->cancel();
}

}  // namespace iss
