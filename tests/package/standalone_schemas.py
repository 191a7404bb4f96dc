#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Makes kubeconform-readable schemas out of PyPI kubernetes-validate's (scripts/install-deps).

    standalone_schemas.py SRC DST VERSION...

kubernetes-validate's `vX.Y.Z-local-strict/<kind>-<group>-<version>.json` refer to
`/api/_definitions.json#/$defs/...`, a path its own resolver maps; kubeconform cannot follow
it (nor does it load a second file). For each VERSION this writes DST/vX.Y.Z-local-strict/<same name>.json with the definitions
it needs (the closure of its references) in its own `$defs`, every reference made local.
"""
import json
import os
import sys

PREFIX = "/api/_definitions.json#/$defs/"


def refs(node, out):
    if isinstance(node, dict):
        r = node.get("$ref")
        if isinstance(r, str) and r.startswith(PREFIX):
            out.add(r[len(PREFIX):])
        elif isinstance(r, str) and r.startswith("#/$defs/"):  # within _definitions.json
            out.add(r[len("#/$defs/"):])
        for v in node.values():
            refs(v, out)
    elif isinstance(node, list):
        for v in node:
            refs(v, out)


def localise(node):
    if isinstance(node, dict):
        return {k: ("#/$defs/" + v[len(PREFIX):] if k == "$ref" and isinstance(v, str) and v.startswith(PREFIX)
                    else localise(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [localise(v) for v in node]
    return node


def main():
    src, dst, versions = sys.argv[1], sys.argv[2], sys.argv[3:]
    for v in versions:
        d_in = os.path.join(src, f"v{v}-local-strict")
        d_out = os.path.join(dst, f"v{v}-local-strict")
        os.makedirs(d_out, exist_ok=True)
        defs = json.load(open(os.path.join(d_in, "_definitions.json"), encoding="utf-8"))["$defs"]
        n = 0
        for name in sorted(os.listdir(d_in)):
            if not name.endswith(".json") or name.startswith("_") or name == "all.json":
                continue
            schema = json.load(open(os.path.join(d_in, name), encoding="utf-8"))
            need, todo = set(), set()
            refs(schema, todo)
            while todo:
                k = todo.pop()
                if k in need:
                    continue
                need.add(k)
                refs(defs[k], todo)
            out = localise(schema)
            if need:
                out["$defs"] = {k: localise(defs[k]) for k in sorted(need)}
            with open(os.path.join(d_out, name), "w", encoding="utf-8") as f:
                json.dump(out, f)
            n += 1
        print(f"standalone_schemas: {n} schemas for Kubernetes {v}")


if __name__ == "__main__":
    main()
