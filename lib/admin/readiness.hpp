// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// `GET /readyz` and systemd's READY=1: the daemon is ready when Iggy is connected and logged
/// in, the store was probed usable, and (consumer-group mode) the group is joined. This file
/// turns those facts into the lines /readyz answers, one per unmet condition.

#include <string>
#include <vector>

namespace iss::admin {

/// The facts readiness is made of, as the daemon knows them at the moment of the question.
struct readiness_inputs {
    bool store_usable = false;    ///< the start-up probe of the bucket succeeded
    bool iggy_connected = false;  ///< connected and logged in (iggy::client::connected)
    bool group_mode = false;      ///< iggy.consumer_group is set
    bool group_joined = false;    ///< every configured topic's group joined (consumer_loop::joined)
    bool stopping = false;        ///< a stop signal arrived
};

/// One line per unmet condition, in a fixed order (store, iggy, group, stopping); empty when
/// ready.
[[nodiscard]] std::vector<std::string> unmet_conditions(const readiness_inputs& in);

}  // namespace iss::admin
