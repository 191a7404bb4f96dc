#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What docker/Dockerfile promises besides the runtime stage's RUN lines (deb_chroot.sh runs
those), read from the file since no Docker engine runs here:

    dockerfile_check.py --source REPO --binary path/to/iggy-s3-sink

- build stage: the apt layer (scripts/install-deps --build) comes before `COPY . .`, after a
  COPY of nothing but the install script, so a source change reuses it; the build passes the
  REVISION argument to CMake (-DISS_GIT_REV), the commit of build_info;
- runtime stage: the OCI labels (org.opencontainers.image.*) with the revision from the same
  REVISION argument and the version of CMakeLists.txt's project(); ADMIN_LISTEN on all
  interfaces, which the package's config reads as admin.listen, and EXPOSE of its port;
  a HEALTHCHECK through the daemon's own `healthcheck` command, which the binary must have (no
  curl in the image).
Exit 0 when every check passes, 1 with every problem listed.
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dockerfile_stage import instructions  # noqa: E402

OCI = ("title", "description", "licenses", "source", "version", "revision", "created")


def stages(text):
    out = []
    for kw, args in instructions(text):
        if kw == "FROM":
            out.append([])
        if out:
            out[-1].append((kw, args))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--binary", required=True)
    a = ap.parse_args()
    problems = []
    text = open(os.path.join(a.source, "docker", "Dockerfile"), encoding="utf-8").read()
    st = stages(text)
    if len(st) != 2:
        print(f"PROBLEM expected two stages, found {len(st)}\n1 problems")
        return 1
    build, runtime = st

    # The build stage's layer order.
    kws = [(k, v) for k, v in build]
    copy_all = next((i for i, (k, v) in enumerate(kws) if k == "COPY" and v.split()[0] == "."), None)
    apt = next((i for i, (k, v) in enumerate(kws) if k == "RUN" and "scripts/install-deps" in v), None)
    if copy_all is None or apt is None or apt > copy_all:
        problems.append("build stage: the install-deps RUN must come before COPY . . (apt layer cached across "
                        "source changes)")
    else:
        early = [v for k, v in kws[:apt] if k == "COPY"]
        if early != ["scripts/install-deps scripts/install-deps"]:
            problems.append(f"build stage: before the apt layer only scripts/install-deps is copied, not {early}")
    if not any(k == "RUN" and '-DISS_GIT_REV="${REVISION}"' in v for k, v in kws) or \
            not any(k == "ARG" and v.startswith("REVISION") for k, v in kws):
        problems.append("build stage: ARG REVISION passed to CMake as -DISS_GIT_REV=\"${REVISION}\"")

    # The runtime stage: labels, admin port, health check.
    labels = {}
    for k, v in runtime:
        if k == "LABEL":
            for m in re.finditer(r'([a-z0-9.\-]+)="([^"]*)"', v):
                labels[m.group(1)] = m.group(2)
    for key in OCI:
        if f"org.opencontainers.image.{key}" not in labels:
            problems.append(f"runtime stage: no LABEL org.opencontainers.image.{key}")
    args = dict((v.split("=", 1) + [""])[:2] for k, v in runtime if k == "ARG")
    if labels.get("org.opencontainers.image.revision") != "${REVISION}" or "REVISION" not in args:
        problems.append("runtime stage: org.opencontainers.image.revision must be ${REVISION} (ARG REVISION)")
    project = re.search(r"project\(\s*iggy[-_]s3[-_]sink\s+VERSION\s+([0-9.]+)",
                        open(os.path.join(a.source, "CMakeLists.txt"), encoding="utf-8").read())
    if not project or args.get("VERSION", "").strip('"') != project.group(1):
        problems.append(f"runtime stage: ARG VERSION {args.get('VERSION')} is not project()'s "
                        f"{project.group(1) if project else '?'}")
    env = dict(v.split("=", 1) for k, v in runtime if k == "ENV" and "=" in v)
    listen = env.get("ADMIN_LISTEN", "")
    m = re.match(r"^0\.0\.0\.0:([0-9]+)$", listen)
    if not m:
        problems.append(f"runtime stage: ENV ADMIN_LISTEN={listen!r}, expected 0.0.0.0:PORT (all interfaces)")
    else:
        exposed = [v for k, v in runtime if k == "EXPOSE"]
        if f"{m.group(1)}/tcp" not in exposed and m.group(1) not in exposed:
            problems.append(f"runtime stage: EXPOSE {m.group(1)} (the admin port) missing, have {exposed}")
    pkg = open(os.path.join(a.source, "packaging", "iggy-s3-sink.yaml"), encoding="utf-8").read()
    if not re.search(r"^  listen: \$\{ADMIN_LISTEN:-[^}]+\}", pkg, re.M):
        problems.append("packaging/iggy-s3-sink.yaml: admin.listen does not read ${ADMIN_LISTEN:-...}")
    usage = subprocess.run([a.binary, "--help"], capture_output=True, text=True).stdout
    has_command = re.search(r"^\s+healthcheck\b", usage, re.M) is not None
    health = [v for k, v in runtime if k == "HEALTHCHECK"]
    if has_command and not any("iggy-s3-sink" in h and "healthcheck" in h for h in health):
        problems.append("runtime stage: the daemon has a healthcheck command: HEALTHCHECK CMD must use it")
    if not has_command:
        problems.append("iggy-s3-sink --help lists no healthcheck command: the image's HEALTHCHECK needs it")
    if any(re.search(r"\b(curl|wget)\b", v) for k, v in runtime if k in ("RUN", "HEALTHCHECK")):
        problems.append("runtime stage: no curl or wget in the image")
    print(f"build stage: apt layer before COPY . .; runtime: {len(labels)} OCI labels, admin {listen}, "
          f"HEALTHCHECK {'through iggy-s3-sink healthcheck' if health else 'none (no healthcheck command)'}")
    for p in problems:
        print(f"PROBLEM {p}")
    print(f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
