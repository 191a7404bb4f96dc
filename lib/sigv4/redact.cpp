// SPDX-License-Identifier: Apache-2.0
#include "sigv4/redact.hpp"

#include "common/types.hpp"

#include <array>

namespace iss::sigv4 {

namespace {

bool iequals_prefix(std::string_view s, std::string_view prefix) noexcept {
    if (s.size() < prefix.size()) return false;
    for (std::size_t i = 0; i < prefix.size(); ++i) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        if (c != prefix[i]) return false;
    }
    return true;
}

// Redacts query parameter values in one line ("...X-Amz-Signature=abc&..." -> "...=****&...").
std::string redact_query_values(std::string_view line) {
    static constexpr std::array<std::string_view, 3> names = {
        "x-amz-security-token=", "x-amz-signature=", "x-amz-credential="};
    std::string out;
    std::size_t i = 0;
    while (i < line.size()) {
        const bool at_param_start = i == 0 || line[i - 1] == '&' || line[i - 1] == '?';
        bool matched = false;
        if (at_param_start) {
            for (const auto n : names) {
                if (iequals_prefix(line.substr(i), n)) {
                    out += line.substr(i, n.size());
                    out += redacted;
                    i += n.size();
                    while (i < line.size() && line[i] != '&' && line[i] != ' ') ++i;
                    matched = true;
                    break;
                }
            }
        }
        if (!matched) out.push_back(line[i++]);
    }
    return out;
}

}  // namespace

std::string redact_signing_text(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    std::size_t pos = 0;
    while (pos <= text.size()) {
        const auto nl = text.find('\n', pos);
        const std::string_view line =
            text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
        if (iequals_prefix(line, "x-amz-security-token:") || iequals_prefix(line, "authorization:") ||
            iequals_prefix(line, "x-amz-server-side-encryption-customer-key:")) {
            out += line.substr(0, line.find(':') + 1);
            out += redacted;
        } else {
            out += redact_query_values(line);
        }
        if (nl == std::string_view::npos) break;
        out.push_back('\n');
        pos = nl + 1;
    }
    return out;
}

}  // namespace iss::sigv4
