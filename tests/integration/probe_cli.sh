#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `iggy-s3-sink probe` against the rgw fixture: exit 0, one line per fact, RGW 16's answers.
set -euo pipefail
bin=$1
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
echo "probe_cli: ok"
