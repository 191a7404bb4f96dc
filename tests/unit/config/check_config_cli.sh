#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CLI test of `iggy-s3-sink check-config`: exit codes 0 / 78 / 2, every problem listed,
# secrets redacted. usage: check_config_cli.sh BINARY SOURCE_DIR
set -u
. "$(dirname "$0")/../../support/sanitizer_env.sh"  # sanitizer options through env -i
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# 1. The packaged example with its secrets from the environment: valid, secrets redacted.
out=$(env -i "${san_env[@]}" IGGY_PASSWORD=pw-very-secret AWS_ACCESS_KEY_ID=AKID AWS_SECRET_ACCESS_KEY=sk-very-secret \
      "$bin" check-config --config "$src/packaging/iggy-s3-sink.yaml" 2>&1)
rc=$?
[ $rc -eq 0 ] || fail "valid example: exit $rc, want 0: $out"
grep -q 'secret_access_key: "\*\*\*\*"' <<<"$out" || fail "secret not shown as ****: $out"
grep -q 'password: "\*\*\*\*"' <<<"$out" || fail "password not shown as ****"
grep -q 'very-secret' <<<"$out" && fail "a secret was printed: $out"
grep -q 'access_key_id: "AKID"' <<<"$out" || fail "access key id missing"

# 2. Several problems at once: exit 78, each listed with its path (before any connection).
cat >"$tmp/bad.yaml" <<'YAML'
iggy: {password: "${NOT_SET_ANYWHERE}", address: "localhost"}
sources: [{stream: app, topics: [requests]}]
s3: {bucket: lake, access_key_id: a, secret_access_key: b, part_size: 1MiB, part_sise: 8MiB}
rotation: {max_records: 0}
naming: {key: "{prefix}/{stream}/{end_offset}"}
YAML
out=$(env -i "${san_env[@]}" "$bin" check-config --config "$tmp/bad.yaml" 2>&1)
rc=$?
[ $rc -eq 78 ] || fail "invalid config: exit $rc, want 78: $out"
for want in "iggy.password: environment variable NOT_SET_ANYWHERE is not set" \
            "iggy.address: 'localhost' has no port" \
            "s3.part_sise: unknown key (did you mean part_size?)" \
            "s3.part_size: must be >= 5MiB" \
            "rotation.max_records: must be > 0" \
            "naming.key: placeholder {end_offset} is not allowed" \
            "naming.key: must contain {partition}"; do
  grep -qF "$want" <<<"$out" || fail "missing problem '$want' in: $out"
done
grep -q '^  ' <<<"$out" || fail "problems not listed one per line"

# 2b. s3.checksum and s3.payload_signing: bad values and unsigned over http, all listed, 78.
cat >"$tmp/integrity.yaml" <<'YAML'
iggy: {password: pw, address: "127.0.0.1:8090"}
sources: [{stream: app, topics: [requests]}]
s3: {bucket: lake, access_key_id: a, secret_access_key: b, endpoint: "http://127.0.0.1:7480", checksum: sha1, payload_signing: maybe}
YAML
out=$(env -i "${san_env[@]}" "$bin" check-config --config "$tmp/integrity.yaml" 2>&1)
rc=$?
[ $rc -eq 78 ] || fail "bad checksum/payload_signing: exit $rc, want 78: $out"
for want in "s3.checksum: must be one of auto, md5, crc32c, none, not 'sha1'" \
            "s3.payload_signing: must be one of auto, signed, unsigned, not 'maybe'"; do
  grep -qF "$want" <<<"$out" || fail "missing problem '$want' in: $out"
done
sed -i 's/checksum: sha1, payload_signing: maybe/checksum: crc32c, payload_signing: unsigned, part_size: 1MiB/' "$tmp/integrity.yaml"
out=$(env -i "${san_env[@]}" "$bin" check-config --config "$tmp/integrity.yaml" 2>&1)
rc=$?
[ $rc -eq 78 ] || fail "unsigned over http: exit $rc, want 78: $out"
for want in "s3.payload_signing: unsigned needs https" "s3.part_size: must be >= 5MiB"; do
  grep -qF "$want" <<<"$out" || fail "missing problem '$want' in: $out"
done
# Both keys left out: auto is the default and valid over http.
sed -i 's/, checksum: crc32c, payload_signing: unsigned, part_size: 1MiB//' "$tmp/integrity.yaml"
out=$(env -i "${san_env[@]}" "$bin" check-config --config "$tmp/integrity.yaml" 2>&1)
rc=$?
[ $rc -eq 0 ] || fail "defaults over http: exit $rc, want 0: $out"
grep -qx '  checksum: auto' <<<"$out" || fail "s3.checksum default is not auto: $out"
grep -qx '  payload_signing: auto' <<<"$out" || fail "s3.payload_signing default is not auto: $out"

# 3. A file that does not exist: 78; usage errors: 64 (EX_USAGE).
env -i "${san_env[@]}" "$bin" check-config --config "$tmp/missing.yaml" >/dev/null 2>&1; rc=$?
[ $rc -eq 78 ] || fail "missing file: exit $rc, want 78"
# A directory: 78 naming it as such, not an empty file's "is required" problems.
out=$(env -i "${san_env[@]}" "$bin" check-config --config "$tmp" 2>&1); rc=$?
[ $rc -eq 78 ] || fail "a directory: exit $rc, want 78"
grep -qF "cannot read $tmp: it is a directory" <<<"$out" || fail "a directory not named as one: $out"
! grep -q "is required" <<<"$out" || fail "a directory read as an empty file: $out"
"$bin" check-config >/dev/null 2>&1; rc=$?
[ $rc -eq 64 ] || fail "no --config: exit $rc, want 64"
"$bin" check-config --bogus >/dev/null 2>&1; rc=$?
[ $rc -eq 64 ] || fail "unknown option: exit $rc, want 64"
# 4. The key reference: for a terminal, and as the Markdown page (docs/configuration.md).
out=$("$bin" check-config --help-config) || fail "--help-config exited $?"
grep -qx 's3.retry.deadline  duration, default 15s' <<<"$out" || fail "--help-config lacks s3.retry.deadline: $out"
grep -q '^    Bound on one operation' <<<"$out" || fail "--help-config lacks the help under the key"
out=$("$bin" check-config --help-config --markdown) || fail "--help-config --markdown exited $?"
grep -qF '| `s3.retry.deadline` | duration | `15s` |' <<<"$out" || fail "--markdown lacks the key table"
head -1 <<<"$out" | grep -qx '# Configuration reference' || fail "--markdown does not start with the page title"
"$bin" check-config --markdown >/dev/null 2>&1; rc=$?
[ $rc -eq 64 ] || fail "--markdown without --help-config: exit $rc, want 64"

# 5. --quiet (the systemd unit's ExecReload): no effective configuration, the same exit codes.
out=$(env -i "${san_env[@]}" IGGY_PASSWORD=pw AWS_ACCESS_KEY_ID=AKID AWS_SECRET_ACCESS_KEY=sk \
      "$bin" check-config --quiet --config "$src/packaging/iggy-s3-sink.yaml" 2>&1)
rc=$?
[ $rc -eq 0 ] || fail "--quiet on a valid config: exit $rc, want 0: $out"
[ -z "$out" ] || fail "--quiet printed something for a valid config without warnings: $out"
out=$(env -i "${san_env[@]}" "$bin" check-config -q --config "$tmp/bad.yaml" 2>&1)
rc=$?
[ $rc -eq 78 ] || fail "--quiet on an invalid config: exit $rc, want 78"
grep -qF "rotation.max_records: must be > 0" <<<"$out" || fail "--quiet hid a problem: $out"
grep -q 'effective configuration' <<<"$out" && fail "--quiet printed the effective configuration: $out"
# 6. iceberg: a format other than parquet, an unknown transform and column: 78, every one listed;
#    the catalog secrets never printed (valid config: shown as ****).
cat >"$tmp/iceberg.yaml" <<'YAML'
iggy: {password: pw, address: "127.0.0.1:8090"}
sources: [{stream: app, topics: [requests]}]
s3: {bucket: lake, access_key_id: a, secret_access_key: b}
format: {type: csv}
iceberg:
  catalog: {uri: "http://127.0.0.1:8181", auth: {type: oauth2, client_id: me, client_secret: oauth-very-secret}}
  partition_by: ["days(timestamp)", "identity(tenant)"]
YAML
out=$(env -i "${san_env[@]}" "$bin" check-config --config "$tmp/iceberg.yaml" 2>&1)
rc=$?
[ $rc -eq 78 ] || fail "iceberg with csv: exit $rc, want 78: $out"
for want in "iceberg: needs format.type parquet, not csv" \
            "iceberg.partition_by: unknown transform \`days\`" \
            "iceberg.partition_by: \`identity(tenant)\`: no column \`tenant\`"; do
  grep -qF "$want" <<<"$out" || fail "missing problem '$want' in: $out"
done
grep -q 'very-secret' <<<"$out" && fail "a catalog secret was printed: $out"
# ... and `run` checks the same before it connects anywhere: 78, every problem listed.
out=$(env -i "${san_env[@]}" timeout 20 "$bin" run --config "$tmp/iceberg.yaml" 2>&1)
rc=$?
[ $rc -eq 78 ] || fail "run with iceberg and csv: exit $rc, want 78: $out"
grep -qF "iceberg: needs format.type parquet, not csv" <<<"$out" || fail "run did not say why: $out"
sed -i 's/type: csv/type: parquet/; s/"days(timestamp)", "identity(tenant)"/"day(timestamp)", "identity(topic)"/' "$tmp/iceberg.yaml"
out=$(env -i "${san_env[@]}" "$bin" check-config --config "$tmp/iceberg.yaml" 2>&1)
rc=$?
[ $rc -eq 0 ] || fail "valid iceberg config: exit $rc, want 0: $out"
grep -q 'client_secret: "\*\*\*\*"' <<<"$out" || fail "client_secret not shown as ****: $out"
grep -q 'very-secret' <<<"$out" && fail "a catalog secret was printed: $out"
echo "check-config CLI: all checks passed"
