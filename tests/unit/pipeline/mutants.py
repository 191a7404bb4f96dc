# SPDX-License-Identifier: Apache-2.0
# Mutation check of the delivery-contract tests (not run by ctest): applies one deliberate
# break of each invariant, rebuilds unit_pipeline, runs the tests tagged for it, and prints
# how many failed (every line must show failures). Run from the worktree root with a build/.
import subprocess, sys
muts = [
 ("inv1 commit before durability", "lib/pipeline/delivery.cpp",
  "    open_->records += 1;\n", "    open_->records += 1;\n    { const bool eager = co_await commit_through(m.offset); (void)eager; }\n", "[inv1]"),
 ("inv2 key from last offset", "lib/pipeline/delivery_upload.cpp",
  "    o.encoder->finish(o.buf);\n", "    o.encoder->finish(o.buf);\n    o.key = ports_.namer.key(p_, o.last_offset);\n", "[inv2]"),
 ("inv3 overwrite instead of adopt", "lib/pipeline/delivery_upload.cpp",
  "res = co_await ports_.store.put_object(o.key, o.buf, r, content_type, o_.plan.if_none_match);", "res = co_await ports_.store.put_object(o.key, o.buf, r, content_type, false);", "[inv3]"),
 ("inv4 multipart although Complete ignores the condition", "lib/pipeline/delivery.cpp",
  "        cap = o_.part_size;  // invariant 4", "        cap = 0;  // invariant 4", "[inv4]"),
 ("inv5 drop on hand-over", "lib/pipeline/router.cpp",
  "        co_await w->flush(rotate_reason::hand_over);", "        w->drop(\"mutant\");", "[inv5]"),
 ("inv6 stop without flush", "lib/pipeline/router.cpp",
  "            all = co_await w->flush(rotate_reason::stop) && all;", "            w->drop(\"mutant\");", "[inv6]"),
 ("G3 commit point off by one (stores the lowest open first offset itself)", "lib/pipeline/delivery.cpp",
  "    if (p == 0) return std::nullopt;\n    return p - 1;", "    return p;", "[g3]"),
 ("G3 commit point ignores in-flight objects", "lib/pipeline/delivery.cpp",
  "    for (const auto& o : closing_) p = std::min(p, o->first_offset);\n", "", "[g3]"),
 ("G3 commit point ignores delivered objects it falls inside", "lib/pipeline/delivery.cpp",
  "            if (d.first < p && p <= d.last) {", "            if (false) {", "[g3]"),
 ("G2 adoption marks every encoded partition done", "lib/pipeline/delivery_upload.cpp",
  "        if (!ports_.namer.record_dependent() && open_.empty() && closing_.empty()) {", "        if (true) {", "[g2]"),
 ("G4 max_open_objects closes the newest object", "lib/pipeline/delivery.cpp",
  "                if (j->second->first_offset < oldest->second->first_offset) oldest = j;", "                if (j->second->first_offset > oldest->second->first_offset) oldest = j;", "[g4]"),
 ("G5 encoded partition without its time bucket", "lib/pipeline/adapters/key_namer.cpp",
  "    if (e.bucket) {\n        e.id += '\\0';", "    if (false) {\n        e.id += '\\0';", "[g5]"),
]
only = sys.argv[1] if len(sys.argv) > 1 else ''
for name, f, old, new, tag in muts:
    if only and not name.startswith(only): continue
    src = open(f).read()
    assert old in src, name
    open(f, 'w').write(src.replace(old, new, 1))
    try:
        b = subprocess.run("cmake --build build --target unit_pipeline -j2", shell=True, capture_output=True, text=True)
        if b.returncode != 0:
            print(name, "BUILD FAILED", b.stdout[-2000:]); continue
        r = subprocess.run(["./build/tests/unit/pipeline/unit_pipeline", tag], capture_output=True, text=True)
        summary = [l for l in r.stdout.splitlines() if l.startswith("test cases")]
        print(f"{name}: exit={r.returncode} {summary}", flush=True)
    finally:
        open(f, 'w').write(src)
subprocess.run("cmake --build build --target unit_pipeline -j2", shell=True, capture_output=True)
