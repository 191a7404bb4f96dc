// SPDX-License-Identifier: Apache-2.0
#include "daemon/verify_keys.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace iss::app {

key_stem stem_of(const pipeline::key_namer& namer, const pipeline::partition_ref& p, std::uint64_t topic_created) {
    const std::string a = namer.key_in(p, 0, topic_created).get();
    const std::string b = namer.key_in(p, 1, topic_created).get();
    std::size_t i = 0;
    while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
    std::size_t j = 0;
    while (j < a.size() - i && j < b.size() - i && a[a.size() - 1 - j] == b[b.size() - 1 - j]) ++j;
    std::string before = a.substr(0, i);
    // Zero padding of the offset is part of the number, not of the stem.
    while (!before.empty() && before.back() == '0') before.pop_back();
    return {p, std::move(before), a.substr(a.size() - j)};
}

bool matches(const key_stem& s, std::string_view key) {
    if (key.size() <= s.before.size() + s.after.size() || !key.starts_with(s.before) || !key.ends_with(s.after))
        return false;
    const auto mid = key.substr(s.before.size(), key.size() - s.before.size() - s.after.size());
    return std::all_of(mid.begin(), mid.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<std::uint32_t> data_file_partition(std::string_view key, const pipeline::topic_ref& t) {
    const auto slash = key.rfind('/');
    const auto name = slash == std::string_view::npos ? key : key.substr(slash + 1);
    const std::string head = fmt::format("{}+{}+", t.stream, t.topic);
    if (!name.starts_with(head) || !name.ends_with(".parquet")) return std::nullopt;
    const auto rest = name.substr(head.size(), name.size() - head.size() - std::string_view{".parquet"}.size());
    const auto plus = rest.find('+');
    if (plus == std::string_view::npos || plus == 0 || rest.size() - plus - 1 != 20) return std::nullopt;
    std::uint32_t id = 0;
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + plus, id);
    if (ec != std::errc{} || end != rest.data() + plus) return std::nullopt;
    const auto digits = rest.substr(plus + 1);
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
    return id;
}

}  // namespace iss::app
