#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The from-source install (`cmake --install BUILD [--prefix P]`, README.md "Install"): into a
# DESTDIR with a prefix other than the package's /usr, then again over an operator's files.
#   - the unit's ExecStart/ExecReload name <prefix>/bin/iggy-s3-sink, and the binary is there;
#   - /etc/iggy-s3-sink/env is mode 0600;
#   - the documentation: README.md, CHANGELOG.md and docs/*.md gzip-compressed, copyright not;
#   - a second install keeps an existing config and env (the new examples go to *.example).
#   source_install.sh BUILD_DIR
set -euo pipefail
build=$1
work=$(mktemp -d /tmp/iss-source-install.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
prefix=/opt/iss-test
DESTDIR=$work cmake --install "$build" --prefix "$prefix" >"$work/install1.log"
unit=$work/usr/lib/systemd/system/iggy-s3-sink.service
[[ -f $unit ]] || fail "no unit at /usr/lib/systemd/system/iggy-s3-sink.service"
[[ -x $work$prefix/bin/iggy-s3-sink ]] || fail "no daemon at $prefix/bin/iggy-s3-sink"
for key in ExecStart ExecReload; do
  line=$(grep -m1 "^$key=" "$unit") || fail "the unit has no $key"
  [[ $line == "$key=$prefix/bin/iggy-s3-sink "* ]] || fail "$line: expected $prefix/bin/iggy-s3-sink"
done
[[ $(stat -c %a "$work/etc/iggy-s3-sink/env") == 600 ]] || fail "env is not mode 0600"
"$work$prefix/bin/iggy-s3-sink" --version >/dev/null || fail "the installed daemon does not run"
doc=$work$prefix/share/doc/iggy-s3-sink
for page in README.md CHANGELOG.md docs/configuration.md docs/operations.md docs/troubleshooting.md; do
  zcat "$doc/$page.gz" 2>/dev/null | cmp -s - "$(dirname "$0")/../../$page" || fail "$doc/$page.gz is not $page (gzip -9n)"
done
[[ -f $doc/copyright ]] || fail "no $doc/copyright (uncompressed)"

echo "# the operator's" >"$work/etc/iggy-s3-sink/iggy-s3-sink.yaml"
echo "IGGY_PASSWORD=operator" >"$work/etc/iggy-s3-sink/env"
DESTDIR=$work cmake --install "$build" --prefix "$prefix" >"$work/install2.log"
[[ $(cat "$work/etc/iggy-s3-sink/iggy-s3-sink.yaml") == "# the operator's" ]] || fail "a reinstall overwrote the config"
[[ $(cat "$work/etc/iggy-s3-sink/env") == "IGGY_PASSWORD=operator" ]] || fail "a reinstall overwrote env"
grep -q "Kept: /etc/iggy-s3-sink/iggy-s3-sink.yaml" "$work/install2.log" || fail "the reinstall did not say it kept the config"
[[ -f $work/etc/iggy-s3-sink/iggy-s3-sink.yaml.example ]] || fail "no iggy-s3-sink.yaml.example beside the kept config"
[[ $(stat -c %a "$work/etc/iggy-s3-sink/env.example") == 600 ]] || fail "env.example is not mode 0600"
echo "source install: unit -> $prefix/bin/iggy-s3-sink, existing /etc files kept: ok"
