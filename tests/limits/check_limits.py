#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The size limits of the product code: no file under lib/, proto/ or daemon/ above 600 lines,
no function there above 120 lines (from the line of its name to its closing brace, lambdas
inside it included). Function extents come from Universal Ctags (Debian universal-ctags,
scripts/install-deps); without it the check fails, it never passes unchecked.

    tests/limits/check_limits.py [REPO]       check REPO (default: this checkout)
    tests/limits/check_limits.py --self-test  show that an oversized file and function fail

Exit 0 when every file and function is within the limits; 1 naming each one that is not (or
when ctags is missing or found no functions at all).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 120
FOLDERS = ("lib", "proto", "daemon")
SUFFIXES = (".cpp", ".hpp", ".h", ".cc", ".ipp")


def sources(repo):
    for folder in FOLDERS:
        for root, dirs, files in os.walk(os.path.join(repo, folder)):
            dirs.sort()
            for name in sorted(files):
                if name.endswith(SUFFIXES):
                    yield os.path.join(root, name)


def functions(paths):
    """(path, line, end, name) of every function definition ctags finds in paths."""
    ctags = shutil.which("ctags")
    if ctags is None:
        sys.exit("check_limits: ctags not found: install universal-ctags (scripts/install-deps)")
    cmd = [ctags, "--output-format=json", "--fields=+neS", "--kinds-C++=f", "--language-force=C++", "-f", "-"]
    out = subprocess.run(cmd + list(paths), capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"check_limits: {' '.join(cmd[:2])} failed ({out.stderr.strip()}): is it Universal Ctags?")
    for line in out.stdout.splitlines():
        tag = json.loads(line)
        if tag.get("_type") != "tag" or "end" not in tag:
            continue
        scope = tag.get("scope", "")
        name = f"{scope.split('::')[-1]}::{tag['name']}" if tag.get("scopeKind") in ("class", "struct") else tag["name"]
        yield tag["path"], tag["line"], tag["end"], name


def check(repo):
    paths = list(sources(repo))
    if not paths:
        sys.exit(f"check_limits: no C++ sources under {', '.join(FOLDERS)} of {repo}")
    problems = []
    for p in paths:
        with open(p, encoding="utf-8", errors="replace") as f:
            n = sum(1 for _ in f)
        if n > MAX_FILE_LINES:
            problems.append(f"{os.path.relpath(p, repo)}: {n} lines (limit {MAX_FILE_LINES}): split the file")
    seen = 0
    for path, line, end, name in functions(paths):
        seen += 1
        n = end - line + 1
        if n > MAX_FUNCTION_LINES:
            problems.append(f"{os.path.relpath(path, repo)}:{line}: function {name} is {n} lines "
                            f"(limit {MAX_FUNCTION_LINES}): split it")
    if seen == 0:
        sys.exit("check_limits: ctags reported no function extents: the check cannot run")
    for p in problems:
        print(p)
    print(f"check_limits: {len(paths)} files, {seen} functions, {len(problems)} over the limits")
    return 1 if problems else 0


def self_test():
    """An oversized function and file fail, each named; code within the limits passes."""
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "lib", "m"))
        ok = "int small() {\n" + "    int x = 0;\n" * 10 + "    return x;\n}\n"
        with open(os.path.join(d, "lib", "m", "ok.cpp"), "w") as f:
            f.write(ok)
        if check(d) != 0:
            sys.exit("self-test: code within the limits failed")
        big = "namespace n {\nint too_long(int a) {\n" + "    a += 1;\n" * 130 + "    return a;\n}\n}\n"
        with open(os.path.join(d, "lib", "m", "big.cpp"), "w") as f:
            f.write(big)
        with open(os.path.join(d, "lib", "m", "long.hpp"), "w") as f:
            f.write("// filler\n" * 601)
        out = subprocess.run([sys.executable, __file__, d], capture_output=True, text=True)
        if out.returncode != 1 or "lib/m/big.cpp:2: function too_long is 133 lines" not in out.stdout \
                or "lib/m/long.hpp: 601 lines" not in out.stdout:
            sys.exit(f"self-test: the oversized function and file were not both named:\n{out.stdout}{out.stderr}")
    print("check_limits self-test: an oversized function and file fail, each named")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    sys.exit(check(os.path.abspath(repo)))
