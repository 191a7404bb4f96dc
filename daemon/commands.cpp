// SPDX-License-Identifier: Apache-2.0
#include "daemon/commands.hpp"

#include <array>

namespace iss::app {

// Subcommands arrive with their issues; keep this table sorted as --help shows it.
std::span<const command> commands() {
    static const command table[] = {
        {"check-config", "validate a configuration file and print the effective config", define_check_config},
        {"lag", "show each partition's head, committed offset and lag (--wait-zero, --json)", define_lag},
        {"verify", "check that the bucket holds every offset up to the committed one exactly once (--json)",
         define_verify},
        {"run", "run the sink: Iggy -> S3, offsets committed after upload (SIGTERM: clean stop, SIGHUP: reload)",
         define_run},
        {"probe", "check the S3 store: reachable, credentials, bucket access, conditional writes", define_probe},
        {"healthcheck", "ask a running daemon's /healthz (or --ready: /readyz); exit 0 on 200 (container HEALTHCHECK)",
         define_healthcheck},
        {"sigv4", "sign a request file with SigV4 and print it (debug SignatureDoesNotMatch)", define_sigv4},
    };
    return table;
}

}  // namespace iss::app
