#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end cases of Iceberg tables (issue 36), beside iceberg_cases.py (same fixture and
environment: ICEBERG_DIR, ICEBERG_PYTHON, ICEBERG_READ_TABLE from CTest).
Usage: iceberg_verify_cases.py CASE

- shared_table: three source topics (app/[events,audit], ops/[events]) in one table
  (`iceberg.table: everything`), a bad message skipped (delivery.on_bad_message: skip) right
  after an object closed (so it is in no data file's range); `verify` reads the table once,
  attributes its data files to the topics, counts the skipped message as accounted for and
  exits 0; --stream/--topic narrow it without turning the other topics' files into problems;
  another writer's append (PyIceberg) is a note, listed in --json, not a problem; one of this
  sink's files registered twice is still a problem.
- catalog_refuses: the catalog answers the commits 403 for a while (s3-fault-front in front of
  it): /readyz 503 `catalog: refusing commits: forbidden: ...`, the gauge
  iggy_s3_sink_iceberg_catalog_refusing 1, the pipeline's error lines counting the attempts;
  once lifted, the daemon commits by itself: /readyz 200, the gauge 0, every row once.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter

from harness import Env, FaultFront, check, log, run_case
from iceberg_cases import T0_US, iceberg_env, read_table, readyz_and_up, table_config, verify

TOPICS = [("app", "events"), ("app", "audit"), ("ops", "events")]


def produce_run(env: Env, address: str, stream: str, topic: str, seqs: range, bad: bool = False) -> None:
    """Messages `seqs` to partition 0 of stream/topic (created with one partition), after one that
    is not JSON when `bad`."""
    path = env.work / f"{stream}-{topic}-{seqs.start}.jsonl"
    lines = ["this is not JSON\n"] if bad else []
    lines += [json.dumps({"seq": s, "ts": T0_US + s * 1_000_000, "tenant": "acme"}) + "\n" for s in seqs]
    path.write_text("".join(lines))
    out = env.produce(address, stream, topic, "--create", "1", "--partition", "0", str(path))
    check(f"sent {len(lines)} messages" in out, f"iggy-produce to {stream}/{topic}: {out}")


def shared_config(env: Env, ice: dict, address: str, ns: str):
    cfg = table_config(env, ice, address, ns, "sink", partition_by=())
    c = json.loads(cfg.read_text())
    c["sources"] = [{"stream": "app", "topics": ["events", "audit"], "partitions": "all"},
                    {"stream": "ops", "topics": ["events"], "partitions": "all"}]
    c["iceberg"]["table"] = "everything"
    c["delivery"] = {"on_bad_message": "skip"}
    cfg.write_text(json.dumps(c, indent=2))
    return cfg


def shared_table(env: Env, rng) -> None:
    ice = iceberg_env()
    ns = f"e2e_{rng.randrange(1 << 30):x}_{os.getpid():x}"
    broker = env.start_broker()
    for s, t in TOPICS:
        produce_run(env, broker.address, s, t, range(0, 1))
    cfg = shared_config(env, ice, broker.address, ns)
    d = env.start_daemon(cfg)
    for s, t in TOPICS:
        produce_run(env, broker.address, s, t, range(1, 300))
    env.wait_lag_zero(cfg, 120)  # every object closed (rotation.idle 1s) and in the table
    # The bad message is the first after an object closed: offset 300 is in no data file.
    produce_run(env, broker.address, "app", "events", range(300, 400), bad=True)
    env.wait_lag_zero(cfg, 120)
    check(env.stop(d) == 0, "the daemon did not exit 0 on SIGTERM")
    text = (env.work / "sink.log").read_text(errors="replace")
    check("bad message" in text, f"no bad message in the daemon's log:\n{text[-3000:]}")

    rc, out = verify(env, cfg)
    check(rc == 0 and "ok: every offset" in out, f"verify on a table of three topics exited {rc}:\n{out}")
    check("of 1 table," in out, f"verify did not read the shared table once:\n{out}")
    check("1 offset is in no object: the format refuses its message" in out,
          f"verify does not account for the skipped message:\n{out}")
    for flags in (["--stream", "app", "--topic", "audit"], ["--stream", "ops"], ["--topic", "events"]):
        rc, out = verify(env, cfg, *flags)
        check(rc == 0 and "ok: every offset" in out, f"verify {' '.join(flags)} exited {rc}:\n{out}")
    rc, out = verify(env, cfg, "--json")
    j = json.loads(out.splitlines()[0])
    check(rc == 0 and j["ok"] and j["note_count"] == 0, f"verify --json: {out}")
    check(sorted((p["stream"], p["topic"]) for p in j["partitions"]) == sorted(TOPICS),
          f"verify --json partitions: {j['partitions']}")
    log(f"verify: one table, {len(j['partitions'])} partitions of 3 topics ok, 1 skipped message accounted for")

    # Another writer's append (PyIceberg writes a file of its own): a note, not a problem.
    t = read_table(env, ice, ns, "everything", "--append-copy=5", "--files")
    ours = [f[0] for f in t["files"] if "+" in f[0].rsplit("/", 1)[-1]]
    foreign = [f[0] for f in t["files"] if f[0] not in ours]
    check(len(foreign) == 1, f"PyIceberg's append: {len(foreign)} data files not of this sink: {foreign}")
    rc, out = verify(env, cfg)
    check(rc == 0 and "ok: every offset" in out, f"verify after another writer's append exited {rc}:\n{out}")
    check("1 data file not written by this sink" in out and foreign[0] in out, f"verify names no note:\n{out}")
    rc, out = verify(env, cfg, "--json")
    j = json.loads(out.splitlines()[0])
    check(rc == 0 and j["note_count"] == 1 and j["notes"] == foreign, f"verify --json after the append: {out}")

    # One of this sink's files registered twice stays a problem.
    path = sorted(p for p in ours if "/app+events+" in p)[0]
    key = path.split("/", 3)[3]
    read_table(env, ice, ns, "everything", f"--add-again={path}")
    rc, out = verify(env, cfg)
    check(rc == 1 and f"are in two objects: {key} and {key}" in out,
          f"verify with a data file registered twice exited {rc}:\n{out}")
    log(f"another writer's file: a note ({foreign[0]}); {key} registered twice: exit 1, naming it")


def refusing_gauge(env: Env, admin: str) -> float | None:
    return env.scrape(admin).get(("iggy_s3_sink_iceberg_catalog_refusing", ()))


def failed_commits(env: Env, admin: str) -> float:
    return env.scrape(admin).get(("iggy_s3_sink_iceberg_commits_total", (("result", "failed"),)), 0.0)


def catalog_refuses(env: Env, rng) -> None:
    ice = iceberg_env()
    ns = f"e2e_{rng.randrange(1 << 30):x}_{os.getpid():x}"
    front = FaultFront(env, ice["ICEBERG_URI"])
    # The commits (POST .../namespaces/NS/tables/events), not the table's creation (POST .../tables).
    front.add("access_denied_403", method="POST", target=f"/namespaces/{ns}/tables/events")
    broker = env.start_broker()
    cfg = table_config(env, {**ice, "ICEBERG_URI": front.url}, broker.address, ns, "sink", partition_by=())
    c = json.loads(cfg.read_text())
    del c["iggy"]["consumer_group"]
    c["iggy"]["consumer"] = "s3-sink-ice-refused"  # single consumer: the pipeline retries in place
    cfg.write_text(json.dumps(c, indent=2))
    produce_run(env, broker.address, "app", "events", range(0, 300))
    d = env.start_daemon(cfg)
    admin = env.admin_address()
    deadline = time.time() + 90
    status, body, up = 0, "", None
    while time.time() < deadline:
        status, body, up = readyz_and_up(env, admin)
        if status == 503 and failed_commits(env, admin) >= 3:
            break
        time.sleep(0.5)
    check(status == 503 and "catalog: refusing commits: forbidden: " in body and "HTTP 403" in body,
          f"with the catalog refusing commits: /readyz {status} {body!r}")
    check(up == 1 and refusing_gauge(env, admin) == 1,
          f"catalog_up {up}, catalog_refusing {refusing_gauge(env, admin)} while the catalog refuses")
    text = (env.work / "sink.log").read_text(errors="replace")
    check("the catalog refuses commits (forbidden" in text, f"no refusal line in the log:\n{text[-3000:]}")
    check("(attempt 2)" in text and "(attempt 3)" in text,
          f"the table step's error lines do not count the attempts:\n{text[-3000:]}")
    log(f"catalog refusing: /readyz 503: {body.strip().splitlines()[-1][:160]}")

    front.clear()
    env.wait_lag_zero(cfg, 180)
    deadline = time.time() + 60
    while time.time() < deadline and readyz_and_up(env, admin)[0] != 200:
        time.sleep(0.5)
    status, body, up = readyz_and_up(env, admin)
    check(status == 200 and refusing_gauge(env, admin) == 0, f"after the refusal: /readyz {status} {body!r}")
    check(env.stop(d) == 0, "the daemon did not exit 0 on SIGTERM")
    text = (env.work / "sink.log").read_text(errors="replace")
    check("the catalog accepts commits again" in text, "no 'the catalog accepts commits again' line in the log")
    t = read_table(env, ice, ns, "events", "--select=seq")
    counts = Counter(r[0] for r in t["select"])
    check(counts == Counter(range(300)), f"the table's rows are not every message once: {len(counts)} distinct of "
                                         f"300, {sum(counts.values())} rows")
    stats = front.finish()
    log(f"refusal lifted: /readyz 200, every one of 300 rows once; fault front {stats}")


CASES = {"shared_table": shared_table, "catalog_refuses": catalog_refuses}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print(f"usage: iceberg_verify_cases.py {{{'|'.join(CASES)}}}", file=sys.stderr)
        sys.exit(2)
    fn = CASES[sys.argv[1]]
    fn.__name__ = sys.argv[1]
    run_case(fn)
