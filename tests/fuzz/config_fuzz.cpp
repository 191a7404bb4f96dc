// SPDX-License-Identifier: Apache-2.0
// libFuzzer target over the configuration loader (lib/config), the path `check-config` takes
// (daemon/cmd_check_config.cpp): YAML text -> `parse` (syntax, unknown and duplicate keys,
// types, `${VAR}` / `${VAR:-default}` / `$${` from an injected environment, sizes, durations,
// choices) -> `check` (validate, problems placed at their lines) -> `warnings` -> `to_yaml`.
// The value parsers (`parse_size`, `parse_duration`, `interpolate`) also get the whole input
// when it is short, as one scalar.
//
// Input: the YAML file's text.
// Properties (besides "never throws, no crash, no undefined behaviour"):
// - every problem has a message, and a line within the file when it has one;
// - a file without problems prints (`to_yaml`) to YAML that reads back, with an empty
//   environment, without problems, and prints again to the same text (the printed effective
//   config is a valid config file of its own); secrets print as ****;
// - sizes and durations: what parses formats to text that parses to the same value.
// Built by scripts/fuzz (tests/fuzz/README.md).
#include "config/config.hpp"
#include "tests/fuzz/fuzz_check.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace c = iss::config;

namespace {

const c::env_lookup& fuzz_env() {
    static const std::map<std::string, std::string, std::less<>> vars{
        {"IGGY_PASSWORD", "iggy-secret"},
        {"BUCKET", "lake"},
        {"HOST", "127.0.0.1:8090"},
        {"SIZE", "8MiB"},
        {"SPAN", "1h30m"},
        {"COUNT", "1000"},
        {"EMPTY", ""},
        {"TEMPLATE", "{date}"},
        {"NESTED", "${BUCKET}"},
    };
    static const c::env_lookup env = [](std::string_view name) -> std::optional<std::string> {
        auto it = vars.find(name);
        if (it == vars.end()) return std::nullopt;
        return it->second;
    };
    return env;
}

const c::env_lookup& empty_env() {
    static const c::env_lookup env = [](std::string_view) -> std::optional<std::string> { return std::nullopt; };
    return env;
}

std::string problems_text(const std::vector<c::problem>& ps) {
    std::string out;
    for (const auto& p : ps) out += c::to_string(p) + "\n";
    return out;
}

void values(std::string_view s) {
    if (auto n = c::parse_size(s)) {
        const std::string text = c::format_size(*n);
        auto again = c::parse_size(text);
        ISS_FUZZ_CHECK(again.has_value() && *again == *n);
    }
    if (auto d = c::parse_duration(s)) {
        ISS_FUZZ_CHECK(d->count() >= 0);
        const std::string text = c::format_duration(*d);
        auto again = c::parse_duration(text);
        ISS_FUZZ_CHECK(again.has_value() && *again == *d);
    }
    (void)c::interpolate(s, fuzz_env());
}

// Every secret key prints as "****" (or "" when unset).
void secrets_hidden(std::string_view printed) {
    while (!printed.empty()) {
        const auto nl = printed.find('\n');
        std::string_view line = printed.substr(0, nl);
        printed.remove_prefix(nl == std::string_view::npos ? printed.size() : nl + 1);
        line.remove_prefix(std::min(line.find_first_not_of(' '), line.size()));
        for (std::string_view key : {"password: ", "token: ", "secret_access_key: ", "session_token: "}) {
            if (!line.starts_with(key)) continue;
            const auto value = line.substr(key.size());
            ISS_FUZZ_CHECK(value == "\"****\"" || value == "\"\"");
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
    const std::string_view text{reinterpret_cast<const char*>(bytes), size};
    if (size <= 64) values(text);

    auto loaded = c::parse(text, fuzz_env());
    const bool parsed_clean = loaded.problems.empty();
    const auto problems = c::check(loaded);
    const int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
    for (const auto& p : problems) {
        ISS_FUZZ_CHECK(!p.message.empty());
        ISS_FUZZ_CHECK(p.line >= 0 && p.line <= lines);
    }
    (void)c::warnings(loaded.config);
    const std::string printed = c::to_yaml(loaded.config);
    secrets_hidden(printed);
    if (!parsed_clean) return 0;

    auto again = c::parse(printed, empty_env());
    if (!again.problems.empty()) {
        std::fprintf(stderr, "printed config does not read back:\n%s\n--- printed:\n%s\n",
                     problems_text(again.problems).c_str(), printed.c_str());
        ISS_FUZZ_CHECK(again.problems.empty());
    }
    const std::string reprinted = c::to_yaml(again.config);
    if (reprinted != printed) {
        std::fprintf(stderr, "--- printed:\n%s\n--- reprinted:\n%s\n", printed.c_str(), reprinted.c_str());
        ISS_FUZZ_CHECK(reprinted == printed);
    }
    return 0;
}
