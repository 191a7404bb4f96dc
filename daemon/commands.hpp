// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The subcommands of `iggy-s3-sink` and their exit codes. One parser (CLI11) reads the whole
/// command line (daemon/main.cpp): each subcommand declares its options on its own
/// `CLI::App` (`define_<name>` in its cmd_<name>.cpp) and gets back the code that runs once
/// the line parsed. The parser answers `--help` for every subcommand alike, and a usage error
/// exits 64 naming the subcommand.

#include <functional>
#include <span>
#include <string_view>

namespace CLI {
class App;
}

namespace iss::app {

/// Process exit codes shared by every subcommand (sysexits.h, 3BSD): the systemd unit does
/// not restart on 64 or 78; a supervisor may retry 69 and 1.
enum exit_code : int {
    exit_ok = 0,
    exit_failure = 1,       ///< a runtime failure (problems found, refused credentials, lag not zero in time)
    exit_usage = 64,        ///< EX_USAGE: the command line is wrong
    exit_unavailable = 69,  ///< EX_UNAVAILABLE: Iggy or the store cannot be reached (lag, verify, probe)
    exit_config = 78,       ///< EX_CONFIG: the configuration file is invalid
};

/// What a subcommand runs once its options are parsed; returns the exit code.
using command_main = std::function<int()>;

/// One subcommand: name, one-line summary, and `define`, which declares its options on `sub`
/// (bound to the command's own argument struct) and returns its entry point.
struct command {
    std::string_view name;
    std::string_view summary;
    command_main (*define)(CLI::App& sub);
};

/// Each subcommand's `define` (one per cmd_<name>.cpp).
command_main define_check_config(CLI::App& sub);
command_main define_healthcheck(CLI::App& sub);
command_main define_lag(CLI::App& sub);
command_main define_verify(CLI::App& sub);
command_main define_probe(CLI::App& sub);
command_main define_run(CLI::App& sub);
command_main define_sigv4(CLI::App& sub);

/// Every subcommand, in the order `--help` lists them.
std::span<const command> commands();

/// Parses `args` (argv without the program name) with one CLI11 parser over every subcommand
/// and runs the chosen one. `--help`/`-h` anywhere prints that level's help (exit 0);
/// `--version`/`-V` prints the version; a usage error prints what is wrong and exits 64.
int run_command_line(std::span<const char* const> args);

}  // namespace iss::app
