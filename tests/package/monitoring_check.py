#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The monitoring files of packaging/monitoring, without a daemon:

    monitoring_check.py --source REPO

- the alert rules pass `promtool check rules`, and `promtool test rules` passes their unit
  tests (iggy-s3-sink.rules.test.yaml), where every alert is asserted both firing and quiet;
- the dashboard is Grafana JSON whose every query (panels and variables) is valid PromQL
  (promtool parses each as a recording rule, Grafana's $variables replaced by values), has a
  unique panel id and a grid position, and has the sections the docs name.
That each named series exists on a running daemon is e2e.monitoring_series. Exit 0 when
everything passes, 1 with every problem listed.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

SECTIONS = ("Throughput", "Lag per partition", "Upload latency", "S3 errors by class", "Memory budget use",
            "Commit age per partition", "Bad messages and dead letters", "Stopped partition $stopped")
GRAFANA_VARS = {"$__rate_interval": "5m", "${datasource}": "x", "$job": ".+", "$stopped": "app/events/0"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    a = ap.parse_args()
    mon = os.path.join(os.path.abspath(a.source), "packaging", "monitoring")
    problems = []
    rules = os.path.join(mon, "iggy-s3-sink.rules.yaml")
    tests = os.path.join(mon, "iggy-s3-sink.rules.test.yaml")
    for cmd in (["promtool", "check", "rules", rules], ["promtool", "test", "rules", tests]):
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=mon)
        print(f"{' '.join(cmd[:3])}: exit {r.returncode}")
        if r.returncode != 0:
            problems.append(f"{' '.join(cmd)} exited {r.returncode}:\n{r.stdout}{r.stderr}")
    alerts = [r["alert"] for g in yaml.safe_load(open(rules, encoding="utf-8"))["groups"] for r in g["rules"]]
    fired, quiet = set(), set()
    for t in yaml.safe_load(open(tests, encoding="utf-8"))["tests"]:
        for c in t.get("alert_rule_test", []):
            (fired if c.get("exp_alerts") else quiet).add(c["alertname"])
    for al in alerts:
        if al not in fired or al not in quiet:
            problems.append(f"alert {al}: the rule tests must assert it firing and quiet "
                            f"(firing: {al in fired}, quiet: {al in quiet})")
    print(f"{len(alerts)} alerts, each tested firing and quiet: {not any('alert ' in p for p in problems)}")

    dash = json.load(open(os.path.join(mon, "iggy-s3-sink.dashboard.json"), encoding="utf-8"))
    exprs = []
    ids = set()
    titles = []
    for p in dash["panels"]:
        if p["id"] in ids:
            problems.append(f"panel id {p['id']} twice")
        ids.add(p["id"])
        titles.append(p["title"])
        if set(p.get("gridPos", {})) != {"x", "y", "w", "h"}:
            problems.append(f"panel {p['title']!r}: gridPos needs x, y, w, h")
        for t in p.get("targets", []):
            exprs.append((f"panel {p['title']!r} {t['refId']}", t["expr"]))
        if p["type"] != "row" and not p.get("targets"):
            problems.append(f"panel {p['title']!r} has no query")
    for v in dash["templating"]["list"]:
        if isinstance(v.get("query"), dict):
            q = v["query"]["query"]
            inner = re.match(r"^(?:query_result|label_values)\((.*)\)$", q)
            exprs.append((f"variable {v['name']}", inner.group(1).rsplit(", job", 1)[0] if inner else q))
    for s in SECTIONS:
        if not any(t.startswith(s) for t in titles):
            problems.append(f"the dashboard has no panel or row {s!r}")
    if not any(p.get("repeat") == "stopped" for p in dash["panels"] if p["type"] == "row"):
        problems.append("no row repeats per stopped partition")
    recording = []
    for i, (where, e) in enumerate(exprs):
        for k, v in GRAFANA_VARS.items():
            e = e.replace(k, v)
        recording.append({"record": f"dashboard:query_{i}", "expr": e})
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        yaml.safe_dump({"groups": [{"name": "dashboard", "rules": recording}]}, f)
    try:
        r = subprocess.run(["promtool", "check", "rules", f.name], capture_output=True, text=True, timeout=120)
    finally:
        os.unlink(f.name)
    if r.returncode != 0:
        problems.append(f"dashboard queries are not all valid PromQL:\n{r.stdout}{r.stderr}")
    print(f"dashboard: {len(dash['panels'])} panels, {len(exprs)} queries parsed by promtool: exit {r.returncode}")
    for p in problems:
        print(f"PROBLEM {p}")
    print(f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
