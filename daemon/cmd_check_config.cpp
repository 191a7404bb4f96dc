// SPDX-License-Identifier: Apache-2.0
// `iggy-s3-sink check-config --config FILE`: reads and validates the configuration before any
// connection is made; prints the effective config (secrets as ****) or every problem.
#include "config/config.hpp"
#include "daemon/commands.hpp"
#include "daemon/wiring.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <span>
#include <string>
#include <string_view>

namespace iss::app {

int run_check_config(std::span<const std::string_view> args);

namespace {

void print_usage(std::FILE* to) {
    fmt::print(to,
               "Usage: iggy-s3-sink check-config --config FILE\n"
               "       iggy-s3-sink check-config --help-config [--markdown]\n\n"
               "Reads FILE, replaces ${{VAR}} and ${{VAR:-default}} from the environment, and checks every\n"
               "rule without connecting anywhere. Valid: prints the effective configuration (every key,\n"
               "defaults filled in, secrets as ****) and exits 0. Invalid: lists every problem with its\n"
               "YAML path and line on stderr and exits 78.\n\n"
               "Options:\n"
               "  --config FILE   the configuration file (YAML)\n"
               "  --help-config   print every configuration key (type, default, meaning)\n"
               "  --markdown      with --help-config: the whole reference as Markdown (docs/configuration.md)\n"
               "  --help          show this help\n");
}

}  // namespace

int run_check_config(std::span<const std::string_view> args) {
    std::string file;
    bool help_config = false;
    bool markdown = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view a = args[i];
        if (a == "--help" || a == "-h") {
            print_usage(stdout);
            return exit_ok;
        }
        if (a == "--help-config") {
            help_config = true;
            continue;
        }
        if (a == "--markdown") {
            markdown = true;
            continue;
        }
        if (a == "--config" || a == "-c") {
            if (i + 1 >= args.size()) {
                fmt::print(stderr, "iggy-s3-sink check-config: --config needs a FILE\n");
                return exit_usage;
            }
            file = std::string{args[++i]};
            continue;
        }
        if (a.starts_with("--config=")) {
            file = std::string{a.substr(9)};
            continue;
        }
        fmt::print(stderr, "iggy-s3-sink check-config: unknown argument '{}'\n", a);
        print_usage(stderr);
        return exit_usage;
    }
    if (markdown && !help_config) {
        fmt::print(stderr, "iggy-s3-sink check-config: --markdown goes with --help-config\n");
        print_usage(stderr);
        return exit_usage;
    }
    if (help_config) {
        fmt::print("{}", markdown ? config::describe_page() : config::describe_text());
        return exit_ok;
    }
    if (file.empty()) {
        fmt::print(stderr, "iggy-s3-sink check-config: --config FILE is required\n");
        print_usage(stderr);
        return exit_usage;
    }
    auto loaded = config::load_file(file, config::process_environment());
    const auto problems = config::check(loaded);
    if (!problems.empty()) {
        fmt::print(stderr, "iggy-s3-sink: {}: invalid configuration, {} problem{}:\n", file, problems.size(),
                   problems.size() == 1 ? "" : "s");
        for (const auto& p : problems) fmt::print(stderr, "  {}\n", config::to_string(p));
        return exit_config;
    }
    for (const auto& w : config::warnings(loaded.config))
        fmt::print(stderr, "iggy-s3-sink: warning: {}\n", config::to_string(w));
    fmt::print("# effective configuration of {} (secrets shown as ****)\n{}", file, config::to_yaml(loaded.config));
    if (const std::string schema = describe_schema(loaded.config); !schema.empty()) {
        fmt::print("# effective schema (name type from):\n");
        std::string_view rest = schema;
        while (!rest.empty()) {
            const auto nl = rest.find('\n');
            fmt::print("#   {}\n", rest.substr(0, nl));
            rest.remove_prefix(nl + 1);
        }
    }
    return exit_ok;
}

}  // namespace iss::app
