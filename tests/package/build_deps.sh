#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The tools `cmake --build build --target package` runs come from `scripts/install-deps --build`
# on a bare Debian 12 (docker/Dockerfile's build stage starts from debian:12): each tool's
# Debian package must be in the dependency closure (Depends and Pre-Depends, no Recommends:
# install-deps uses --no-install-recommends) of the build list, or be of priority required /
# essential (every Debian 12 image has those).
#   build_deps.sh SOURCE_DIR
set -euo pipefail
src=$1
# CPack's DEB generator: file (it picks the ELF files for shlibdeps), dpkg-shlibdeps,
# dpkg (architecture), strip (CPACK_STRIP_FILES); packaging/CMakeLists.txt: gzip; the build.
tools=(file dpkg-shlibdeps dpkg strip gzip cmake cpack ninja c++)

mapfile -t pkgs < <("$src/scripts/install-deps" --list --build)
closure=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
  --no-replaces --no-enhances "${pkgs[@]}" | grep -v '^ ' | tr -d '<>' | sort -u)
base=$(dpkg-query -W -f='${Package} ${Priority} ${Essential}\n' | awk '$2 == "required" || $3 == "yes" {print $1}')

bad=0
for t in "${tools[@]}"; do
  p=$(command -v "$t") || { echo "FAIL: $t is not installed here"; bad=1; continue; }
  owner=""
  for f in "$p" "$(readlink -f "$p")" "${p/#\/usr/}"; do
    owner=$(dpkg -S "$f" 2>/dev/null | head -1 | cut -d: -f1) && [[ -n $owner ]] && break
  done
  [[ -n $owner ]] || { echo "FAIL: no Debian package owns $p"; bad=1; continue; }
  owner=${owner%%,*}
  if grep -qx "$owner" <<<"$closure"; then
    echo "ok   $t: $owner (pulled in by scripts/install-deps --build)"
  elif grep -qx "$owner" <<<"$base"; then
    echo "ok   $t: $owner (priority required / essential)"
  else
    echo "FAIL $t: package $owner is neither in the closure of scripts/install-deps --build nor required"
    bad=1
  fi
done
exit $bad
