// SPDX-License-Identifier: Apache-2.0
#pragma once
// Helpers for the proto tests: hex <-> bytes, reading the shared Iggy captures.

#include "proto/wire.hpp"

#include "catch2_compat.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>

namespace proto_test {

inline iss::proto::byte_buffer from_hex(std::string_view hex) {
    iss::proto::byte_buffer out;
    auto nib = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    int hi = -1;
    for (char c : hex) {
        const int n = nib(c);
        if (n < 0) continue;  // spaces, newlines, '|' separators
        if (hi < 0) {
            hi = n;
        } else {
            out.push_back(static_cast<std::byte>(hi * 16 + n));
            hi = -1;
        }
    }
    REQUIRE(hi < 0);
    return out;
}

inline std::string to_hex(iss::proto::bytes_view b) {
    static constexpr char d[] = "0123456789abcdef";
    std::string s;
    for (auto x : b) {
        s += d[static_cast<unsigned>(x) >> 4];
        s += d[static_cast<unsigned>(x) & 15];
    }
    return s;
}

/// The iggy-g1 capture folder (tests/data/iggy-g1); a missing folder fails the test.
inline std::filesystem::path g1_dir() {
    std::filesystem::path p = std::filesystem::path{IGGY_TESTDATA_DIR} / "iggy-g1";
    if (!std::filesystem::is_directory(p)) FAIL("iggy-g1 test data not found at " << p << " (tests/data/iggy-g1)");
    return p;
}

/// The iggy-g2 capture folder (tests/data/iggy-g2); a missing folder fails the test.
inline std::filesystem::path g2_dir() {
    std::filesystem::path p = std::filesystem::path{IGGY_TESTDATA_DIR} / "iggy-g2";
    if (!std::filesystem::is_directory(p)) FAIL("iggy-g2 test data not found at " << p << " (tests/data/iggy-g2)");
    return p;
}

inline std::string read_text(const std::filesystem::path& p) {
    std::ifstream f{p, std::ios::binary};
    REQUIRE(f.good());
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

inline iss::proto::byte_buffer read_hex_file(const std::filesystem::path& p) { return from_hex(read_text(p)); }

inline iss::proto::bytes_view view(const iss::proto::byte_buffer& b) { return {b.data(), b.size()}; }

}  // namespace proto_test
