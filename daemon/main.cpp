// iggy-s3-sink: the daemon's entry point. Dispatches to subcommands (daemon/commands.cpp);
// `--help` and `--version` are answered here.
#include "common/version.hpp"
#include "daemon/commands.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <string_view>
#include <vector>

namespace {

void print_help() {
    fmt::print(
        "iggy-s3-sink {}: consumes Apache Iggy streams and writes them to Amazon S3 or an\n"
        "S3-compatible store as rotating objects, committing Iggy offsets only after the data\n"
        "is durable.\n\n"
        "Usage:\n"
        "  iggy-s3-sink COMMAND [OPTIONS]\n"
        "  iggy-s3-sink --help | --version\n\n"
        "Commands:\n",
        iss::version);
    for (const auto& c : iss::app::commands()) fmt::print("  {:<14}{}\n", c.name, c.summary);
    if (iss::app::commands().empty()) fmt::print("  (none yet)\n");
    fmt::print(
        "\nOptions:\n"
        "  --help        show this help and exit\n"
        "  --version     print the version and exit\n\n"
        "Run `iggy-s3-sink COMMAND --help` for a command's options.\n"
        "Exit codes: 0 success, 1 failure, 2 usage error, 78 invalid configuration.\n");
}

}  // namespace

int main(int argc, char** argv) try {
    std::vector<std::string_view> args(argv + 1, argv + argc);
    if (args.empty()) {
        print_help();
        return iss::app::exit_usage;
    }
    const std::string_view first = args.front();
    if (first == "--help" || first == "-h" || first == "help") {
        print_help();
        return iss::app::exit_ok;
    }
    if (first == "--version" || first == "-V") {
        fmt::print("iggy-s3-sink {}{}{}\n", iss::version, *iss::git_revision ? " " : "", iss::git_revision);
        return iss::app::exit_ok;
    }
    for (const auto& c : iss::app::commands()) {
        if (c.name == first) return c.run(std::span{args}.subspan(1));
    }
    fmt::print(stderr, "iggy-s3-sink: unknown command or option '{}'; run `iggy-s3-sink --help`\n", first);
    return iss::app::exit_usage;
} catch (const std::exception& e) {
    fmt::print(stderr, "iggy-s3-sink: fatal: {}\n", e.what());
    return iss::app::exit_failure;
}
