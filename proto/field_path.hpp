// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The dotted names the decoders give a field in their errors (`topic.name`,
/// `consumer_group.members[2]`): one way to build them for every codec of proto/.

#include <cstddef>
#include <string>
#include <string_view>

namespace iss::proto {

/// `prefix.name`.
[[nodiscard]] inline std::string field_path(std::string_view prefix, std::string_view name) {
    std::string s;
    s.reserve(prefix.size() + 1 + name.size());
    s += prefix;
    s += '.';
    s += name;
    return s;
}

/// `prefix.list[i]`.
[[nodiscard]] inline std::string field_path(std::string_view prefix, std::string_view list, std::size_t i) {
    std::string s = field_path(prefix, list);
    s += '[';
    s += std::to_string(i);
    s += ']';
    return s;
}

}  // namespace iss::proto
