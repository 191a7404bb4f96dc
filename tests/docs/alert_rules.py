#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The alert rules in docs/operations.md ("Alerts") can be pasted into Prometheus as they are:
promtool accepts them, and every iggy_s3_sink_* metric they use is one the metrics table of
the same page documents (unit.admin checks that table against what the daemon serves).

usage: alert_rules.py SOURCE_DIR   (exit 0: all good; 1: every problem listed)"""
import os
import re
import shutil
import subprocess
import sys
import tempfile


def main(src):
    with open(os.path.join(src, "docs", "operations.md"), encoding="utf-8") as f:
        page = f.read()
    at = page.find("\n## Alerts\n")
    if at < 0:
        print("FAIL: docs/operations.md has no '## Alerts' section")
        return 1
    m = re.search(r"```yaml\n(.*?)```", page[at:], re.S)
    if not m:
        print("FAIL: the Alerts section has no ```yaml block")
        return 1
    rules = m.group(1)
    problems = []
    documented = set(re.findall(r"^\| `(iggy_s3_sink_[a-z0-9_]+)` \|", page, re.M))
    used = set(re.findall(r"\b(iggy_s3_sink_[a-z0-9_]+)", rules))
    if not used:
        problems.append("the rules use no iggy_s3_sink_* metric")
    for name in sorted(used - documented):
        problems.append(f"the rules use {name}, which the metrics table does not document")
    promtool = shutil.which("promtool")
    if not promtool:
        problems.append("promtool is missing (Debian's prometheus package; scripts/install-deps installs it)")
    else:
        with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as f:
            f.write(rules)
        try:
            r = subprocess.run([promtool, "check", "rules", f.name], capture_output=True, text=True)
        finally:
            os.unlink(f.name)
        print(r.stdout.strip())
        if r.returncode != 0:
            problems.append(f"promtool check rules: {r.stdout.strip()} {r.stderr.strip()}")
    for p in problems:
        print("FAIL:", p)
    print(f"alert rules: {len(used)} metrics used, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
