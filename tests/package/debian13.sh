#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The project on a fresh Debian 13 (trixie), as a newcomer meets it: a fresh clone of SOURCE_DIR
# (its committed HEAD) in a clean root made by debootstrap, built once with Debian 13's own GCC 14
# and libraries, then
#   1. `scripts/demo` from the fresh clone: installs only the demo's packages, builds, must print
#      DEMO-OK (its time from the clone is printed as "debian13: demo ... s");
#   2. `scripts/test -L '^(unit|package)$'` on the same build: installs the rest, builds every
#      target, runs the unit tests and the package label (the .deb built on Debian 13 and
#      installed into a clean Debian 13 root, lintian).
# CTest test debian13.fresh_root (label debian13, registered with -DISS_DEBIAN13_TEST=ON; not in
# the default run: it compiles the whole project from scratch, about an hour on 2 cores).
#
#   debian13.sh SOURCE_DIR WORK_DIR
#
# The clean root (debootstrap minbase + git, ca-certificates) is made once and kept as
# ISS_DEBIAN_BASE_CACHE/debian13-fresh-base (default WORK_DIR); every run copies it to
# WORK_DIR/root, which is removed when the run passes and kept (with its logs) when it fails.
# ISS_DEBIAN_MIRROR overrides the mirror, else it is read from this machine's apt sources.
# ISS_DEBIAN13_CCACHE=DIR lends the root a ccache directory (mounted as its CCACHE_DIR), so a
# rerun does not compile from scratch; without it the build is cold, as on a new machine. Needs
# root (debootstrap, chroot, mounts in a private mount namespace that ends with the script).
set -euo pipefail
src=$(realpath "$1") work=$2
mkdir -p "$work"; work=$(realpath "$work")
say() { printf '== debian13: %s (%s)\n' "$*" "$(date -u +%H:%M:%S)"; }
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }
suite=trixie

if [[ $(id -u) -ne 0 ]]; then
  [[ ${CI:-} == true ]] && fail "needs root (debootstrap, chroot); CI must run it"
  echo "SKIP: needs root (debootstrap, chroot)"; exit 77
fi
for t in debootstrap unshare chroot git; do
  command -v "$t" >/dev/null || fail "$t is missing (scripts/install-deps installs it)"
done

mirror=${ISS_DEBIAN_MIRROR:-}
if [[ -z $mirror && -f /etc/apt/sources.list.d/debian.sources ]]; then
  mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources)
fi
if [[ -z $mirror && -f /etc/apt/sources.list ]]; then
  mirror=$(awk '$1=="deb"{for(i=2;i<=NF;i++) if($i ~ /^https?:/){print $i; exit}}' /etc/apt/sources.list)
fi
mirror=${mirror:-http://deb.debian.org/debian}
security=""
[[ -f /etc/apt/sources.list.d/debian.sources ]] &&
  security=$(awk '/^URIs:/{print $2}' /etc/apt/sources.list.d/debian.sources | grep -m1 security || true)

# --- the clean root, made once ------------------------------------------------------------
base=${ISS_DEBIAN_BASE_CACHE:-$work}/debian13-fresh-base
mkdir -p "$(dirname "$base")"
exec 9>"$base.lock"
flock 9
if [[ ! -f $base/.ok ]]; then
  say "debootstrap Debian 13 ($suite) minbase into $base (once; $mirror)"
  t0=$SECONDS
  rm -rf --one-file-system "$base.tmp"
  debootstrap --variant=minbase --include=ca-certificates,git "$suite" "$base.tmp" "$mirror" \
    >"$work/debootstrap.log" 2>&1 || { tail -20 "$work/debootstrap.log"; fail "debootstrap (log: $work/debootstrap.log)"; }
  rm -f "$base.tmp"/var/cache/apt/archives/*.deb
  # The release, its updates and its security archive (as a Debian 13 install has them).
  rm -f "$base.tmp/etc/apt/sources.list"
  {
    printf 'Types: deb\nURIs: %s\nSuites: %s %s-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      "$mirror" "$suite" "$suite"
    [[ -n $security ]] &&
      printf '\nTypes: deb\nURIs: %s\nSuites: %s-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
        "$security" "$suite"
  } >"$base.tmp/etc/apt/sources.list.d/debian.sources"
  rm -rf --one-file-system "$base"; mv "$base.tmp" "$base"; touch "$base/.ok"
  say "base made in $((SECONDS - t0))s"
fi
flock -u 9

# --- a fresh copy and a fresh clone per run -----------------------------------------------
root=$work/root
rm -rf --one-file-system "$root"
cp -a "$base" "$root"
cp /etc/resolv.conf "$root/etc/resolv.conf"
# This machine's extra CA certificates (a proxy's), so the package clients behave as here.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
fi
git clone -q "$src" "$root/src/iggy-s3-sink"
say "fresh clone of $(git -C "$root/src/iggy-s3-sink" log -1 --format='%h %s' | cut -c1-80)"

cat >"$root/debian13-run.sh" <<'EOF'
set -uo pipefail
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 HOME=/root
update-ca-certificates >/dev/null 2>&1
grep -q '^VERSION_CODENAME=trixie$' /etc/os-release || { echo "FAIL: not Debian 13: $(cat /etc/os-release)"; exit 1; }
cd /src/iggy-s3-sink
t0=$SECONDS
scripts/demo 2>&1 | tee /demo.log
rc=${PIPESTATUS[0]}
echo "== debian13: demo exit $rc in $((SECONDS - t0))s from the fresh clone (install, build, run)"
[[ $rc -eq 0 ]] || { echo "FAIL: scripts/demo exited $rc"; exit 1; }
grep -qx DEMO-OK /demo.log || { echo "FAIL: scripts/demo exited 0 without printing DEMO-OK"; exit 1; }
echo "== debian13: compilers: $(c++ --version | head -1)"
t1=$SECONDS
scripts/test -L '^(unit|package)$'
rc=$?
echo "== debian13: scripts/test -L '^(unit|package)\$' exit $rc in $((SECONDS - t1))s"
exit $rc
EOF

say "demo, then the unit and package tests, in $root (ccache: ${ISS_DEBIAN13_CCACHE:-cold})"
t0=$SECONDS
propagation=private
unshare --mount --propagation private -- true 2>/dev/null || propagation=unchanged
set +e
unshare --mount --propagation "$propagation" -- /bin/bash -c '
  set -e
  root=$1
  mount -t proc proc "$root/proc"
  mount --rbind /sys "$root/sys"
  mount --rbind /dev "$root/dev"
  cache=()
  if [[ -n ${ISS_DEBIAN13_CCACHE:-} ]]; then
    mkdir -p "$root/ccache"; mount --bind "$ISS_DEBIAN13_CCACHE" "$root/ccache"; cache=(CCACHE_DIR=/ccache)
  fi
  chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    TERM=dumb CI="${CI:-}" "${cache[@]}" /bin/bash /debian13-run.sh' _ "$root"
rc=$?
set -e
say "done in $((SECONDS - t0))s, rc=$rc"
if [[ $rc -eq 0 ]]; then
  rm -rf --one-file-system "$root"
else
  echo "the root is kept for a look: $root (demo log: $root/demo.log)"
fi
exit $rc
