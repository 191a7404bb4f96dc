#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `iggy-s3-sink probe` against the rgw fixture: exit 0, one line per fact, RGW 16's answers.
# Then rejected TLS certificates (the store's, and Iggy's on iggy-test-broker $3 over TLS): a
# REJECTED line, exit 1 at once (not 69: asking again gets the same answer), no retry.
set -euo pipefail
bin=$1
broker=$3
source "$2/env"
out=$(AWS_ACCESS_KEY_ID=$RGW_ACCESS_KEY AWS_SECRET_ACCESS_KEY=$RGW_SECRET_KEY \
  "$bin" probe --endpoint "$RGW_ENDPOINT" --region "$RGW_REGION" --bucket "probe-cli-$$" --create-bucket --prefix cli)
echo "$out"
grep -q '^s3 reachable: yes' <<<"$out"
grep -q '^s3 authentication: ok' <<<"$out"
grep -q '^s3 bucket access: ok' <<<"$out"
grep -q '^s3 conditional PutObject: honoured' <<<"$out"
grep -q '^s3 conditional CompleteMultipartUpload: NOT honoured' <<<"$out"
# RGW 16 takes a wrong x-amz-checksum-crc32c: s3.checksum auto uses Content-MD5 there.
grep -q '^s3 CRC-32C verified: no - .*answered 200.* (s3.checksum auto uses Content-MD5)$' <<<"$out"
grep -q '^s3 payload signing: signed (SHA-256)$' <<<"$out"
# Wrong secret: exit 1 and the line says what to check.
set +e
bad=$(AWS_ACCESS_KEY_ID=$RGW_ACCESS_KEY AWS_SECRET_ACCESS_KEY=wrong "$bin" probe --endpoint "$RGW_ENDPOINT" \
  --region "$RGW_REGION" --bucket "probe-cli-$$")
rc=$?
set -e
echo "$bad"
[[ $rc -eq 1 ]]
grep -q 'secret_access_key' <<<"$bad"

# --config, over TLS with the fixture's CA file and payload_signing auto (UNSIGNED-PAYLOAD). No Iggy server here, so
# the Iggy half finds it unreachable (exit 69) after the S3 lines, which must all be good.
cfg=$(mktemp)
trap 'rm -f "$cfg"' EXIT
cat >"$cfg" <<YAML
iggy:
  address: 127.0.0.1:1
  username: iggy
  password: unused
sources:
  - stream: app
    topics: [t]
s3:
  bucket: probe-cfg-$$
  endpoint: $RGW_TLS_ENDPOINT
  region: $RGW_REGION
  access_key_id: $RGW_ACCESS_KEY
  secret_access_key: $RGW_SECRET_KEY
  tls:
    ca_file: $RGW_CA_FILE
  payload_signing: auto
YAML
set +e
withcfg=$(env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY "$bin" probe --config "$cfg" --create-bucket)
rc=$?
set -e
echo "$withcfg"
[[ $rc -eq 69 ]]
grep -q "^s3 reachable: yes ($RGW_TLS_ENDPOINT)" <<<"$withcfg"
grep -q '^s3 bucket access: ok' <<<"$withcfg"
grep -q '^s3 conditional PutObject: honoured' <<<"$withcfg"
grep -q '^s3 probe object cleanup: deleted iggy/.iggy-s3-sink/probe-' <<<"$withcfg"
grep -q '^s3 payload signing: UNSIGNED-PAYLOAD$' <<<"$withcfg"
# The same file with the endpoint over plain http: auto signs the payload.
sed -i "s|endpoint: .*|endpoint: $RGW_ENDPOINT|; /ca_file/d; /^  tls:/d" "$cfg"
set +e
plain=$(env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY "$bin" probe --config "$cfg")
set -e
echo "$plain"
grep -q "^s3 reachable: yes ($RGW_ENDPOINT)" <<<"$plain"
grep -q '^s3 payload signing: signed (SHA-256)$' <<<"$plain"

# The TLS endpoint without its CA file: the store's certificate is rejected.
set +e
rejected=$(AWS_ACCESS_KEY_ID=$RGW_ACCESS_KEY AWS_SECRET_ACCESS_KEY=$RGW_SECRET_KEY "$bin" probe \
  --endpoint "$RGW_TLS_ENDPOINT" --region "$RGW_REGION" --bucket "probe-cli-$$" 2>"$cfg.err")
rc=$?
set -e
echo "$rejected"
[[ $rc -eq 1 ]] || { echo "FAIL: probe exited $rc for a rejected store certificate, want 1"; exit 1; }
grep -q "^s3 TLS certificate: REJECTED - .*certificate" <<<"$rejected"
if grep -q 'retrying' "$cfg.err"; then echo "FAIL: a rejected certificate was retried:"; cat "$cfg.err"; exit 1; fi

# Iggy over TLS (a self-signed certificate for localhost): without the CA, and with the CA but
# another name, rejected (exit 1, not retried); with both, reachable over TLS.
tls=$(mktemp -d)
trap 'rm -f "$cfg" "$cfg.err"; rm -rf "$tls"; [[ -n ${bpid:-} ]] && kill "$bpid" 2>/dev/null; true' EXIT
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tls/key.pem" -out "$tls/cert.pem" -days 1 -subj /CN=localhost \
  -addext subjectAltName=DNS:localhost >/dev/null 2>&1
"$broker" --listen 127.0.0.1:0 --tls-cert "$tls/cert.pem" --tls-key "$tls/key.pem" >"$tls/broker.out" 2>&1 &
bpid=$!
for _ in $(seq 100); do grep -q '^listening on' "$tls/broker.out" && break; sleep 0.1; done
iggy_at=$(sed -n 's/^listening on //p' "$tls/broker.out" | head -1)
[[ -n $iggy_at ]] || { echo "FAIL: the TLS broker did not start"; cat "$tls/broker.out"; exit 1; }
sed -i "s|endpoint: .*|endpoint: $RGW_ENDPOINT|; s|address: .*|address: localhost:${iggy_at##*:}|; s|password: unused|password: iggy|" "$cfg"
iggy_tls() {  # the config with iggy.tls set to the lines given
  { sed -n '1,/^sources:/p' "$cfg" | sed '$d'; printf '  tls:\n'; printf '    %s\n' "$@"; sed -n '/^sources:/,$p' "$cfg"; } >"$tls/cfg.yaml"
  set +e
  out=$(env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY "$bin" probe --config "$tls/cfg.yaml" 2>"$tls/err")
  rc=$?
  set -e
  echo "$out"
}
for variant in "enabled: true" "enabled: true|ca_file: $tls/cert.pem|server_name: not-localhost"; do
  IFS='|' read -ra lines <<<"$variant"
  iggy_tls "${lines[@]}"
  [[ $rc -eq 1 ]] || { echo "FAIL: probe exited $rc for a rejected Iggy certificate ($variant), want 1"; exit 1; }
  grep -q "^iggy TLS certificate: REJECTED - .*certificate was rejected" <<<"$out"
  if grep -q 'retrying' "$tls/err"; then echo "FAIL: a rejected certificate was retried:"; cat "$tls/err"; exit 1; fi
done
iggy_tls "enabled: true" "ca_file: $tls/cert.pem"
grep -q "^iggy reachable: yes (localhost:${iggy_at##*:}, TLS)" <<<"$out"
grep -q "^iggy login: ok" <<<"$out"
echo "probe_cli: ok"
