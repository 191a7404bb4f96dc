// SPDX-License-Identifier: Apache-2.0
#include "common/net/sleeper.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace iss {

namespace net = boost::asio;

struct asio_sleeper::waiter {
    net::steady_timer timer;
    bool woken = false;  ///< ended by interrupt(), not by a cancellation
};

net::awaitable<void> asio_sleeper::sleep_for(std::chrono::milliseconds d) {
    waiter w{net::steady_timer{ex_, d}};
    waiting_.push_back(&w);
    // Leaves the list however the frame ends (resumed, or destroyed by a shutting-down executor).
    struct unlist {
        std::list<waiter*>& l;
        std::list<waiter*>::iterator it;
        ~unlist() { l.erase(it); }
    } guard{waiting_, std::prev(waiting_.end())};
    // as_tuple: operation_aborted is either interrupt() (a wake-up) or a cancellation, told apart
    // by `woken`.
    auto [ec] = co_await w.timer.async_wait(net::as_tuple(net::use_awaitable));
    if (ec == net::error::operation_aborted && !w.woken) throw boost::system::system_error{ec};
}

void asio_sleeper::interrupt() {
    for (waiter* w : waiting_) {
        w->woken = true;
        w->timer.cancel();
    }
}

}  // namespace iss
