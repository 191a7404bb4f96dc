// SPDX-License-Identifier: Apache-2.0
#pragma once
// The env file a CTest fixture leaves for its tests (KEY=VALUE lines): RGW's (fixture `rgw`,
// $RGW_DIR/env) and the Iceberg catalog's (fixture `iceberg`, $ICEBERG_DIR/env). One reader for
// every integration test that needs one.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

namespace iss::test {

/// The KEY=VALUE lines of `<dir>/env`, where `dir` is the environment variable `dir_variable`,
/// else `fallback` (null: none). Without the file the test cannot run outside its fixture: it
/// says so on stderr and exits 77 (CTest's SKIP_RETURN_CODE), or 1 under CI=true, where a
/// missing fixture is a failure.
inline std::map<std::string, std::string> fixture_env(const char* dir_variable, const char* fixture,
                                                      const char* fallback = nullptr) {
    const char* dir = std::getenv(dir_variable);
    if (dir == nullptr) dir = fallback;
    const std::string path = std::string{dir != nullptr ? dir : ""} + "/env";
    std::ifstream in{path};
    if (dir == nullptr || !in) {
        std::fprintf(stderr, "%s missing (%s): run through ctest (fixture %s)\n", path.c_str(), dir_variable, fixture);
        const char* ci = std::getenv("CI");
        std::exit(ci != nullptr && std::string{ci} == "true" ? 1 : 77);
    }
    std::map<std::string, std::string> env;
    std::string line;
    while (std::getline(in, line)) {
        const auto eq = line.find('=');
        if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return env;
}

}  // namespace iss::test
