#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The documentation's complete configurations are valid: every ```yaml block of the pages
listed below that starts with `iggy:` (the mark of a whole configuration, not an excerpt) is
given to `iggy-s3-sink check-config` as it is, which must exit 0 (a warning is fine).
The variables the snippets reference (${IGGY_PASSWORD}, ${CATALOG_SECRET}) are set to
placeholders. Fails naming the page, the block's line and check-config's output; fails too
when a page has no such block (the check would have stopped running).
usage: check_snippets.py BINARY SOURCE_DIR"""
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

PAGES = {"docs/iceberg.md": 3}  # page: how many whole configurations it holds at least


def blocks(text: str):
    """(line number, body) of every ```yaml block."""
    for m in re.finditer(r"^```yaml\n(.*?)^```", text, flags=re.M | re.S):
        yield text.count("\n", 0, m.start()) + 1, m.group(1)


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    binary, src = sys.argv[1], Path(sys.argv[2])
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "IGGY_PASSWORD": "placeholder",
           "CATALOG_SECRET": "placeholder"}
    failures = []
    for page, least in PAGES.items():
        whole = [(line, body) for line, body in blocks((src / page).read_text()) if body.startswith("iggy:")]
        if len(whole) < least:
            failures.append(f"{page}: {len(whole)} whole configurations (```yaml starting with iggy:), want {least}")
        for line, body in whole:
            with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
                f.write(body)
                f.flush()
                r = subprocess.run([binary, "check-config", "--config", f.name], env=env, capture_output=True,
                                   text=True, timeout=30)
            if r.returncode != 0:
                failures.append(f"{page}:{line}: check-config exited {r.returncode}:\n{r.stdout}{r.stderr}")
            else:
                print(f"{page}:{line}: valid")
    for f in failures:
        print(f"FAIL: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
