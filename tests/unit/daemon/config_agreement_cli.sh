#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CLI test: check-config, probe and run refuse the same configurations with exit 78 and list
# every problem, before any connection (nothing listens on the ports used here); and probe
# prints only what it measured. usage: config_agreement_cli.sh BINARY
set -u
. "$(dirname "$0")/../../support/sanitizer_env.sh"  # sanitizer options through env -i
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# write NAME YAML...: a config that is valid but for the lines given.
write() {
  local name=$1
  shift
  {
    echo 'iggy: {address: "127.0.0.1:1", username: iggy, password: pw, consumer: agree}'
    echo 'sources: [{stream: app, topics: [events]}]'
    echo 'shutdown: {grace: 5s}'
    printf '%s\n' "$@"
  } >"$tmp/$name.yaml"
}

# expect78 NAME WANT...: check-config, probe and run all exit 78 and say every WANT.
expect78() {
  local name=$1
  shift
  for cmd in check-config probe run; do
    out=$(env -i "${san_env[@]}" AWS_ACCESS_KEY_ID=AK AWS_SECRET_ACCESS_KEY=SK timeout 20 "$bin" $cmd --config "$tmp/$name.yaml" 2>&1)
    rc=$?
    [ $rc -eq 78 ] || fail "$name: $cmd exited $rc, want 78: $out"
    for w in "$@"; do
      grep -qF -- "$w" <<<"$out" || fail "$name: $cmd does not say '$w': $out"
    done
    grep -q 's3 authentication\|s3 reachable' <<<"$out" && fail "$name: $cmd reports a measurement it did not make: $out"
  done
  echo "ok: $name: check-config, probe and run exit 78"
}

write port 's3: {endpoint: "http://127.0.0.1:99999", bucket: lake, access_key_id: AK, secret_access_key: SK}'
expect78 port "s3.endpoint: 'http://127.0.0.1:99999': the port must be 1..65535" "1 problem:"

write bucket2 's3: {endpoint: "http://127.0.0.1:1", bucket: nu, access_key_id: AK, secret_access_key: SK}'
expect78 bucket2 "s3.bucket: 'nu' is 2 characters; a bucket name has 3 to 63" "1 problem:"

write both 's3: {endpoint: "http://127.0.0.1:99999", bucket: nu, access_key_id: AK, secret_access_key: SK}'
expect78 both "the port must be 1..65535" "'nu' is 2 characters" "2 problems:"

write region 's3: {region: auto, bucket: lake, access_key_id: AK, secret_access_key: SK}'
expect78 region "s3.region: 'auto' needs s3.endpoint"

write brace 's3: {endpoint: "http://127.0.0.1:1", bucket: lake, access_key_id: AK, secret_access_key: SK}' \
  'naming: {key: "{prefix}/{b/{partition}/{start_offset}.{ext}"}'
expect78 brace 'naming.key: unclosed `{` at column 10 (write `{{` for a literal brace)' "1 problem:"

write flow 's3: {endpoint: "http://127.0.0.1:1", bucket: lake, access_key_id: AK, secret_access_key: SK}' \
  'log: {level: ${LOG_LEVEL:-info}}'
expect78 flow 'is inside a flow collection' 'the value must be quoted ("${LOG_LEVEL:-info}")'

# probe without a config: the port is refused up front, and a bucket the client cannot build a
# request for is reported as not sent (no reachability or authentication claimed), exit 78.
out=$(env -i "${san_env[@]}" AWS_ACCESS_KEY_ID=AK AWS_SECRET_ACCESS_KEY=SK timeout 20 "$bin" probe --endpoint "http://127.0.0.1:99999" --bucket lake 2>&1)
rc=$?
[ $rc -eq 78 ] || fail "probe --endpoint :99999 exited $rc, want 78: $out"
grep -qF "bad port" <<<"$out" || fail "probe --endpoint :99999 does not name the port: $out"
out=$(env -i "${san_env[@]}" AWS_ACCESS_KEY_ID=AK AWS_SECRET_ACCESS_KEY=SK timeout 20 "$bin" probe --endpoint "http://127.0.0.1:1" --bucket nu 2>&1)
rc=$?
[ $rc -eq 78 ] || fail "probe --bucket nu exited $rc, want 78: $out"
grep -q 's3 authentication\|s3 reachable' <<<"$out" && fail "probe --bucket nu claims what it did not measure: $out"
grep -qF "NOT SENT" <<<"$out" || fail "probe --bucket nu does not say that nothing was sent: $out"
grep -qF "3 to 63" <<<"$out" || fail "probe --bucket nu does not say why: $out"
echo "config agreement CLI: all checks passed"
