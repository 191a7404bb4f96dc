#pragma once
// Access to ../shared/testdata/sigv4 (SIGV4_TESTDATA_DIR), read in place. A missing directory
// makes the test binary exit 77 (CTest SKIP_RETURN_CODE) with the reason, except under
// CI=true, where it is a failure (docs/architecture.md §8.7.3).

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
    // The environment may point elsewhere (tests of the skip path); the default is the CMake
    // cache variable.
    const char* env = std::getenv("SIGV4_TESTDATA_DIR");
    const std::filesystem::path d{env != nullptr && *env != '\0' ? env : SIGV4_TESTDATA_DIR};
    if (!std::filesystem::is_directory(d)) {
        const char* ci = std::getenv("CI");
        if (ci != nullptr && std::string_view{ci} == "true") {
            std::fprintf(stderr, "FAIL: SigV4 test vectors not found at %s (SIGV4_TESTDATA_DIR) and CI=true\n",
                         d.c_str());
            std::exit(1);
        }
        std::fprintf(stderr, "SKIP: SigV4 test vectors not found at %s; set -DSIGV4_TESTDATA_DIR=...\n", d.c_str());
        std::exit(77);
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
