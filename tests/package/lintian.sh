#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Debian's package checker on the .deb: prints every tag (errors, warnings, info) and fails on
# an error or a warning that is not overridden in packaging/debian/lintian-overrides (each
# override there says why).
#   lintian.sh DEB
set -euo pipefail
command -v lintian >/dev/null || { echo "FAIL: lintian is missing (scripts/install-deps installs it)" >&2; exit 1; }
lintian --info --display-info --tag-display-limit 0 --fail-on error,warning "$1"
echo "lintian: no errors or warnings"
