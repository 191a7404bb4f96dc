#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The systemd unit in packaging/ is accepted by `systemd-analyze verify` (with the built
# binary in place of /usr/bin/iggy-s3-sink, which verify requires to exist), is Type=notify
# with a WatchdogSec, checks the config with check-config --quiet before a reload's SIGHUP, and its TimeoutStopSec is above the example config's shutdown.grace.
# Usage: systemd_unit_test.sh SOURCE_DIR BINARY
set -euo pipefail
src=$1
bin=$2
unit=$src/packaging/iggy-s3-sink.service
if ! command -v systemd-analyze >/dev/null; then
  echo "systemd-analyze missing (Debian package systemd; scripts/install-deps installs it)" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed "s#/usr/bin/iggy-s3-sink#$bin#g" "$unit" > "$work/iggy-s3-sink.service"
out=$(systemd-analyze verify "$work/iggy-s3-sink.service" 2>&1) || { echo "$out" >&2; exit 1; }
# verify may warn without failing: any line naming our unit is a problem.
if grep -q 'iggy-s3-sink.service' <<<"$out"; then echo "systemd-analyze verify: $out" >&2; exit 1; fi
grep -qx 'Type=notify' "$unit" || { echo "unit is not Type=notify" >&2; exit 1; }
grep -q '^WatchdogSec=[1-9]' "$unit" || { echo "unit has no WatchdogSec" >&2; exit 1; }
# No ExecStartPre check (its exit 78 would be restarted: RestartPreventExitStatus= is for the
# main process only); `run` checks the file itself. systemctl reload checks the file with
# check-config --quiet (only problems reach the journal), then sends SIGHUP.
if grep -q '^ExecStartPre=' "$unit"; then echo "the unit has an ExecStartPre (exit 78 there restart-loops)" >&2; exit 1; fi
grep -q '^ExecReload=/usr/bin/iggy-s3-sink check-config --quiet ' "$unit" \
  || { echo "ExecReload does not check the file with check-config --quiet" >&2; exit 1; }
grep -qx 'ExecReload=/bin/kill -HUP $MAINPID' "$unit" || { echo "no ExecReload sending SIGHUP" >&2; exit 1; }
# The check comes before the signal (systemd runs ExecReload= lines in order and stops at the
# first failure): an invalid file never reaches the daemon.
reloads=$(grep '^ExecReload=' "$unit")
[[ $(head -1 <<<"$reloads") == *'check-config --quiet'* && $(tail -1 <<<"$reloads") == *'kill -HUP'* ]] \
  || { echo "ExecReload: check-config must come before the SIGHUP: $reloads" >&2; exit 1; }
# systemd re-reads EnvironmentFile= for ExecReload=, never for the running daemon: the unit and
# docs/operations.md must tell the operator that a changed env file needs a restart.
grep -B4 '^EnvironmentFile=' "$unit" | grep -q 'restart' \
  || { echo "the unit does not say that a changed EnvironmentFile needs a restart" >&2; exit 1; }
grep -q 'a changed `EnvironmentFile`.*takes effect only at' "$src/docs/operations.md" \
  || { echo "docs/operations.md does not say that a changed EnvironmentFile needs a restart" >&2; exit 1; }
seconds() {  # 30, 30s, 2min, 1m -> seconds
  local v=$1
  case $v in
    *min) echo $(( ${v%min} * 60 ));; *m) echo $(( ${v%m} * 60 ));; *s) echo "${v%s}";; *) echo "$v";;
  esac
}
stop=$(seconds "$(sed -n 's/^TimeoutStopSec=//p' "$unit")")
grace=$(seconds "$(sed -n 's/^ *grace: *//p' "$src/packaging/iggy-s3-sink.yaml")")
if (( stop <= grace )); then echo "TimeoutStopSec ${stop}s is not above shutdown.grace ${grace}s" >&2; exit 1; fi
echo "systemd-analyze verify: ok; Type=notify, WatchdogSec set, TimeoutStopSec ${stop}s > shutdown.grace ${grace}s"
