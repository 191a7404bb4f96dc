#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The documentation site holds together: every page in docs/ (and CHANGELOG.md) is linked
from README.md, and every relative link in README.md, CHANGELOG.md and docs/*.md resolves: the
file or folder exists and, for `page.md#anchor`, the page has a heading with that anchor
(GitHub's rule: lower case, punctuation other than `-` and `_` dropped, spaces as `-`, `-N`
for repeats). Links in code blocks and code spans are not links. Also: no file of the
repository names the development folder beside it (`..` + `/shared`).

usage: check_links.py SOURCE_DIR   (exit 0: all good; 1: every problem listed)"""
import os
import re
import sys

LINK = re.compile(r"\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def prose_lines(text):
    """The lines outside fenced code blocks, with code spans blanked."""
    fence = None
    for n, line in enumerate(text.split("\n"), 1):
        m = re.match(r"^\s*(```+|~~~+)", line)
        if m:
            if fence is None:
                fence = m.group(1)[:3]
            elif m.group(1).startswith(fence):
                fence = None
            continue
        if fence is None and not line.startswith("    "):
            yield n, re.sub(r"(`+)(?:(?!\1).)*?\1", "", line)


def anchors(text):
    """The anchors of the headings outside fenced code blocks."""
    seen = {}
    out = set()
    fence = None
    for line in text.split("\n"):
        f = re.match(r"^\s*(```+|~~~+)", line)
        if f:
            if fence is None:
                fence = f.group(1)[:3]
            elif f.group(1).startswith(fence):
                fence = None
            continue
        m = HEADING.match(line) if fence is None else None
        if m:
            out.add(slug(m.group(2), seen))
    return out


def slug(title, seen):
    s = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title)  # a link's text
    s = s.replace("`", "").strip().lower()
    s = re.sub(r"[^\w\- ]", "", s).replace(" ", "-")
    n = seen.get(s, 0)
    seen[s] = n + 1
    return s if n == 0 else f"{s}-{n}"


def main(src):
    problems = []
    docs = sorted(f for f in os.listdir(os.path.join(src, "docs")) if f.endswith(".md"))
    pages = ["README.md", "CHANGELOG.md"] + [f"docs/{f}" for f in docs]
    texts = {}
    for p in pages:
        path = os.path.join(src, p)
        if not os.path.isfile(path):
            problems.append(f"{p}: missing")
            continue
        with open(path, encoding="utf-8") as f:
            texts[p] = f.read()
    linked_from_readme = set()
    links = 0
    for p, text in texts.items():
        base = os.path.dirname(p)
        for n, line in prose_lines(text):
            for m in LINK.finditer(line):
                target = m.group(1)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                    continue
                links += 1
                file_part, _, anchor = target.partition("#")
                rel = os.path.normpath(os.path.join(base, file_part)) if file_part else p
                if rel.startswith(".."):
                    problems.append(f"{p}:{n}: link '{target}' leaves the repository")
                    continue
                if p == "README.md":
                    linked_from_readme.add(rel)
                full = os.path.join(src, rel)
                if not os.path.exists(full):
                    problems.append(f"{p}:{n}: link '{target}': {rel} does not exist")
                    continue
                if anchor and rel.endswith(".md"):
                    if rel not in texts:
                        with open(full, encoding="utf-8") as f:
                            texts_other = f.read()
                    else:
                        texts_other = texts[rel]
                    if anchor not in anchors(texts_other):
                        problems.append(f"{p}:{n}: link '{target}': {rel} has no heading with anchor #{anchor}")
    for p in pages[1:]:
        if p in texts and p not in linked_from_readme:
            problems.append(f"README.md does not link {p}")
    # No file refers to the development folder beside the repository.
    needle = ".." + "/shared"
    skip = {".git", "node_modules", "build"}
    for root, dirs, files in os.walk(src):
        dirs[:] = [d for d in dirs if d not in skip and not d.startswith("build")]
        for f in files:
            path = os.path.join(root, f)
            try:
                with open(path, encoding="utf-8") as fh:
                    if needle in fh.read():
                        problems.append(f"{os.path.relpath(path, src)}: refers to {needle}")
            except (UnicodeDecodeError, OSError):
                pass
    for q in problems:
        print("FAIL:", q)
    print(f"docs: {len(texts)} pages, {links} relative links checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
