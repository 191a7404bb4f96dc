#!/usr/bin/env bash
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
# Wrong secret: exit 1 and the line says what to check.
set +e
bad=$(AWS_ACCESS_KEY_ID=$RGW_ACCESS_KEY AWS_SECRET_ACCESS_KEY=wrong "$bin" probe --endpoint "$RGW_ENDPOINT" \
  --region "$RGW_REGION" --bucket "probe-cli-$$")
rc=$?
set -e
echo "$bad"
[[ $rc -eq 1 ]]
grep -q 'secret_access_key' <<<"$bad"
echo "probe_cli: ok"
