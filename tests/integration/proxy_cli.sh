#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The sink's uploads (probe: PutObject, GET, DELETE, conditional writes) to the rgw fixture
# through a real proxy (Debian's tinyproxy, with Basic proxy credentials): plain http in
# absolute form, https through CONNECT; with NO_PROXY the same goes direct. The proxy
# password never appears in the sink's output.
set -euo pipefail
bin=$1
source "$2/env"
command -v tinyproxy >/dev/null || { echo "tinyproxy not installed (scripts/install-deps)"; [[ "${CI:-}" == true ]] && exit 1; exit 77; }
dir=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$dir/tinyproxy.conf" <<CONF
Port $port
Listen 127.0.0.1
Timeout 60
LogFile "$dir/tinyproxy.log"
LogLevel Connect
PidFile "$dir/tinyproxy.pid"
MaxClients 20
Allow 127.0.0.1
BasicAuth sink proxy-pass-9
CONF
tinyproxy -c "$dir/tinyproxy.conf"
cleanup() { [[ -f "$dir/tinyproxy.pid" ]] && kill "$(cat "$dir/tinyproxy.pid")" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
for _ in $(seq 50); do [[ -f "$dir/tinyproxy.pid" ]] && break; sleep 0.1; done
proxy="http://sink:proxy-pass-9@127.0.0.1:$port"
keys=(AWS_ACCESS_KEY_ID="$RGW_ACCESS_KEY" AWS_SECRET_ACCESS_KEY="$RGW_SECRET_KEY" AWS_EC2_METADATA_DISABLED=true)

# http endpoint, through the proxy (absolute form).
out=$(env "${keys[@]}" HTTP_PROXY="$proxy" "$bin" probe --endpoint "$RGW_ENDPOINT" --region "$RGW_REGION" \
  --bucket "proxy-cli-$$" --create-bucket --prefix proxy 2>&1)
echo "$out"
grep -q '^s3 bucket access: ok' <<<"$out"
grep -q "Request (file descriptor [0-9]*): PUT http://127.0.0.1:$RGW_PORT/proxy-cli-$$" "$dir/tinyproxy.log"
! grep -q proxy-pass-9 <<<"$out"
grep -q 'http via http://sink:\*\*\*\*@127.0.0.1' <<<"$out"

# https endpoint, through a CONNECT tunnel.
out=$(env "${keys[@]}" HTTPS_PROXY="$proxy" "$bin" probe --endpoint "$RGW_TLS_ENDPOINT" --ca-file "$RGW_CA_FILE" \
  --region "$RGW_REGION" --bucket "proxy-cli-$$" --prefix proxy 2>&1)
echo "$out"
grep -q '^s3 bucket access: ok' <<<"$out"
grep -q "CONNECT 127.0.0.1:$RGW_TLS_PORT" "$dir/tinyproxy.log"
! grep -q proxy-pass-9 <<<"$out"

# NO_PROXY: direct; the proxy sees nothing new.
before=$(wc -l <"$dir/tinyproxy.log")
out=$(env "${keys[@]}" HTTP_PROXY="$proxy" HTTPS_PROXY="$proxy" NO_PROXY=127.0.0.1 "$bin" probe --endpoint "$RGW_ENDPOINT" \
  --region "$RGW_REGION" --bucket "proxy-cli-$$" --prefix proxy 2>&1)
grep -q '^s3 bucket access: ok' <<<"$out"
after=$(wc -l <"$dir/tinyproxy.log")
[[ "$before" == "$after" ]] || { echo "NO_PROXY: the proxy saw requests"; tail -5 "$dir/tinyproxy.log"; exit 1; }

# A wrong proxy password: a clear failure naming the proxy, never the password.
set +e
bad=$(env "${keys[@]}" HTTPS_PROXY="http://sink:wrong-pass-3@127.0.0.1:$port" "$bin" probe --endpoint "$RGW_TLS_ENDPOINT" \
  --ca-file "$RGW_CA_FILE" --region "$RGW_REGION" --bucket "proxy-cli-$$" 2>&1)
rc=$?
set -e
echo "$bad"
[[ $rc -ne 0 ]]
! grep -q wrong-pass-3 <<<"$bad"
echo "proxy: ok"
