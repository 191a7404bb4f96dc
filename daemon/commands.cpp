// SPDX-License-Identifier: Apache-2.0
#include "daemon/commands.hpp"

#include <array>

namespace iss::app {

int run_check_config(std::span<const std::string_view> args);  // cmd_check_config.cpp
int run_lag(std::span<const std::string_view> args);           // cmd_lag.cpp
int run_verify(std::span<const std::string_view> args);        // cmd_verify.cpp
int run_probe(std::span<const std::string_view> args);         // cmd_probe.cpp
int run_run(std::span<const std::string_view> args);           // cmd_run.cpp
int run_sigv4(std::span<const std::string_view> args);         // cmd_sigv4.cpp

// Subcommands arrive with their issues; keep this table sorted as --help shows it.
std::span<const command> commands() {
    static const command table[] = {
        {"check-config", "validate a configuration file and print the effective config", run_check_config},
        {"lag", "show each partition's head, committed offset and lag (--wait-zero, --json)", run_lag},
        {"verify", "check that the bucket holds every offset up to the committed one exactly once (--json)",
         run_verify},
        {"run", "run the sink: Iggy -> S3, offsets committed after upload (SIGTERM: clean stop)", run_run},
        {"probe", "check the S3 store: reachable, credentials, bucket access, conditional writes", run_probe},
        {"sigv4", "sign a request file with SigV4 and print it (debug SignatureDoesNotMatch)", run_sigv4},
    };
    return table;
}

}  // namespace iss::app
