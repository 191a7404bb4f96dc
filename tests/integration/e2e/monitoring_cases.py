#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The monitoring files against a running daemon: every series that the Grafana dashboard
(packaging/monitoring/iggy-s3-sink.dashboard.json) or the alert rules
(packaging/monitoring/iggy-s3-sink.rules.yaml) name must be on the daemon's /metrics.

The run makes every family appear: short-lived credentials from aws-test-server's container
endpoint (in front of RGW) for the credential metrics, JSON messages on app/events delivered
and committed, and a non-JSON message on app/bad with `delivery.on_bad_message: fail`, which
stops that partition (partition_stopped). Series Prometheus makes itself (`up`) are the only
names allowed without the daemon; the deprecated names (CHANGELOG.md) are refused.

Usage: monitoring_cases.py series   (ISS_BINARY_DIR and RGW_DIR from CTest)."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

from aws_cases import AwsServer, clean_daemon_env
from harness import Env, check, log, metric_sum, parse_metrics, run_case

REPO = Path(__file__).resolve().parents[3]
MONITORING = REPO / "packaging" / "monitoring"
PROMETHEUS_OWN = {"up"}
DEPRECATED = {"iggy_s3_sink_bytes_in_total", "iggy_s3_sink_bytes_uploaded_total"}
NAME = re.compile(r"\b((?:iggy_s3_sink|process)_[a-z0-9_]+)\b")


def named_series() -> dict[str, set[str]]:
    """{series name: where it is named} over the dashboard's queries and the rules' expressions."""
    out: dict[str, set[str]] = {}
    dash = json.loads((MONITORING / "iggy-s3-sink.dashboard.json").read_text())
    exprs = []
    for p in dash["panels"]:
        exprs += [(f"dashboard panel {p['title']!r}", t["expr"]) for t in p.get("targets", [])]
    for v in dash["templating"]["list"]:
        q = v.get("query")
        if isinstance(q, dict):
            exprs.append((f"dashboard variable {v['name']}", q["query"]))
    import yaml  # python3-yaml (scripts/install-deps)
    rules = yaml.safe_load((MONITORING / "iggy-s3-sink.rules.yaml").read_text())
    for g in rules["groups"]:
        exprs += [(f"rule {r['alert']}", r["expr"]) for r in g["rules"]]
    check(len(exprs) > 20, f"only {len(exprs)} expressions found: the file layout changed?")
    for where, e in exprs:
        names = set(NAME.findall(e))
        if re.search(r"\bup\{", e):
            names.add("up")
        check(names, f"{where}: no series named in {e!r}")
        for n in names:
            out.setdefault(n, set()).add(where)
    return out


def series(env: Env, rng) -> None:
    wanted = named_series()
    broker = env.start_broker()
    bucket = env.make_bucket(f"e2e-monitoring-{rng.randrange(1 << 30):x}")
    pod_token = f"pod-token-{rng.randrange(1 << 60):x}"
    server = AwsServer(env, "--container-token", pod_token)
    token_file = env.work / "pod-token"
    token_file.write_text(pod_token)
    env.produce(broker.address, "app", "events", "--create", "2", "--balanced", "--count", "3000", "--size", "200",
                "--batch", "500")
    bad = env.work / "bad.txt"
    bad.write_text('{"n":1}\n{"n":2}\nthis is not json\n{"n":4}\n')
    env.produce(broker.address, "app", "bad", "--create", "1", "--partition", "0", str(bad))
    cfg = env.config(bucket, broker.address, topics=["events", "bad"], consumer="monitoring",
                     endpoint=server.url, delivery={"on_bad_message": "fail"},
                     fmt={"type": "json_lines", "compression": "none", "payload": "json"},
                     rotation={"max_records": 1000, "idle": "1s"})
    doc = json.loads(cfg.read_text())
    for k in ("access_key_id", "secret_access_key"):
        doc["s3"].pop(k)
    doc["s3"]["credentials"] = {"source": "auto"}  # the chain finds the container endpoint
    cfg.write_text(json.dumps(doc, indent=2))
    daemon_env = clean_daemon_env(env, {"AWS_CONTAINER_CREDENTIALS_FULL_URI": server.url + "/container/creds",
                                        "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE": str(token_file)})
    # Started as aws_cases does, with the cleaned environment (no long-lived keys at all).
    logf = open(env.work / "sink.log", "a")
    d = subprocess.Popen([env.bin("iggy-s3-sink"), "run", "--config", str(cfg)], env=daemon_env, stdout=logf,
                         stderr=subprocess.STDOUT)
    env.procs.append(d)
    admin = env.admin_address()

    # Until everything has happened once: events delivered, the bad partition stopped.
    deadline = time.time() + 180
    text, m = "", {}
    while time.time() < deadline:
        status, text = env.http_get(admin, "/metrics")
        check(status == 200, f"/metrics answered {status}")
        m = parse_metrics(text)
        if (metric_sum(m, "iggy_s3_sink_messages_total", topic="events") == 3000
                and metric_sum(m, "iggy_s3_sink_partition_stopped") == 1):
            break
        time.sleep(0.5)
    (env.work / "scrape.prom").write_text(text)
    check(metric_sum(m, "iggy_s3_sink_messages_total", topic="events") == 3000,
          f"events not delivered: messages_total {metric_sum(m, 'iggy_s3_sink_messages_total')}")
    r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, f"promtool check metrics failed ({r.returncode}): {r.stdout}{r.stderr}")

    # The stopped partition, with its reason; the others run.
    stopped = {labels: v for (n, labels), v in m.items() if n == "iggy_s3_sink_partition_stopped"}
    check(list(stopped) == [(("partition", "0"), ("reason", "bad_message"), ("stream", "app"), ("topic", "bad"))],
          f"partition_stopped series: {stopped}")
    now = time.time()
    check(metric_sum(m, "iggy_s3_sink_credentials_expiry_timestamp_seconds", source="container") > now - 10,
          "no credentials expiry in the future for the container source")
    check(0 < now - metric_sum(m, "process_start_time_seconds") < 600, "process_start_time_seconds is not this run's")
    for p in ("0", "1"):
        at = metric_sum(m, "iggy_s3_sink_last_commit_timestamp_seconds", topic="events", partition=p)
        check(0 <= now - at < 600, f"events partition {p}: last commit {now - at:.0f}s ago")

    # Every series the dashboard and the rules name, exposed (histograms as _bucket).
    exposed = {n for n, _ in m}
    missing = {n: w for n, w in wanted.items() if n not in exposed and n not in PROMETHEUS_OWN}
    check(not missing, "named by the monitoring files but not exposed by the daemon:\n" +
          "\n".join(f"  {n}: {', '.join(sorted(w))}" for n, w in sorted(missing.items())))
    old = {n: w for n, w in wanted.items() if n in DEPRECATED}
    check(not old, f"the monitoring files use deprecated names: {old}")
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    server.finish()
    log(f"{len(wanted)} series named by the dashboard and the rules, all exposed")


CASES = {"series": series}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print(f"usage: monitoring_cases.py {{{'|'.join(CASES)}}}", file=sys.stderr)
        sys.exit(2)
    fn = CASES[sys.argv[1]]
    fn.__name__ = sys.argv[1]
    run_case(fn)
