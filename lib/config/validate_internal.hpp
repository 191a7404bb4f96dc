// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// What the parts of `validate()` share (lib/config/validate.cpp; the `s3` section's rules in
/// validate_s3.cpp): the limits they check against, the problem collector and the text
/// checks. Internal to lib/config.

#include "config/config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace iss::config::detail {

constexpr std::size_t max_name_bytes = 255;              // Iggy names: 1..255 bytes
constexpr milliseconds group_handover{30'000};           // Iggy 0.8 forces a hand-over after 30 s
constexpr milliseconds group_deadline_max{25'000};       // leaves 5 s to finish and commit
constexpr std::uint64_t max_parts = 10'000;              // S3 multipart limit
constexpr std::uint64_t max_object = 5ULL * 1024 * gib;  // S3 object limit (5 TiB)
constexpr std::size_t max_key_bytes = 1024;              // S3 key limit

/// Collects problems: `add("s3.part_size", "must be >= {}", x)`.
struct collector {
    std::vector<problem> out;
    template <class... A>
    void operator()(std::string path, fmt::format_string<A...> f, A&&... a) {
        out.push_back(problem{std::move(path), fmt::format(f, std::forward<A>(a)...), 0});
    }
};

/// Whether `s` is well-formed UTF-8 (no overlong or surrogate check: Iggy's own rule).
inline bool valid_utf8(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        std::size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (n == 0 || i + n > s.size()) return false;
        for (std::size_t j = 1; j < n; ++j)
            if ((static_cast<unsigned char>(s[i + j]) & 0xC0) != 0x80) return false;
        i += n;
    }
    return true;
}

/// Whether `s` holds a C0 control character or DEL.
inline bool has_control(std::string_view s) {
    return std::any_of(s.begin(), s.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u < 0x20 || u == 0x7f;
    });
}

/// `url` (`scheme://authority...` or a bare `authority...`) with the user info of its authority
/// (`user:password@`, RFC 3986 §3.2.1) shown as `****@`, for messages that quote it: a password
/// never appears in an error. Unchanged when there is none.
inline std::string without_user_info(std::string_view url) {
    const auto scheme = url.find("://");
    const std::size_t start = scheme == std::string_view::npos ? 0 : scheme + 3;
    const auto end = std::min(url.find_first_of("/?#", start), url.size());
    const auto at = url.substr(start, end - start).rfind('@');
    if (at == std::string_view::npos) return std::string{url};
    return std::string{url.substr(0, start)} + "****" + std::string{url.substr(start + at)};
}

/// The `s3` section's rules: endpoint, region, addressing, credentials and the AWS access
/// settings, part size, retry (group mode: `s3.retry.deadline` under the hand-over).
void check_s3(collector& add, const sink_config& c);

/// The `iceberg` section's rules (validate_iceberg.cpp): the format must be parquet, the
/// catalog URI and the chosen auth's keys, the table name's placeholders, the partition
/// transforms against the columns.
void check_iceberg(collector& add, const sink_config& c);

}  // namespace iss::config::detail
