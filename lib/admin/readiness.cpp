// SPDX-License-Identifier: Apache-2.0
#include "admin/readiness.hpp"

namespace iss::admin {

std::vector<std::string> unmet_conditions(const readiness_inputs& in) {
    std::vector<std::string> out;
    if (!in.store_usable) out.emplace_back("store: not probed usable yet (see the s3 log lines)");
    if (!in.iggy_connected) out.emplace_back("iggy: not connected and logged in");
    if (in.group_mode && !in.group_joined) out.emplace_back("iggy: consumer group not joined");
    if (in.stopping) out.emplace_back("stopping: a stop signal arrived");
    return out;
}

}  // namespace iss::admin
