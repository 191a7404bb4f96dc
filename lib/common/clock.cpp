// SPDX-License-Identifier: Apache-2.0
#include "common/clock.hpp"

#include <cassert>

namespace iss {

real_clock& real_clock::instance() {
    static real_clock c;
    return c;
}

manual_clock::manual_clock(system_time start) : system_{start}, steady_{std::chrono::hours{24}} {}

clock::system_time manual_clock::system_now() const {
    std::lock_guard lk{mu_};
    return system_;
}

clock::steady_time manual_clock::steady_now() const {
    std::lock_guard lk{mu_};
    return steady_;
}

void manual_clock::advance(std::chrono::nanoseconds d) {
    assert(d.count() >= 0);
    std::lock_guard lk{mu_};
    system_ += std::chrono::duration_cast<std::chrono::system_clock::duration>(d);
    steady_ += std::chrono::duration_cast<std::chrono::steady_clock::duration>(d);
}

void manual_clock::set_system(system_time t) {
    std::lock_guard lk{mu_};
    system_ = t;
}

}  // namespace iss
