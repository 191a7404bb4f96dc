#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The mutation guard of the delivery contract's tests (CTest `mutants`).

Each mutant below breaks one rule of the contract (the essay of lib/pipeline/delivery.hpp)
on purpose: the tests tagged for that rule must fail. For each mutant this script
  1. finds its anchor: the named function's definition in the named file, and inside that
     body the snippet (whitespace-insensitive) exactly once;
  2. writes the mutated file into BUILD/mutants/ (the source tree and the build's own
     objects are never touched, so tests running beside it see the real binary);
  3. compiles it with the build's own command (`ninja -t commands`), puts the object in a
     copy of its library, links a copy of unit_pipeline against it;
  4. runs that copy with the mutant's tag and requires at least one failed test case.

Exit 0 only when every mutant was caught. Exit 1, naming the mutant, when an anchor is
missing or ambiguous (a refactor moved the code: move the anchor with it, never delete the
mutant), when a mutant does not compile, or when its tests all pass (the tests no longer
guard the rule). Before the mutants the unmutated binary must pass every tag.

    tests/unit/pipeline/mutants.py [--build DIR] [--source DIR] [--list] [NAME-PREFIX ...]
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

# (name, tag, file, edits): each edit is (function, snippet, replacement), where `function` is
# the qualified name of the definition whose body holds the snippet, exactly once.
MUTANTS = [
    ("inv1 commit before durability (eagerly after every append)", "[inv1]", "lib/pipeline/delivery.cpp", [
        ("partition_writer::after_append", "checksum_new_bytes(o);",
         "checksum_new_bytes(o); { const bool eager = co_await commit_through(o.last_offset); (void)eager; }")]),
    ("inv2 key from the last offset", "[inv2]", "lib/pipeline/delivery_upload.cpp", [
        ("partition_writer::deliver_front", "o.encoder->finish(o.buf);",
         "o.encoder->finish(o.buf); o.key = ports_.namer.key(p_, o.last_offset);")]),
    ("inv3 overwrite instead of adopt (PutObject without If-None-Match)", "[inv3]",
     "lib/pipeline/delivery_upload.cpp", [
        ("partition_writer::upload", "ports_.store.put_object(o.key, o.buf, r, content_type, o_.plan.if_none_match,",
         "ports_.store.put_object(o.key, o.buf, r, content_type, false,")]),
    ("inv4 multipart although Complete ignores the condition", "[inv4]", "lib/pipeline/delivery.cpp", [
        ("partition_writer::after_append", "cap = o_.part_size;", "cap = 0;")]),
    ("health: a refusing store is asked again at once in group mode (a retry storm)", "[health]",
     "lib/pipeline/delivery_upload.cpp", [
        ("partition_writer::deliver_front", "retry_at_ = ports_.clock.steady_now() + wait;", "")]),
    ("inv5 a failed offset store tried again at every tick in group mode (a tight loop)", "[inv5]",
     "lib/pipeline/delivery_commit.cpp", [
        ("partition_writer::commit_through", "store_retry_at_ = ports_.clock.steady_now() + wait;", "")]),
    ("inv5 drop on hand-over", "[inv5]", "lib/pipeline/router.cpp", [
        ("router::release", "co_await w->flush(rotate_reason::hand_over);", "w->drop(\"mutant\");")]),
    ("inv6 stop without flush", "[inv6]", "lib/pipeline/router.cpp", [
        ("router::stop", "all = co_await w->flush(rotate_reason::stop) && all;", "w->drop(\"mutant\");")]),
    ("inv5 hand-over without telling the table step (its batch waits for the interval)", "[inv5]",
     "lib/pipeline/delivery_commit.cpp", [
        ("partition_writer::flush", "if (scope.t) scope.t->handing_over(p_, true);", "")]),
    ("inv7 offset stored without the table step", "[inv7]", "lib/pipeline/delivery_commit.cpp", [
        ("partition_writer::commit_through", "const table_result t = co_await table_through(offset);",
         "const table_result t{};")]),
    ("inv7 table step after the offset is stored", "[inv7]", "lib/pipeline/delivery_commit.cpp", [
        ("partition_writer::commit_through", "const table_result t = co_await table_through(offset);",
         "const table_result t{};"),
        ("partition_writer::commit_through", "ledger_.stored(offset);",
         "ledger_.stored(offset); { const table_result late = co_await table_through(offset); (void)late; }")]),
    ("inv7 a failed table step ignored", "[inv7]", "lib/pipeline/delivery_commit.cpp", [
        ("partition_writer::commit_through", "if (t.status != table_status::ok) {", "if (false) {")]),
    ("inv7 a deferred table step treated as a failure (waits, warnings)", "[inv7]", "lib/pipeline/delivery_commit.cpp", [
        ("partition_writer::commit_through", "if (t.status == table_status::deferred) {", "if (false) {")]),
    ("inv7 a deferred table step lets the offset be stored", "[inv7]", "lib/pipeline/delivery_commit.cpp", [
        ("partition_writer::commit_through", "if (t.status == table_status::deferred) {",
         "if (t.status == table_status::deferred && false) {"),
        ("partition_writer::commit_through", "if (t.status != table_status::ok) {",
         "if (t.status != table_status::ok && t.status != table_status::deferred) {")]),
    ("G2 adoption marks every encoded partition done", "[g2]", "lib/pipeline/delivery_upload.cpp", [
        ("partition_writer::deliver_front",
         "const bool alone = !ports_.namer.record_dependent() && objects_.empty() && !objects_.in_flight();",
         "const bool alone = true;")]),
    ("G2 adoption of less re-reads nothing", "[g2]", "lib/pipeline/commit_ledger.cpp", [
        ("commit_ledger::adopted", "next_ = std::min(next_.value_or(from), from);", "")]),
    ("G2 a re-read that reaches the last handled message goes on (commit point held back)", "[g2]",
     "lib/pipeline/commit_ledger.cpp", [
        ("commit_ledger::passed_over", "if (handled_ && offset >= *handled_) caught_up(offset);", "")]),
    ("G3 commit point off by one (stores the lowest open first offset itself)", "[g3]",
     "lib/pipeline/commit_ledger.cpp", [
        ("commit_ledger::commit_point", "if (p == 0) return std::nullopt; return p - 1;", "return p;")]),
    ("G3 commit point ignores in-flight objects", "[g3]", "lib/pipeline/open_object_set.cpp", [
        ("open_object_set::lowest_first",
         "for (const auto& o : closing_) p = std::min(p.value_or(o->first_offset), o->first_offset);", "")]),
    ("G3 commit point ignores delivered objects it falls inside", "[g3]", "lib/pipeline/commit_ledger.cpp", [
        ("commit_ledger::commit_point", "if (d.first < p && p <= d.last) {", "if (false) {")]),
    ("G3 delivered objects closed together go up out of order", "[g3]", "lib/pipeline/open_object_set.cpp", [
        ("open_object_set::close", "return a->first_offset < b->first_offset;",
         "return a->first_offset > b->first_offset;")]),
    ("G4 max_open_objects closes the newest object", "[g4]", "lib/pipeline/open_object_set.cpp", [
        ("open_object_set::make_room", "if (j->second->first_offset < oldest->second->first_offset) oldest = j;",
         "if (j->second->first_offset > oldest->second->first_offset) oldest = j;")]),
    ("G5 a later bucket closes nothing", "[g5]", "lib/pipeline/open_object_set.cpp", [
        ("open_object_set::earlier_buckets", "if (o->bucket && *o->bucket < bucket)",
         "if (o->bucket && *o->bucket < bucket && false)")]),
    ("G5 encoded partition without its time bucket", "[g5]", "lib/pipeline/adapters/key_namer.cpp", [
        ("template_key_namer::encode", "if (e.bucket) {", "if (false) {")]),
]

TEST_TARGET = "tests/unit/pipeline/unit_pipeline"
RUN_TIMEOUT = 300  # seconds for one tagged run (a mutant that hangs counts as caught)


class Failure(Exception):
    pass


def body_span(text, start):
    """The [open, close] indices of the brace block that starts at or after `start`,
    skipping strings, character literals and comments."""
    i = text.index("{", start)
    depth = 0
    n = len(text)
    j = i
    while j < n:
        c = text[j]
        if c == "/" and text.startswith("//", j):
            j = text.find("\n", j)
            j = n if j < 0 else j
        elif c == "/" and text.startswith("/*", j):
            j = text.index("*/", j) + 1
        elif c in "\"'":
            k = j + 1
            while text[k] != c:
                k += 2 if text[k] == "\\" else 1
            j = k
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i, j
        j += 1
    raise ValueError("unbalanced braces")


def find_definition(text, function):
    """The body span of `function`'s one definition (a declaration ends in ';' first)."""
    found = []
    for m in re.finditer(r"(?<![\w:])" + re.escape(function) + r"\s*\(", text):
        # Skip the parameter list, then qualifiers up to the body or a ';'.
        depth, j = 0, m.end() - 1
        while True:
            if text[j] == "(":
                depth += 1
            elif text[j] == ")":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        rest = re.match(r"[^;{]*", text[j + 1:]).group(0)
        if text[j + 1 + len(rest):j + 2 + len(rest)] == "{" and "=" not in rest:
            found.append(body_span(text, j + 1))
    return found


def snippet_regex(snippet):
    """The snippet with every whitespace run matching any whitespace (line breaks moved by
    clang-format), and whitespace allowed between tokens that had none."""
    parts = [re.escape(p) for p in snippet.split()]
    return re.compile(r"\s+".join(parts))


def apply_mutant(source_root, mutant):
    """The mutated text of the mutant's file; Failure naming the mutant when an anchor is
    missing or ambiguous."""
    name, _tag, path, edits = mutant
    full = os.path.join(source_root, path)
    if not os.path.isfile(full):
        raise Failure(f"mutant '{name}': anchor file {path} does not exist")
    text = open(full, encoding="utf-8").read()
    for function, snippet, replacement in edits:
        spans = find_definition(text, function)
        if len(spans) != 1:
            raise Failure(f"mutant '{name}': {len(spans)} definitions of {function} in {path} (need exactly one); "
                          "move the anchor in tests/unit/pipeline/mutants.py with the code")
        lo, hi = spans[0]
        hits = list(snippet_regex(snippet).finditer(text, lo, hi + 1))
        if len(hits) != 1:
            raise Failure(f"mutant '{name}': the snippet {snippet!r} occurs {len(hits)} times in {function} "
                          f"({path}), need exactly once; move the anchor in tests/unit/pipeline/mutants.py "
                          "with the code")
        h = hits[0]
        text = text[:h.start()] + replacement + text[h.end():]
    return text


class Build:
    """The build's own commands for unit_pipeline (Ninja), rewritten for mutated copies."""

    def __init__(self, build_dir, source_root):
        self.dir = os.path.abspath(build_dir)
        self.source_root = os.path.abspath(source_root)
        if not os.path.isfile(os.path.join(self.dir, "build.ninja")):
            raise Failure(f"{self.dir} is not a Ninja build (configure with -G Ninja, as scripts/test does)")
        binary = os.path.join(self.dir, TEST_TARGET)
        if not os.path.isfile(binary):
            raise Failure(f"{binary} is missing: build the unit_pipeline target first")
        out = subprocess.run(["ninja", "-C", self.dir, "-t", "commands", TEST_TARGET],
                             capture_output=True, text=True)
        if out.returncode != 0:
            raise Failure(f"ninja -t commands failed: {out.stderr.strip()}")
        self.commands = out.stdout.splitlines()
        self.link = [c for c in self.commands if f"-o {TEST_TARGET} " in c + " "]
        if len(self.link) != 1:
            raise Failure(f"cannot find the link command of {TEST_TARGET}")
        self.link = self.link[0]

    def compile_command(self, path):
        src = os.path.join(self.source_root, path)
        hits = [c for c in self.commands if re.search(r"\s-c\s+" + re.escape(src) + r"(\s|$)", c)]
        if len(hits) != 1:
            raise Failure(f"cannot find the compile command of {path} in the build")
        return hits[0]

    def archive_command(self, obj):
        hits = [c for c in self.commands if " qc " in c and f" {obj}" in c]
        if len(hits) != 1:
            raise Failure(f"cannot find the archive that holds {obj}")
        return hits[0]

    def build_mutant(self, work, path, mutated_text):
        """Compiles `mutated_text` as `path`, re-archives its library, links unit_pipeline
        into `work`; returns the binary."""
        os.makedirs(work, exist_ok=True)
        src = os.path.join(self.source_root, path)
        mutated = os.path.join(work, os.path.basename(path))
        old = open(mutated, encoding="utf-8").read() if os.path.exists(mutated) else None
        if old != mutated_text:  # (same text, same mtime: ccache and the check below stay warm)
            with open(mutated, "w", encoding="utf-8") as f:
                f.write(mutated_text)
        cc = self.compile_command(path)
        obj = re.search(r"\s-o\s+(\S+)", cc).group(1)
        new_obj = os.path.join(work, os.path.basename(obj))
        cc = re.sub(r"\s-MD\s+-MT\s+\S+\s+-MF\s+\S+", " ", cc)
        cc += " -g0"  # (no debug info: the copy is only run, never debugged)
        cc = re.sub(r"\s-o\s+\S+", f" -o {shlex.quote(new_obj)}", cc, count=1)
        cc = re.sub(r"\s-c\s+" + re.escape(src) + r"(?=\s|$)",
                    f" -iquote {shlex.quote(os.path.dirname(src))} -c {shlex.quote(mutated)}", cc)
        run_checked(cc, self.dir, f"compiling {path}")
        ar = self.archive_command(obj)
        lib = re.search(r"\sqc\s+(\S+)", ar).group(1)
        new_lib = os.path.join(work, os.path.basename(lib))
        ar = ar.replace(f" {obj}", f" {shlex.quote(new_obj)}").replace(lib, new_lib)
        run_checked(ar, self.dir, f"archiving {lib}")
        binary = os.path.join(work, "unit_pipeline")
        link = re.sub(r"\s-o\s+" + re.escape(TEST_TARGET) + r"(?=\s|$)", f" -o {shlex.quote(binary)}", self.link)
        link = re.sub(r"(?<=\s)" + re.escape(lib) + r"(?=\s|$)", shlex.quote(new_lib), link)
        # Without the debug sections the link takes a second instead of seven.
        link = link.replace(f" -o {shlex.quote(binary)}", f" -Wl,--strip-debug -o {shlex.quote(binary)}", 1)
        if new_lib not in link:
            raise Failure(f"the link command of {TEST_TARGET} does not name {lib}")
        run_checked(link, self.dir, "linking unit_pipeline")
        return binary


def run_checked(command, cwd, what):
    r = subprocess.run(command, shell=True, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        raise Failure(f"{what} failed:\n{(r.stdout + r.stderr)[-3000:]}")


def run_tag(binary, tag):
    """(exit code, test cases run, test cases failed, summary line)."""
    env = dict(os.environ)
    env.pop("ISS_TEST_WORKERS", None)
    try:
        r = subprocess.run([binary, tag], capture_output=True, text=True, timeout=RUN_TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        return None, 0, 0, f"hung for {RUN_TIMEOUT} s"
    out = r.stdout
    m = re.search(r"All tests passed \((\d+) assertions? in (\d+) test cases?\)", out)
    if m:
        return r.returncode, int(m.group(2)), 0, m.group(0)
    m = re.search(r"test cases:\s*(\d+)(?:\s*\|\s*(\d+) passed)?(?:\s*\|\s*(\d+) failed)?", out)
    if m:
        return r.returncode, int(m.group(1)), int(m.group(3) or 0), m.group(0)
    last = (out.strip().splitlines() or ["(no output)"])[-1]
    return r.returncode, 0, 0, last


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", default=os.path.normpath(os.path.join(here, "../../..")))
    ap.add_argument("--build", default=None, help="the build directory (default SOURCE/build)")
    ap.add_argument("--list", action="store_true", help="check every anchor and list the mutants; build nothing")
    ap.add_argument("prefixes", nargs="*", help="run only the mutants whose name starts with one of these")
    a = ap.parse_args()
    build_dir = a.build or os.path.join(a.source, "build")
    chosen = [m for m in MUTANTS if not a.prefixes or any(m[0].startswith(p) for p in a.prefixes)]
    if not chosen:
        print(f"mutants: no mutant name starts with {a.prefixes}")
        return 1
    problems = []
    mutated = {}
    for m in chosen:  # every anchor first: a lost one is reported before anything is built
        try:
            mutated[m[0]] = apply_mutant(a.source, m)
        except Failure as e:
            problems.append(str(e))
    if problems or a.list:
        for p in problems:
            print(f"MISSING ANCHOR: {p}")
        if a.list and not problems:
            for m in chosen:
                print(f"{m[1]:8} {m[0]}  ({m[2]}: {', '.join(sorted({e[0] for e in m[3]}))})")
        return 1 if problems else 0
    try:
        build = Build(build_dir, a.source)
    except Failure as e:
        print(f"mutants: {e}")
        return 1
    baseline = os.path.join(build.dir, TEST_TARGET)
    for tag in sorted({m[1] for m in chosen}):
        rc, cases, failed, summary = run_tag(baseline, tag)
        if rc != 0 or cases == 0 or failed:
            print(f"mutants: the unmutated tests of {tag} must pass and exist: exit {rc}, {summary}")
            return 1
    surviving = []
    t_all = time.monotonic()
    for i, m in enumerate(chosen):
        name, tag, path = m[0], m[1], m[2]
        t0 = time.monotonic()
        work = os.path.join(build.dir, "mutants", f"m{i:02d}")
        try:
            binary = build.build_mutant(work, path, mutated[name])
        except Failure as e:
            print(f"NOT BUILT  {name}: {e}", flush=True)
            surviving.append(name)
            continue
        rc, cases, failed, summary = run_tag(binary, tag)
        dt = time.monotonic() - t0
        if rc is None or (rc != 0 and (failed > 0 or cases == 0)):
            print(f"caught     {name} {tag}: {summary} ({dt:.0f} s)", flush=True)
        else:
            print(f"SURVIVED   {name} {tag}: exit {rc}, {summary} ({dt:.0f} s)", flush=True)
            surviving.append(name)
    print(f"mutants: {len(chosen) - len(surviving)} of {len(chosen)} caught in {time.monotonic() - t_all:.0f} s")
    if surviving:
        print("mutants: NOT CAUGHT: " + "; ".join(surviving))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
