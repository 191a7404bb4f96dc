#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Prints one stage of a Dockerfile as JSON, so a test can run what the image build would run.

    dockerfile_stage.py DOCKERFILE [STAGE]      STAGE: a name (FROM ... AS name) or "last"

Output: {"from": image, "name": name, "workdir": dir, "copy": [{"from": stage|null, "src": [...],
"dst": path}], "run": [shell command, ...], "user": "uid:gid"|null, "entrypoint": [...],
"cmd": [...]}. Handles line continuations, comments, the exec (JSON) and shell forms; other
instructions are listed under "other". Exits 1 when the stage is not there.
"""
import json
import shlex
import sys


def instructions(text):
    """Yields (KEYWORD, arguments) with continuation lines joined."""
    logical = ""
    for raw in text.splitlines():
        line = raw.rstrip()
        if not logical and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if logical and line.lstrip().startswith("#"):
            continue  # a comment inside a continued instruction
        if line.endswith("\\"):
            logical += line[:-1] + " "
            continue
        logical += line
        keyword, _, args = logical.strip().partition(" ")
        yield keyword.upper(), args.strip()
        logical = ""
    if logical.strip():
        keyword, _, args = logical.strip().partition(" ")
        yield keyword.upper(), args.strip()


def exec_or_shell(args):
    if args.startswith("["):
        return json.loads(args)
    return ["/bin/sh", "-c", args]


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    want = sys.argv[2] if len(sys.argv) == 3 else "last"
    stages = []
    for keyword, args in instructions(open(sys.argv[1], encoding="utf-8").read()):
        if keyword == "FROM":
            parts = args.split()
            name = parts[2] if len(parts) >= 3 and parts[1].upper() == "AS" else None
            stages.append({"from": parts[0], "name": name, "workdir": "/", "copy": [], "run": [],
                           "user": None, "entrypoint": [], "cmd": [], "other": []})
            continue
        if not stages:
            continue  # ARG before FROM
        s = stages[-1]
        if keyword == "RUN":
            s["run"].append(args)
        elif keyword == "COPY":
            words = shlex.split(args)
            opts = [w for w in words if w.startswith("--")]
            paths = [w for w in words if not w.startswith("--")]
            src_stage = next((o.split("=", 1)[1] for o in opts if o.startswith("--from=")), None)
            s["copy"].append({"from": src_stage, "src": paths[:-1], "dst": paths[-1]})
        elif keyword == "USER":
            s["user"] = args
        elif keyword == "WORKDIR":
            s["workdir"] = args
        elif keyword == "ENTRYPOINT":
            s["entrypoint"] = exec_or_shell(args)
        elif keyword == "CMD":
            s["cmd"] = exec_or_shell(args)
        else:
            s["other"].append([keyword, args])
    chosen = stages[-1] if want == "last" and stages else next((s for s in stages if s["name"] == want), None)
    if chosen is None:
        print(f"{sys.argv[1]}: no stage {want!r}", file=sys.stderr)
        return 1
    json.dump(chosen, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
