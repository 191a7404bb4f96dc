// SPDX-License-Identifier: Apache-2.0
// The one command-line parser (CLI11) over every subcommand, and what their declarations share.
#include "daemon/cli.hpp"

#include "common/version.hpp"
#include "config/config.hpp"
#include "daemon/commands.hpp"

#include <CLI/Config.hpp>
#include <CLI/Formatter.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

namespace iss::app {

CLI::Option* add_config_option(CLI::App& sub, std::string& file, bool required) {
    auto* o = sub.add_option("-c,--config", file, "the configuration file (YAML; see check-config --help-config)")
                  ->type_name("FILE");
    if (required) o->required();
    return o;
}

void set_help_text(CLI::App& sub, std::string_view about, std::string_view exit_codes) {
    sub.footer(fmt::format("{}\n\nExit codes:\n{}", about, exit_codes));
}

CLI::Validator duration_check(bool positive) {
    return CLI::Validator{[positive](std::string& v) -> std::string {
                              auto d = config::parse_duration(v);
                              if (!d) return fmt::format("{}", d.error());
                              if (positive && d->count() <= 0)
                                  return fmt::format("'{}': must be above 0 (e.g. 3s): nothing can answer in 0", v);
                              return {};
                          },
                          ""};
}

int usage_error(std::string_view cmd, std::string_view what) {
    print_error(cmd, "{}\nRun `iggy-s3-sink {} --help` for its options.", what, cmd);
    return exit_usage;
}

namespace {

/// CLI11's words for a value it cannot convert or an option given too often, said the way
/// the daemon's other errors are (the option, what was wrong, what to do).
std::string plain_message(const CLI::Error& e) {
    const std::string_view what{e.what()};
    constexpr std::string_view unconvertible = "Could not convert: ";  // "--partition = abc"
    if (dynamic_cast<const CLI::ConversionError*>(&e) != nullptr && what.starts_with(unconvertible)) {
        const auto rest = what.substr(unconvertible.size());
        const auto eq = rest.find(" = ");
        if (eq != std::string_view::npos)
            return fmt::format("{}: '{}' is not a valid value (a whole number is expected)", rest.substr(0, eq),
                               rest.substr(eq + 3));
    }
    constexpr std::string_view too_many = ": At Most 1 required but received ";  // "--config: ... 2"
    if (const auto at = what.find(too_many);
        dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr && at != std::string_view::npos)
        return fmt::format("{} is given {} times: give it once", what.substr(0, at), what.substr(at + too_many.size()));
    return std::string{what};
}

constexpr std::string_view main_footer =
    "Run `iggy-s3-sink COMMAND --help` for a command's options.\n\n"
    "Exit codes: 0 success, 1 runtime failure, 64 usage error, 69 Iggy or the store unreachable\n"
    "(lag, verify, probe; healthcheck: the admin endpoint), 78 invalid configuration.";

/// The parser: every subcommand with its options, the program's own --help and --version.
/// `mains` receives each subcommand's entry point, in commands() order.
std::unique_ptr<CLI::App> make_parser(std::vector<command_main>& mains) {
    auto app = std::make_unique<CLI::App>(
        "iggy-s3-sink: consumes Apache Iggy streams and writes them to Amazon S3 or an S3-compatible\n"
        "store as rotating objects, committing Iggy offsets only after the data is durable.",
        "iggy-s3-sink");
    app->set_version_flag(
        "-V,--version",
        fmt::format("iggy-s3-sink {}{}{}", iss::version, *iss::git_revision ? " " : "", iss::git_revision),
        "print the version and exit");
    app->set_help_flag("-h,--help", "show this help and exit");
    app->require_subcommand(1);
    app->footer(std::string{main_footer});
    app->get_formatter()->column_width(32);
    app->get_formatter()->label("REQUIRED", "(required)");
    app->failure_message([](const CLI::App* a, const CLI::Error& e) {
        const auto subs = a->get_subcommands();
        const std::string cmd = subs.empty() ? std::string{} : " " + subs.front()->get_name();
        return fmt::format("iggy-s3-sink{}: {}\nRun `iggy-s3-sink{} --help` for {}.\n", cmd, plain_message(e), cmd,
                           subs.empty() ? "the commands" : "its options");
    });
    for (const auto& c : commands()) {
        auto* sub = app->add_subcommand(std::string{c.name}, std::string{c.summary});
        mains.push_back(c.define(*sub));
    }
    return app;
}

}  // namespace

int run_command_line(std::span<const char* const> args) {
    std::vector<command_main> mains;
    const auto app = make_parser(mains);
    if (args.empty() || std::string_view{args.front()} == "help") {
        // No command: the overview, on stderr as the usage error it is (stdout for `help`).
        if (!args.empty()) {
            std::cout << app->help() << std::flush;
            return exit_ok;
        }
        log::print_stderr(log::level::error, "iggy-s3-sink: a command is required\n" + app->help());
        return exit_usage;
    }
    // A word that names no command (CLI11 would only say that a command is missing).
    const std::string_view first{args.front()};
    // CLI11 answers --version as soon as it sees it, before it looks at the words after it.
    if ((first == "--version" || first == "-V") && args.size() > 1) {
        print_error("", "{} takes no arguments, got '{}'\nRun `iggy-s3-sink --help` for the commands.", first, args[1]);
        return exit_usage;
    }
    if (!first.starts_with('-') &&
        std::none_of(commands().begin(), commands().end(), [&](const command& c) { return c.name == first; })) {
        print_error("", "unknown command '{}'\nRun `iggy-s3-sink --help` for the commands.", first);
        return exit_usage;
    }
    // parse(argc, argv) skips argv[0], the program name.
    std::vector<const char*> argv{"iggy-s3-sink"};
    argv.insert(argv.end(), args.begin(), args.end());
    try {
        app->parse(static_cast<int>(argv.size()), argv.data());
    } catch (const CLI::ParseError& e) {
        std::fflush(stdout);
        // CLI11 checks required options before it looks at words it did not recognise, so
        // `lag --bogus` would say "--config is required": name what was not understood first.
        // (What it did not recognise is kept in remaining(), whatever error ended the parse.)
        auto extra = app->remaining(true);
        const bool name_extras =
            !extra.empty() && e.get_exit_code() != 0 && dynamic_cast<const CLI::ExtrasError*>(&e) == nullptr;
        const auto subs = app->get_subcommands();
        const CLI::ExtrasError extras{subs.empty() ? std::string{} : subs.front()->get_name(), std::move(extra)};
        // --help and --version go to stdout; an error through the one stderr path.
        std::ostringstream err;
        const int code = app->exit(name_extras ? static_cast<const CLI::ParseError&>(extras) : e, std::cout, err);
        if (!err.str().empty()) log::print_stderr(log::level::error, err.str());
        // CLI11's own codes: 0 for --help/--version, its ExitCodes (106, 109, ...) otherwise.
        return code == 0 ? exit_ok : exit_usage;
    }
    const auto chosen = app->get_subcommands();
    const auto subs = app->get_subcommands([](CLI::App*) { return true; });
    for (std::size_t i = 0; i < subs.size(); ++i)
        if (!chosen.empty() && subs[i] == chosen.front()) return mains[i]();
    return exit_usage;  // require_subcommand(1) makes this unreachable
}

}  // namespace iss::app
