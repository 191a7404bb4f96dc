#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the official Apache Iggy Node.js SDK's e2e suite (src/e2e/*.e2e.ts) against a fresh
# iggy-test-broker and prints the suite's TAP summary.
#
# Usage: tests/sdk/run-node-e2e.sh SDK_DIR [BROKER_BINARY] [-- extra broker flags]
#   SDK_DIR        a checkout of the SDK folder (apache/iggy `foreign/node` at the tag under
#                  test, e.g. node-sdk-0.8.0) with its npm dependencies installed (`npm install`)
#   BROKER_BINARY  default: build/tests/support/iggy-test-broker of this repository
# Environment: E2E_GLOB (default 'src/e2e/*.e2e.ts'), E2E_TIMEOUT seconds (default 600).
# The broker listens on 127.0.0.1:0; its address goes to the suite as IGGY_TCP_ADDRESS.
# Exit status: the suite's (0 = every test passed).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
sdk="${1:?usage: run-node-e2e.sh SDK_DIR [BROKER_BINARY] [-- broker flags]}"
shift
broker="$repo/build/tests/support/iggy-test-broker"
if [[ $# -gt 0 && "$1" != "--" ]]; then broker="$1"; shift; fi
[[ $# -gt 0 && "$1" == "--" ]] && shift
extra=("$@")

[[ -f "$sdk/package.json" ]] || { echo "run-node-e2e: $sdk has no package.json (want apache/iggy foreign/node)" >&2; exit 2; }
[[ -d "$sdk/node_modules" ]] || { echo "run-node-e2e: run 'npm install' in $sdk first" >&2; exit 2; }
[[ -x "$broker" ]] || { echo "run-node-e2e: no broker at $broker (build target iggy-test-broker)" >&2; exit 2; }

work="$(mktemp -d)"
broker_pid=""
cleanup() {
    if [[ -n "$broker_pid" ]]; then kill "$broker_pid" 2>/dev/null || true; wait "$broker_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

"$broker" --listen 127.0.0.1:0 "${extra[@]}" >"$work/broker.out" 2>"$work/broker.err" &
broker_pid=$!
addr=""
for _ in $(seq 1 100); do
    addr="$(sed -n 's/^listening on //p' "$work/broker.out" | head -n1)"
    [[ -n "$addr" ]] && break
    kill -0 "$broker_pid" 2>/dev/null || { cat "$work/broker.err" >&2; exit 1; }
    sleep 0.1
done
[[ -n "$addr" ]] || { echo "run-node-e2e: the broker did not report its address" >&2; exit 1; }
echo "run-node-e2e: broker at $addr (pid $broker_pid)"

cd "$sdk"
shopt -s nullglob
# shellcheck disable=SC2206 # the glob is meant to expand here
files=(${E2E_GLOB:-src/e2e/*.e2e.ts})
[[ ${#files[@]} -gt 0 ]] || { echo "run-node-e2e: no test files match ${E2E_GLOB:-src/e2e/*.e2e.ts} in $sdk" >&2; exit 2; }
status=0
IGGY_TCP_ADDRESS="$addr" timeout "${E2E_TIMEOUT:-600}" \
    node --import @swc-node/register/esm-register --test --test-reporter=tap --test-force-exit \
    "${files[@]}" >"$work/tap.out" 2>&1 || status=$?
cp "$work/tap.out" "${TAP_OUT:-/dev/null}" 2>/dev/null || true
grep -E "^(not ok|# (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms))" "$work/tap.out" || true
grep -B2 -A12 '^    not ok\|^not ok' "$work/tap.out" | grep -E "not ok|error:|expected|actual|code:" | head -n 80 || true
exit "$status"
