#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CLI test of the exit codes (daemon/commands.hpp, docs/operations.md "Exit codes"): 0 ok,
# 1 runtime failure, 64 usage error (every subcommand, from the one parser), 69 Iggy or the
# store unreachable (lag, probe; verify in the e2e verify_bucket case), 78 invalid
# configuration; --help alike for every subcommand; `<3>` priority prefixes when stderr is the
# journal stream (JOURNAL_STREAM). Nothing listens on 127.0.0.1:1.
# usage: exit_codes_cli.sh BINARY
set -u
. "$(dirname "$0")/../../support/sanitizer_env.sh"  # sanitizer options through env -i
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# want CODE DESCRIPTION COMMAND...: runs COMMAND (stdout+stderr in $out) and checks its exit code.
want() {
  local code=$1 what=$2
  shift 2
  out=$(env -i "${san_env[@]}" AWS_ACCESS_KEY_ID=AK AWS_SECRET_ACCESS_KEY=SK timeout 60 "$@" 2>&1)
  local rc=$?
  [ $rc -eq "$code" ] || fail "$what: exit $rc, want $code: $out"
}

cat >"$tmp/ok.yaml" <<'YAML'
iggy: {address: "127.0.0.1:1", username: iggy, password: pw, consumer: codes}
sources: [{stream: app, topics: [events]}]
s3: {endpoint: "http://127.0.0.1:1", bucket: lake, access_key_id: AK, secret_access_key: SK}
YAML
printf 'iggy: {address: nowhere}\n' >"$tmp/bad.yaml"
commands=(check-config lag verify run probe sigv4)

# 0: a valid configuration; --help and --version.
want 0 "check-config on a valid file" "$bin" check-config --config "$tmp/ok.yaml"
want 0 "--version" "$bin" --version
grep -q '^iggy-s3-sink [0-9]' <<<"$out" || fail "--version: $out"
want 0 "--help" "$bin" --help
for c in "${commands[@]}"; do grep -q "^  $c " <<<"$out" || fail "--help does not list $c: $out"; done
for c in "${commands[@]}"; do
  want 0 "$c --help" "$bin" "$c" --help
  # The same shape for every subcommand: usage line, the options with -h,--help, exit codes.
  grep -q "^Usage: iggy-s3-sink $c \[OPTIONS\]" <<<"$out" || fail "$c --help has no usage line: $out"
  grep -q -- "-h,--help" <<<"$out" || fail "$c --help does not list -h,--help: $out"
  grep -q "^Exit codes:" <<<"$out" || fail "$c --help has no exit codes: $out"
  grep -q "^  64  usage error" <<<"$out" || fail "$c --help does not give 64: $out"
  want 0 "$c -h" "$bin" "$c" -h
done

# 64: usage errors, named after the subcommand, from every subcommand.
want 64 "no command" "$bin"
grep -q "a command is required" <<<"$out" || fail "no command: not said: $out"
[ -z "$(env -i "${san_env[@]}" "$bin" 2>/dev/null)" ] || fail "no command: the overview went to stdout (a usage error goes to stderr)"
want 64 "a partition that is not a number" "$bin" verify --config "$tmp/ok.yaml" --partition abc
grep -q "^iggy-s3-sink verify: --partition: 'abc' is not a valid value (a whole number is expected)" <<<"$out" ||
  fail "--partition abc: $out"
want 64 "--config twice" "$bin" lag -c "$tmp/ok.yaml" -c "$tmp/ok.yaml"
grep -q "^iggy-s3-sink lag: --config is given 2 times: give it once" <<<"$out" || fail "--config twice: $out"
want 64 "unknown command" "$bin" frobnicate
grep -q "frobnicate" <<<"$out" || fail "unknown command not named: $out"
# required: what each command needs besides the unknown option (the parser checks those first).
declare -A required=([check-config]="" [lag]="--config $tmp/ok.yaml" [verify]="--config $tmp/ok.yaml"
                     [run]="--config $tmp/ok.yaml" [probe]="" [sigv4]="--request $tmp/ok.yaml --context $tmp/ok.yaml")
for c in "${commands[@]}"; do
  # shellcheck disable=SC2086
  want 64 "$c --bogus" "$bin" "$c" ${required[$c]} --bogus
  grep -q "^iggy-s3-sink $c: .*--bogus" <<<"$out" || fail "$c --bogus: the error does not name both: $out"
  grep -qF "Run \`iggy-s3-sink $c --help\`" <<<"$out" || fail "$c --bogus: no pointer to the help: $out"
done
# An unknown option is named even when a required one is missing too (CLI11 checks the required
# ones first: `lag --bogus` said "--config is required"); every command, healthcheck included.
for c in "${commands[@]}" healthcheck; do
  want 64 "$c --bogus alone" "$bin" "$c" --bogus
  grep -q "^iggy-s3-sink $c: .*--bogus" <<<"$out" || fail "$c --bogus (nothing else): --bogus is not named: $out"
  grep -q "is required" <<<"$out" && fail "$c --bogus (nothing else): a missing option reported instead: $out"
done
want 64 "lag with a stray word" "$bin" lag stray --config "$tmp/ok.yaml"
grep -q "^iggy-s3-sink lag: .*stray" <<<"$out" || fail "lag stray: the word is not named: $out"
for c in check-config lag verify run; do
  want 64 "$c without --config" "$bin" "$c"
  grep -q -- "--config.* is required" <<<"$out" || fail "$c without --config does not say so: $out"
done
want 64 "--config without a value" "$bin" lag --config
want 64 "lag --wait-zero not a duration" "$bin" lag --config "$tmp/ok.yaml" --wait-zero soon
want 64 "verify --partition not a number" "$bin" verify --config "$tmp/ok.yaml" --partition one
want 64 "probe without --bucket or --config" "$bin" probe --endpoint http://127.0.0.1:1
want 64 "probe --path-style with --virtual-hosted" "$bin" probe --bucket b --path-style --virtual-hosted
want 64 "sigv4 without --context" "$bin" sigv4 --request "$tmp/ok.yaml"
# A timeout of 0 would give up before anything answers: a usage error, not "unreachable" (69).
for t in 0 0ms; do
  want 64 "healthcheck --timeout $t" "$bin" healthcheck --timeout "$t" --url http://127.0.0.1:1/healthz
  grep -q "^iggy-s3-sink healthcheck: --timeout: .*must be above 0" <<<"$out" || fail "healthcheck --timeout $t: $out"
done
# CLI11 answers --version before it reads the rest: a word after it is refused, not ignored.
for v in --version -V; do
  want 64 "$v extra" "$bin" "$v" extra
  grep -q "^iggy-s3-sink: $v takes no arguments, got 'extra'" <<<"$out" || fail "$v extra: the word is not named: $out"
done

# 78: an invalid configuration, whatever the subcommand.
for c in check-config lag verify run probe; do want 78 "$c on an invalid file" "$bin" "$c" --config "$tmp/bad.yaml"; done
grep -q "iggy.address" <<<"$out" || fail "the problem is not named: $out"

# 69: Iggy or the store cannot be reached.
want 69 "lag with Iggy unreachable" "$bin" lag --config "$tmp/ok.yaml"
grep -q "cannot reach Iggy" <<<"$out" || fail "lag does not say Iggy is unreachable: $out"
want 69 "probe with the store unreachable" "$bin" probe --endpoint http://127.0.0.1:1 --region us-east-1 --bucket lake
grep -q "^s3 reachable: no" <<<"$out" || fail "probe does not say the store is unreachable: $out"

# 1: a runtime failure.
want 1 "sigv4 with a request file that does not exist" "$bin" sigv4 --request "$tmp/none" --context "$tmp/none"
grep -q "cannot read request file" <<<"$out" || fail "sigv4 does not name the file: $out"

# The journal: stderr is the stream JOURNAL_STREAM names -> every line carries its priority.
err="$tmp/stderr"
: >"$err"
js=$(stat -c '%d:%i' "$err")
env -i "${san_env[@]}" JOURNAL_STREAM="$js" "$bin" check-config --config "$tmp/bad.yaml" 2>"$err" >/dev/null
grep -q '^<3>iggy-s3-sink check-config: .*invalid configuration' "$err" || fail "no <3> prefix on the journal: $(cat "$err")"
grep -vq '^<3>' "$err" && fail "a line without its priority on the journal: $(cat "$err")"
# lag, verify (Iggy unreachable: their fatal lines), a usage error (CLI11's message) and an
# unknown command: every stderr line through the one path, so every line has its priority.
for args in "lag --config $tmp/ok.yaml" "verify --config $tmp/ok.yaml" "lag --bogus" "frobnicate"; do
  : >"$err"
  js=$(stat -c '%d:%i' "$err")
  # shellcheck disable=SC2086
  env -i "${san_env[@]}" JOURNAL_STREAM="$js" AWS_ACCESS_KEY_ID=AK AWS_SECRET_ACCESS_KEY=SK timeout 60 "$bin" $args 2>"$err" >/dev/null
  [ -s "$err" ] || fail "$args wrote nothing to stderr"
  grep -q '^<3>iggy-s3-sink' "$err" || fail "$args: no <3> line on the journal: $(cat "$err")"
  grep -vq '^<[0-7]>' "$err" && fail "$args: a line without its priority on the journal: $(cat "$err")"
done
env -i "${san_env[@]}" JOURNAL_STREAM="0:0" "$bin" check-config --config "$tmp/bad.yaml" 2>"$err" >/dev/null
grep -q '^<' "$err" && fail "a priority prefix while stderr is not the journal stream: $(cat "$err")"
echo "exit codes CLI: all checks passed"
