#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Debian package in a fresh root of the release this machine runs (/etc/os-release: Debian 12
# or 13; the .deb's Depends are this release's libraries): installs build/iggy-s3-sink_*.deb the
# way docker/Dockerfile's runtime stage does (its COPY and RUN lines, read from the Dockerfile),
# into a copy of a clean root of that release, then checks what a user gets:
#   - `iggy-s3-sink --version`, as root and as the image's USER;
#   - the installed file list, the env file's mode 0600, the conffiles;
#   - `check-config` on the shipped config: 78 naming the missing variables, 0 once the
#     shipped env file is filled in;
#   - `systemd-analyze verify` on the installed unit;
#   - `apt-get remove` keeps the edited config and env (conffiles), `apt-get purge` removes them.
#
#   deb_chroot.sh DEB SOURCE_DIR WORK_DIR
#
# The clean root is made once per WORK_DIR by debootstrap (minbase + systemd, about the size of
# debian:12-slim) and kept as WORK_DIR/debian<VERSION_ID>-base (debian12-base, debian13-base);
# every run copies it. ISS_DEBIAN_BASE_CACHE=DIR keeps it in DIR instead, ISS_DEBIAN_BASE=DIR
# uses a root made elsewhere (e.g. a CI cache); ISS_DEBIAN_MIRROR overrides the mirror, which
# is otherwise read from this machine's apt sources. Needs root (debootstrap, chroot, mount in
# a private mount namespace: nothing stays mounted when the script ends, however it ends).
set -euo pipefail
deb=$(realpath "$1") src=$(realpath "$2") work=$3
mkdir -p "$work"; work=$(realpath "$work")
say() { printf '== %s (%s)\n' "$*" "$(date -u +%H:%M:%S)"; }
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

if [[ $(id -u) -ne 0 ]]; then
  [[ ${CI:-} == true ]] && fail "needs root (debootstrap, chroot); CI must run it"
  echo "SKIP: needs root (debootstrap, chroot)"; exit 77
fi
for t in debootstrap unshare chroot python3 dpkg-deb; do
  command -v "$t" >/dev/null || fail "$t is missing (scripts/install-deps installs it)"
done

# This release: debootstrap's suite and the base's name.
suite=$(. /etc/os-release; [[ ${ID:-} == debian ]] && echo "${VERSION_CODENAME:-}") || true
version_id=$(. /etc/os-release; echo "${VERSION_ID:-}")
[[ -n $suite && -n $version_id ]] || fail "/etc/os-release names no Debian release (ID=debian, VERSION_CODENAME, VERSION_ID): the clean root is of this machine's release"

mirror=${ISS_DEBIAN_MIRROR:-}
if [[ -z $mirror && -f /etc/apt/sources.list.d/debian.sources ]]; then
  mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources)
fi
if [[ -z $mirror && -f /etc/apt/sources.list ]]; then
  mirror=$(awk '$1=="deb"{for(i=2;i<=NF;i++) if($i ~ /^https?:/){print $i; exit}}' /etc/apt/sources.list)
fi
mirror=${mirror:-http://deb.debian.org/debian}

# --- the clean root, made once ------------------------------------------------------------
base=${ISS_DEBIAN_BASE:-${ISS_DEBIAN_BASE_CACHE:-$work}/debian$version_id-base}
mkdir -p "$(dirname "$base")"
exec 9>"$base.lock"
flock 9   # one debootstrap at a time per cache; later runs only read the base
if [[ ! -f $base/.ok ]]; then
  say "debootstrap Debian $version_id ($suite) minbase + systemd into $base (once per work dir; $mirror)"
  t0=$SECONDS
  rm -rf --one-file-system "$base.tmp"
  debootstrap --variant=minbase --include=systemd "$suite" "$base.tmp" "$mirror" \
    >"$work/debootstrap.log" 2>&1 || { tail -20 "$work/debootstrap.log"; fail "debootstrap (log: $work/debootstrap.log)"; }
  rm -f "$base.tmp"/var/cache/apt/archives/*.deb   # as in debian:12-slim: no package cache
  rm -rf --one-file-system "$base"; mv "$base.tmp" "$base"; touch "$base/.ok"
  say "base made in $((SECONDS - t0))s"
fi
flock -u 9

# --- a fresh copy per run -----------------------------------------------------------------
root=$work/root
rm -rf --one-file-system "$root"
cp -a "$base" "$root"
# The same apt sources as this machine (security updates included), so the package's Depends
# resolve to what the binary was linked against.
if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
  rm -f "$root/etc/apt/sources.list"
  cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"

# The Dockerfile's runtime stage: its COPY --from=build of the .deb and its RUN lines.
stage=$(python3 "$src/tests/package/dockerfile_stage.py" "$src/docker/Dockerfile") || fail "docker/Dockerfile: no runtime stage"
py() { python3 -c "import json,sys; s=json.loads(sys.argv[1]); $1" "$stage"; }
copy_dst=$(py 'print(next(c["dst"] for c in s["copy"] if c["from"] and any(x.endswith(".deb") for x in c["src"])))') \
  || fail "docker/Dockerfile: the runtime stage has no COPY --from=... of the .deb"
copy_src=$(py 'print(next(x for c in s["copy"] for x in c["src"] if x.endswith(".deb")))')
case "$(basename "$deb")" in $(basename "$copy_src")) ;; *) fail "docker/Dockerfile copies $copy_src, which does not match $(basename "$deb")" ;; esac
mkdir -p "$root/$copy_dst"; cp "$deb" "$root/$copy_dst/"
# Pages to compare with what the package installs.
mkdir -p "$root/package-src/docs"
cp "$src/README.md" "$src/CHANGELOG.md" "$root/package-src/"; cp "$src/docs/configuration.md" "$root/package-src/docs/"
py 'print("\n".join(s["run"]))' >"$root/dockerfile-run.sh"
image_user=$(py 'print(s["user"] or "0:0")')
[[ $image_user == *:* ]] || image_user="$image_user:$image_user"
entrypoint=$(py 'print(s["entrypoint"][0])')
version=$(dpkg-deb -f "$deb" Version)
# The documentation site as the package installs it: every page of docs/, gzip-compressed.
doc_pages=$(cd "$src" && LC_ALL=C ls docs/*.md | sed 's|^|/usr/share/doc/iggy-s3-sink/|; s|$|.gz|')

cat >"$root/package-test.sh" <<EOF
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8
fail() { printf 'FAIL: %s\n' "\$*" >&2; exit 1; }
say() { printf '== %s\n' "\$*"; }

say "docker/Dockerfile runtime stage: RUN"
cat /dockerfile-run.sh
/bin/sh -e /dockerfile-run.sh

say "iggy-s3-sink --version"
out=\$($entrypoint --version) || fail "--version exited \$?"
echo "\$out"
[[ \$out == "iggy-s3-sink $version"* ]] || fail "--version printed '\$out', expected iggy-s3-sink $version"
# As the image's USER ($image_user), with the root file system as it is.
setpriv --reuid=${image_user%%:*} --regid=${image_user##*:} --clear-groups $entrypoint --version >/dev/null \\
  || fail "--version as $image_user"

say "installed files"
dpkg -L iggy-s3-sink | sort | while read -r f; do [[ -d \$f ]] || echo "\$f"; done >/tmp/files
cat /tmp/files
cat >/tmp/expected <<'LIST'
/etc/iggy-s3-sink/env
/etc/iggy-s3-sink/iggy-s3-sink.yaml
/usr/bin/iggy-s3-sink
/usr/lib/systemd/system/iggy-s3-sink.service
/usr/share/doc/iggy-s3-sink/CHANGELOG.md.gz
/usr/share/doc/iggy-s3-sink/README.md.gz
/usr/share/doc/iggy-s3-sink/changelog.gz
/usr/share/doc/iggy-s3-sink/copyright
$doc_pages
/usr/share/lintian/overrides/iggy-s3-sink
/usr/share/man/man1/iggy-s3-sink.1.gz
LIST
diff -u /tmp/expected /tmp/files || fail "the package's files differ from the expected list (no test tools, nothing else)"
[[ \$(stat -c '%a %U %G' /etc/iggy-s3-sink/env) == "600 root root" ]] || fail "/etc/iggy-s3-sink/env is \$(stat -c '%a %U %G' /etc/iggy-s3-sink/env), expected 600 root root"
conf=\$(dpkg-query -W -f='\${Conffiles}' iggy-s3-sink)
for f in /etc/iggy-s3-sink/iggy-s3-sink.yaml /etc/iggy-s3-sink/env; do
  grep -q " \$f " <<<"\$conf" || fail "\$f is not a conffile"
done
file_out=\$(head -c 4 /usr/bin/iggy-s3-sink | od -An -c | tr -d ' ')
[[ \$file_out == 177ELF ]] || fail "/usr/bin/iggy-s3-sink is not an ELF binary"

for p in README.md CHANGELOG.md docs/configuration.md; do
  zcat /usr/share/doc/iggy-s3-sink/\$p.gz | cmp -s - /package-src/\$p || fail "/usr/share/doc/iggy-s3-sink/\$p.gz is not \$p"
done
say "check-config on the shipped config, IGGY_PASSWORD unset: exit 78 naming it (S3 keys are optional)"
set +e
out=\$(env -u IGGY_PASSWORD -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY iggy-s3-sink check-config --config /etc/iggy-s3-sink/iggy-s3-sink.yaml 2>&1); rc=\$?
set -e
echo "\$out"
[[ \$rc -eq 78 ]] || fail "check-config without the variables exited \$rc, expected 78"
grep -q IGGY_PASSWORD <<<"\$out" || fail "check-config did not name IGGY_PASSWORD"
for v in IGGY_PASSWORD AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY; do
  grep -q "^#\$v=" /etc/iggy-s3-sink/env || fail "the shipped env file has no #\$v= line to fill in"
done

say "check-config with the shipped env file filled in: exit 0"
sed -i -e 's/^#IGGY_PASSWORD=.*/IGGY_PASSWORD=pw-from-env-file/' \
       -e 's/^#AWS_ACCESS_KEY_ID=.*/AWS_ACCESS_KEY_ID=AKIDEXAMPLE/' \
       -e 's/^#AWS_SECRET_ACCESS_KEY=.*/AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI-secret-example/' /etc/iggy-s3-sink/env
out=\$(env -i PATH=/usr/bin:/bin sh -c 'set -a; . /etc/iggy-s3-sink/env; exec iggy-s3-sink check-config --config /etc/iggy-s3-sink/iggy-s3-sink.yaml' 2>&1) \
  || { echo "\$out"; fail "check-config on the shipped config with its variables set exited non-zero"; }
echo "\$out" | head -5
grep -q 'pw-from-env-file\|wJalrXUtnFEMI-secret-example' <<<"\$out" && fail "check-config printed a secret"

say "systemd-analyze verify /usr/lib/systemd/system/iggy-s3-sink.service"
set +e
out=\$(systemd-analyze verify /usr/lib/systemd/system/iggy-s3-sink.service 2>&1); rc=\$?
set -e
echo "\$out"
[[ \$rc -eq 0 ]] || fail "systemd-analyze verify exited \$rc"
grep -q 'iggy-s3-sink' <<<"\$out" && fail "systemd-analyze verify has something to say about the unit"

say "apt-get remove keeps the edited conffiles"
sed -i 's/^  level: info /  level: debug/' /etc/iggy-s3-sink/iggy-s3-sink.yaml
grep -q '^  level: debug' /etc/iggy-s3-sink/iggy-s3-sink.yaml || fail "could not edit the config"
apt-get remove -y -q iggy-s3-sink >/dev/null
[[ ! -e /usr/bin/iggy-s3-sink ]] || fail "remove left /usr/bin/iggy-s3-sink"
[[ ! -e /usr/lib/systemd/system/iggy-s3-sink.service ]] || fail "remove left the unit"
grep -q '^  level: debug' /etc/iggy-s3-sink/iggy-s3-sink.yaml || fail "remove lost the edited config"
grep -q '^IGGY_PASSWORD=pw-from-env-file' /etc/iggy-s3-sink/env || fail "remove lost the edited env file"
[[ \$(dpkg-query -W -f='\${db:Status-Abbrev}' iggy-s3-sink) == "rc "* ]] || fail "package state after remove: \$(dpkg-query -W -f='\${db:Status-Abbrev}' iggy-s3-sink)"
apt-get purge -y -q iggy-s3-sink >/dev/null
[[ ! -e /etc/iggy-s3-sink/iggy-s3-sink.yaml && ! -e /etc/iggy-s3-sink/env ]] || fail "purge left the conffiles"
say "all package checks passed"
EOF

say "installing $(basename "$deb") into a fresh Debian $version_id root ($root)"
t0=$SECONDS
# A private mount namespace for the chroot's /proc and /dev. Inside a chroot whose / is not a
# mount point (e.g. a throwaway Debian root), making / private fails with EINVAL: the mounts are
# then made without changing propagation (they still go away with the namespace).
propagation=private
unshare --mount --propagation private -- true 2>/dev/null || propagation=unchanged
set +e
unshare --mount --propagation "$propagation" -- /bin/bash -c '
  set -e
  root=$1
  mount -t proc proc "$root/proc"
  mount --rbind /dev "$root/dev"
  chroot "$root" /bin/bash /package-test.sh' _ "$root"
rc=$?
set -e
say "chroot checks took $((SECONDS - t0))s, rc=$rc"
if [[ $rc -eq 0 ]]; then rm -rf --one-file-system "$root"; fi
exit $rc
