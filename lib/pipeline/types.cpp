// SPDX-License-Identifier: Apache-2.0
#include "pipeline/types.hpp"

#include "pipeline/error.hpp"

#include <charconv>

namespace iss::pipeline {

std::vector<std::pair<std::string, std::string>> to_user_metadata(const object_range& r) {
    return {
        {std::string{meta_first_offset}, std::to_string(r.first_offset)},
        {std::string{meta_last_offset}, std::to_string(r.last_offset)},
        {std::string{meta_count}, std::to_string(r.count)},
    };
}

namespace {
result<std::uint64_t> read_u64(const user_metadata& m, std::string_view name) {
    auto it = m.find(name);
    if (it == m.end()) return error{errc::bad_object_metadata, std::string{name} + " missing"};
    const std::string& s = it->second;
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc{} || p != s.data() + s.size())
        return error{errc::bad_object_metadata, fmt::format("{}={:?} is not a decimal u64", name, s)};
    return v;
}
}  // namespace

result<object_range> from_user_metadata(const user_metadata& m) {
    auto first = read_u64(m, meta_first_offset);
    if (!first) return first.error();
    auto last = read_u64(m, meta_last_offset);
    if (!last) return last.error();
    auto count = read_u64(m, meta_count);
    if (!count) return count.error();
    if (*last < *first) return error{errc::bad_object_metadata, "iggy-last-offset < iggy-first-offset"};
    return object_range{*first, *last, *count};
}

}  // namespace iss::pipeline
