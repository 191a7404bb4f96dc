// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// What the JSON payload check (lib/format/json.cpp, `payload_checker`) is compared with in
/// tests/unit/format/json_test.cpp and tests/fuzz/json_check_fuzz.cpp: simdjson's DOM parser,
/// outside the inputs where the two differ by design (json.hpp).

#include <simdjson.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

namespace iss::test {

/// Whether `s` may hold a number where the checker and simdjson differ by design: more than
/// 15 digits in a row, or an exponent of 3 digits or more.
inline bool has_edge_number(std::string_view s) {
    std::size_t run = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        run = s[i] >= '0' && s[i] <= '9' ? run + 1 : 0;
        if (run > 15) return true;
        if (s[i] == 'e' || s[i] == 'E') {
            std::size_t j = i + 1;
            if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
            std::size_t digits = 0;
            while (j < s.size() && s[j] >= '0' && s[j] <= '9') ++j, ++digits;
            if (digits >= 3) return true;
        }
    }
    return false;
}

/// Whether the checker and simdjson differ on `s` by design: an edge number, or more than
/// 1000 brackets and braces (nesting past the checker's max_depth).
inline bool differs_by_design(std::string_view s) {
    return has_edge_number(s) || std::count(s.begin(), s.end(), '[') + std::count(s.begin(), s.end(), '{') > 1000;
}

/// simdjson's DOM verdict on `s`.
inline bool simdjson_accepts(simdjson::dom::parser& p, std::string_view s) {
    const simdjson::padded_string padded{s};
    simdjson::dom::element e;
    return p.parse(padded).get(e) == simdjson::SUCCESS;
}

/// simdjson's minified text of `s` (empty when minify fails).
inline std::string simdjson_minified(std::string_view s) {
    std::string out(s.size(), '\0');
    std::size_t n = 0;
    if (simdjson::minify(s.data(), s.size(), out.data(), n) != simdjson::SUCCESS) return {};
    out.resize(n);
    return out;
}

}  // namespace iss::test
