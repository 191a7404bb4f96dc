// SPDX-License-Identifier: Apache-2.0
#pragma once
// Access to tests/data/sigv4 (SIGV4_TESTDATA_DIR), read in place (provenance: tests/data/README.md).
// A missing directory fails the test binary with the reason.

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace sigv4_testdata {

inline std::filesystem::path dir() {
    // The environment may point elsewhere; the default is the CMake cache variable
    // (tests/data/sigv4 in the repository). A missing folder is a failure, never a skip.
    const char* env = std::getenv("SIGV4_TESTDATA_DIR");
    const std::filesystem::path d{env != nullptr && *env != '\0' ? env : SIGV4_TESTDATA_DIR};
    if (!std::filesystem::is_directory(d)) {
        std::fprintf(stderr,
                     "FAIL: SigV4 test vectors not found at %s (SIGV4_TESTDATA_DIR; they live in tests/data/sigv4)\n",
                     d.c_str());
        std::exit(1);
    }
    return d;
}

/// The file's bytes, untouched (no trimming: a missing or extra '\n' changes every hash).
inline std::string read(const std::filesystem::path& p) {
    std::ifstream in{p, std::ios::binary};
    if (!in) throw std::runtime_error{"cannot read " + p.string()};
    return {std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

/// Every case folder of the generic suite (every folder holding a context.json), sorted.
inline std::vector<std::string> suite_cases() {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator{dir()}) {
        if (e.is_directory() && std::filesystem::exists(e.path() / "context.json"))
            out.push_back(e.path().filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

/// Every example under s3-docs/, sorted.
inline std::vector<std::string> s3_doc_examples() {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator{dir() / "s3-docs"}) {
        if (e.is_directory() && std::filesystem::exists(e.path() / "context.json"))
            out.push_back(e.path().filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace sigv4_testdata
