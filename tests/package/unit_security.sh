#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The systemd unit's sandbox: `systemd-analyze security --offline` scores
# packaging/iggy-s3-sink.service at 2.5 or lower (0 = locked down, 10 = fully exposed), and
# the settings the daemon's needs rest on are there (the system call filter, the address
# families it uses, the kernel protections).
# Usage: unit_security.sh SOURCE_DIR BINARY
set -euo pipefail
src=$1
bin=$2
max=2.5
unit=$src/packaging/iggy-s3-sink.service
command -v systemd-analyze >/dev/null || { echo "systemd-analyze missing (Debian package systemd)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed "s#/usr/bin/iggy-s3-sink#$bin#g" "$unit" > "$work/iggy-s3-sink.service"
set +e
out=$(systemd-analyze security --offline=true --no-pager "$work/iggy-s3-sink.service" 2>&1)
rc=$?
set -e
score=$(sed -n 's/.*Overall exposure level for iggy-s3-sink.service: \([0-9.]*\).*/\1/p' <<<"$out")
if [[ -z $score ]]; then echo "no exposure level in systemd-analyze's output (exit $rc):" >&2; echo "$out" >&2; exit 1; fi
echo "systemd-analyze security --offline: $score (at most $max)"
grep '✗' <<<"$out" || true
if awk -v s="$score" -v m="$max" 'BEGIN { exit !(s > m) }'; then
  echo "the unit's exposure $score is above $max: restore the sandboxing settings" >&2
  exit 1
fi
for setting in 'SystemCallFilter=@system-service' 'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6' \
               'ProtectKernelTunables=yes' 'ProtectKernelModules=yes' 'ProtectKernelLogs=yes' \
               'CapabilityBoundingSet=' 'MemoryDenyWriteExecute=yes' 'ProcSubset=pid'; do
  grep -qx "$setting" "$unit" || { echo "the unit lacks $setting" >&2; exit 1; }
done
# An invalid config must not restart-loop: RestartPreventExitStatus= covers the main process
# only (systemd.service(5)), so exit 78 has to come from `run` itself, not an ExecStartPre.
if grep -q '^ExecStartPre=.*check-config' "$unit"; then
  echo "ExecStartPre runs check-config: its exit 78 is restarted every RestartSec (RestartPreventExitStatus= is for the main process only); let run validate" >&2
  exit 1
fi
grep -q '^ExecStart=/usr/bin/iggy-s3-sink run --config ' "$unit" || { echo "ExecStart is not run --config" >&2; exit 1; }
grep -q '^RestartPreventExitStatus=.*\b78\b' "$unit" || { echo "RestartPreventExitStatus lacks 78" >&2; exit 1; }
# systemctl reload validates first (as sshd's unit does), then signals: the first ExecReload=
# is check-config --quiet, the last the SIGHUP; a failing check fails the reload.
reloads=$(grep '^ExecReload=' "$unit")
first=$(head -n1 <<<"$reloads")
last=$(tail -n1 <<<"$reloads")
[[ $first == 'ExecReload=/usr/bin/iggy-s3-sink check-config --quiet --config '* ]] \
  || { echo "the first ExecReload is not check-config --quiet (reload would signal on an invalid file): $first" >&2; exit 1; }
[[ $last == 'ExecReload=/bin/kill -HUP $MAINPID' ]] \
  || { echo "the last ExecReload is not the SIGHUP: $last" >&2; exit 1; }
echo "ok"
