// SPDX-License-Identifier: Apache-2.0
// `iggy-s3-sink check-config --config FILE [--quiet]`, `check-config --help-config [--markdown]`: reads and validates the configuration
// before any connection is made; prints the effective config (secrets as ****; not with
// --quiet) or every problem.
#include "common/journal.hpp"
#include "common/log.hpp"
#include "config/config.hpp"
#include "daemon/cli.hpp"
#include "daemon/commands.hpp"
#include "daemon/wiring.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

namespace iss::app {

namespace {

struct check_config_args {
    std::string file;
    bool help_config = false;
    bool markdown = false;
    bool quiet = false;
};

int run_check_config(const check_config_args& a) {
    if (a.markdown && !a.help_config) return usage_error("check-config", "--markdown goes with --help-config");
    if (a.help_config) {
        fmt::print("{}", a.markdown ? config::describe_page() : config::describe_text());
        return exit_ok;
    }
    if (a.file.empty()) return usage_error("check-config", "--config is required");
    const std::string& file = a.file;
    auto loaded = config::load_file(file, config::process_environment());
    const auto problems = config::check(loaded);
    if (!problems.empty()) {
        std::string text = fmt::format("{}: invalid configuration, {} problem{}:", file, problems.size(),
                                       problems.size() == 1 ? "" : "s");
        for (const auto& p : problems) text += fmt::format("\n  {}", config::to_string(p));
        print_error("check-config", "{}", text);
        return exit_config;
    }
    for (const auto& w : config::warnings(loaded.config))
        log::print_stderr(log::level::warn, fmt::format("iggy-s3-sink: warning: {}", config::to_string(w)));
    if (a.quiet) return exit_ok;
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

}  // namespace

command_main define_check_config(CLI::App& sub) {
    auto a = std::make_shared<check_config_args>();
    add_config_option(sub, a->file, false);
    sub.add_flag("--help-config", a->help_config, "print every configuration key (type, default, meaning) and exit");
    sub.add_flag("--markdown", a->markdown,
                 "with --help-config: the whole configuration reference as Markdown (docs/configuration.md)");
    sub.add_flag("-q,--quiet", a->quiet,
                 "print no effective configuration, only problems and warnings (the systemd unit's ExecReload)");
    set_help_text(sub,
                  "Reads FILE, replaces ${VAR} and ${VAR:-default} from the environment, and checks every\n"
                  "rule without connecting anywhere. Valid: prints the effective configuration (every key,\n"
                  "defaults filled in, secrets as ****) unless --quiet, and exits 0. Invalid: lists every\n"
                  "problem with its YAML path and line on stderr and exits 78.",
                  "  0   valid\n  64  usage error\n  78  invalid configuration (every problem listed)");
    return [a] { return run_check_config(*a); };
}

}  // namespace iss::app
