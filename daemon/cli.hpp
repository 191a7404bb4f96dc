// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// What every subcommand's option declarations share (daemon/cli.cpp): the `--config` option,
/// the help text's shape, the duration check, and usage errors the parser cannot state
/// itself. The parser is CLI11 (Debian libcli11-dev, https://cliutils.github.io/CLI11/book/).

#include "common/journal.hpp"
#include "common/log.hpp"

#include <CLI/App.hpp>
#include <fmt/format.h>

#include <string>
#include <string_view>

namespace iss::app {

/// `-c,--config FILE` (also `--config=FILE`): the YAML configuration file; required unless
/// `required` is false (check-config --help-config, probe's flags).
CLI::Option* add_config_option(CLI::App& sub, std::string& file, bool required = true);

/// The subcommand's help text below its options: what it does (`about`, paragraphs) and its
/// exit codes (`exit_codes`, one line per code).
void set_help_text(CLI::App& sub, std::string_view about, std::string_view exit_codes);

/// A CLI11 check that an option's value is a duration as the configuration writes them
/// (`500ms`, `30s`, `5m`; config::parse_duration); a bad one is a usage error. With `positive`,
/// 0 is one too (a timeout of 0 gives up before anything can answer).
[[nodiscard]] CLI::Validator duration_check(bool positive = false);

/// A command's error message on stderr, "iggy-s3-sink CMD: MESSAGE" ("iggy-s3-sink: MESSAGE"
/// when `cmd` is empty), through the one stderr path (log::print_stderr): on the journal
/// every line carries `<3>`.
template <class... A>
void print_error(std::string_view cmd, fmt::format_string<A...> f, A&&... a) {
    log::print_stderr(log::level::error, fmt::format("iggy-s3-sink{}{}: {}", cmd.empty() ? "" : " ", cmd,
                                                     fmt::vformat(f, fmt::make_format_args(a...))));
}

/// For rules the parser cannot state (probe: `--bucket` or `--config`): prints
/// "iggy-s3-sink CMD: WHAT" and where the help is, to stderr, as a parse error does; returns
/// exit_usage (64).
int usage_error(std::string_view cmd, std::string_view what);

}  // namespace iss::app
