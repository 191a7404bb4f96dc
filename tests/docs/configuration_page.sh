#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/configuration.md is exactly what the daemon prints as its configuration reference:
# every key of the schema, once, with its type, default and help.
#   configuration_page.sh BINARY SOURCE_DIR
set -uo pipefail
bin=$1
page=$2/docs/configuration.md
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$bin" check-config --help-config --markdown >"$out" || { echo "FAIL: $bin check-config --help-config --markdown exited $?"; exit 1; }
[[ -s $out ]] || { echo "FAIL: the command printed nothing"; exit 1; }
if ! diff -u "$page" "$out"; then
  echo "FAIL: docs/configuration.md differs from the schema's reference (diff above: - the file, + the command)."
  echo "Regenerate it: iggy-s3-sink check-config --help-config --markdown > docs/configuration.md"
  exit 1
fi
echo "docs/configuration.md: $(grep -c '^| `' "$page") keys, as the command prints them"
