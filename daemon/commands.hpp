// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The subcommands of `iggy-s3-sink`. Each is `int run(args)` in its own cmd_<name>.cpp and
/// returns the process exit code (0 ok, 1 failure, 2 usage error, 78 invalid config).

#include <span>
#include <string_view>

namespace iss::app {

/// Process exit codes shared by every subcommand (sysexits.h where one fits).
enum exit_code : int { exit_ok = 0, exit_failure = 1, exit_usage = 2, exit_config = 78 };

/// One subcommand: name, one-line summary, entry point (args exclude the program and
/// subcommand names).
struct command {
    std::string_view name;
    std::string_view summary;
    int (*run)(std::span<const std::string_view> args);
};

/// Every subcommand, in the order `--help` lists them.
std::span<const command> commands();

}  // namespace iss::app
