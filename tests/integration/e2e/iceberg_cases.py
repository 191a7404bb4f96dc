#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end cases of Iceberg tables (issue 36): the daemon commits its Parquet objects to a
table of the real REST catalog of the `iceberg` CTest fixture (the Apache Iceberg project's
REST catalog server, tables on the test RGW); PyIceberg (tests/integration/iceberg/read_table.py,
in the venv scripts/install-deps makes) reads the table back as an independent reader.
Usage: iceberg_cases.py CASE   (ISS_BINARY_DIR, RGW_DIR, ICEBERG_DIR, ICEBERG_PYTHON,
ICEBERG_READ_TABLE from CTest).

- kills_two_daemons: messages over 3 partitions (a payload time `ts` over three UTC days and a
  `tenant`), a table partitioned by day(ts) and identity(tenant), two daemons in one consumer
  group committing to the same table, SIGKILLed 10 times in turn (seeded) while the messages
  are produced; then: every offset exactly once in the table's current snapshot, rows per
  (day, tenant) as produced (from the rows, and from the manifests' partition values and record
  counts), and the snapshot summary's `iggy-s3-sink.offsets` equal to Iggy's committed offsets;
  `lag` shows the table's committed offsets beside Iggy's, `verify` finds every offset in
  exactly one data file; with one data file registered a second time (PyIceberg's add_files),
  `verify` exits 1 naming it.
- column_stats: the manifests' column statistics are those of each data file's rows, and a
  PyIceberg scan with a row filter prunes data files by them.
- hand_over: a second daemon joining the group gets its partition without waiting for the
  commit interval or the rebalance timeout: the first commits the revoked partition at once.
- catalog_down: the catalog stopped mid-run and started again: /readyz and the catalog_up gauge
  say so meanwhile, `lag` prints what it can, and every record is once in the table after.
- bucket_mismatch: a table whose location is not in s3.bucket: `run` exits 78 naming both
  buckets and what to set, before it joins the group.
- topic_recreated: the topic deleted and created again while the daemon is stopped: at the
  restart (single consumer, then a group) the table's offsets, of the old topic, are an offset
  reset (not a resume point); a new iceberg.table reads the new topic.
- named_wrongly: iceberg.create false with the table missing, a wrong iceberg.catalog.prefix:
  exit 78 naming the key; a table dropped mid-run is created again.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from harness import Env, check, log, read_env_file, run_case

DAY_US = 86_400_000_000
T0_US = 1_796_083_200_000_000  # 2026-12-01T00:00:00Z
TENANTS = ["acme", "globex", "initech", None]  # None: no tenant (a null partition value)
SCHEMA = [{"name": "seq", "type": "int64", "from": "payload:seq", "nullable": False},
          {"name": "ts", "type": "timestamp_us", "from": "payload:ts", "nullable": False},
          {"name": "tenant", "type": "string", "from": "payload:tenant"},
          {"name": "part", "type": "int64", "from": "partition", "nullable": False},
          {"name": "offset", "type": "int64", "from": "offset", "nullable": False}]


def iceberg_env() -> dict[str, str]:
    d = os.environ.get("ICEBERG_DIR")
    if not d or not (Path(d) / "env").exists():
        print("ICEBERG_DIR/env missing: run through ctest (fixture iceberg)", file=sys.stderr)
        sys.exit(1)
    return read_env_file(Path(d) / "env")


def table_config(env: Env, ice: dict, address: str, ns: str, name: str, bucket: str | None = None,
                 partition_by: tuple[str, ...] = ("day(ts)", "identity(tenant)"), max_open: int = 32,
                 commit_interval: str = "1s", consumer: str | None = None, table: str = "{topic}",
                 extra: dict | None = None, extra_catalog: dict | None = None) -> Path:
    cfg = env.config(bucket or ice["ICEBERG_BUCKET"], address, group="s3-sink-ice", consumer=consumer, name=name,
                     fmt={"type": "parquet", "schema": SCHEMA},
                     rotation={"max_records": 400, "idle": "1s", "max_span": "1d", "max_open_objects": max_open})
    c = json.loads(cfg.read_text())
    c["iceberg"] = {"catalog": {"uri": ice["ICEBERG_URI"], **(extra_catalog or {})}, "namespace": ns, "table": table,
                    "partition_by": list(partition_by), "commit_interval": commit_interval, **(extra or {})}
    cfg.write_text(json.dumps(c, indent=2))
    return cfg


def read_table(env: Env, ice: dict, ns: str, table: str, *flags: str) -> dict:
    rgw = env.rgw
    e = dict(os.environ, RGW_ENDPOINT=rgw["RGW_ENDPOINT"], RGW_ACCESS_KEY=rgw["RGW_ACCESS_KEY"],
             RGW_SECRET_KEY=rgw["RGW_SECRET_KEY"], RGW_REGION=rgw.get("RGW_REGION", "us-east-1"))
    r = subprocess.run([os.environ["ICEBERG_PYTHON"], os.environ["ICEBERG_READ_TABLE"], ice["ICEBERG_URI"], ns, table,
                        *flags], env=e, capture_output=True, text=True, timeout=600)
    check(r.returncode == 0, f"read_table.py exited {r.returncode}: {r.stderr[-3000:]}")
    return json.loads(r.stdout)


def make_messages(rng, per_partition: int) -> list[dict]:
    """Messages per partition in send order: seq (global), ts over three UTC days (not in order),
    a tenant or none."""
    msgs = []
    for part in range(3):
        for _ in range(per_partition):
            msgs.append({"part": part, "ts": T0_US + rng.randrange(3 * DAY_US), "tenant": rng.choice(TENANTS)})
    rng.shuffle(msgs)
    for seq, m in enumerate(msgs):
        m["seq"] = seq
    return msgs


def produce(env: Env, address: str, msgs: list[dict], spread: float, sent: list[int]) -> None:
    """Runs of 50..200 consecutive messages of one partition, one iggy-produce each, spread over
    `spread` seconds; `sent[0]` counts what was sent."""
    runs: list[list[dict]] = []
    by_part: dict[int, list[dict]] = {0: [], 1: [], 2: []}
    for m in msgs:
        by_part[m["part"]].append(m)
    import random
    order = random.Random(len(msgs))  # the run sizes follow from the messages (already seeded)
    for part, ms in by_part.items():
        i = 0
        while i < len(ms):
            size = order.randrange(50, 200)
            runs.append(ms[i:i + size])
            i += size
    runs.sort(key=lambda r: r[0]["seq"])
    t0 = time.monotonic()
    for k, run in enumerate(runs):
        wait = t0 + spread * k / len(runs) - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        path = env.work / f"run-{k}.jsonl"
        path.write_text("".join(json.dumps({"seq": m["seq"], "ts": m["ts"], "tenant": m["tenant"]}) + "\n"
                                for m in run))
        out = env.produce(address, "app", "events", "--create", "3", "--partition", str(run[0]["part"]), str(path))
        check(f"sent {len(run)} messages" in out, f"iggy-produce of run {k}: {out}")
        path.unlink()
        sent[0] += len(run)


def check_table(env: Env, ice: dict, ns: str, msgs: list[dict], cfg: Path) -> list:
    """The table as PyIceberg reads it against the messages produced; returns its data files."""
    t = read_table(env, ice, ns, "events", "--files", "--select=part,offset,seq,ts,tenant")
    rows = t["select"]
    counts = Counter((r[0], r[1]) for r in rows)
    per_part = Counter(m["part"] for m in msgs)
    missing = [(p, o) for p, n in per_part.items() for o in range(n) if counts[(p, o)] == 0]
    twice = [(k, c) for k, c in counts.items() if c > 1]
    extra = [k for k in counts if k[0] not in per_part or k[1] >= per_part[k[0]]]
    check(not missing, f"{len(missing)} offsets missing from the table's current snapshot, e.g. {missing[:5]}")
    check(not twice, f"{len(twice)} offsets more than once in the table's current snapshot, e.g. {twice[:5]}")
    check(not extra, f"{len(extra)} rows of offsets never produced, e.g. {extra[:5]}")
    # The rows hold the messages' own values (seq is unique per message).
    by_seq = {m["seq"]: m for m in msgs}
    wrong = [r for r in rows if by_seq[r[2]]["ts"] != r[3] or by_seq[r[2]]["tenant"] != r[4]
             or by_seq[r[2]]["part"] != r[0]]
    check(not wrong, f"{len(wrong)} rows differ from the message they hold, e.g. {wrong[:3]}")
    want = Counter(((m["ts"] // DAY_US), m["tenant"]) for m in msgs)
    got_rows = Counter((r[3] // DAY_US, r[4]) for r in rows)
    check(got_rows == want, f"rows per (day, tenant) differ: got {sorted(got_rows.items(), key=str)}, "
                            f"want {sorted(want.items(), key=str)}")
    # The manifests' partition values and record counts (what a query engine prunes by).
    got_files: Counter = Counter()
    for path, n, values in t["files"]:
        check(len(values) == 2, f"data file {path}: partition {values}, want [day, tenant]")
        got_files[(values[0], values[1])] += n
    check(got_files == want, f"record counts per partition value in the manifests differ: got "
                             f"{sorted(got_files.items(), key=str)}, want {sorted(want.items(), key=str)}")
    # The summary's offsets (the next offset the table holds) and Iggy's committed offsets
    # (the last one consumed).
    offsets = json.loads(t["summary"]["iggy-s3-sink.offsets"])
    lag = {r["partition"]: r["committed"] for r in env.lag_json(cfg)}
    for p, n in per_part.items():
        table_next = offsets.get("app", {}).get("events", {}).get(str(p))
        check(table_next == n, f"partition {p}: the summary's next offset is {table_next}, {n} messages were sent")
        check(lag.get(p) == n - 1, f"partition {p}: Iggy's committed offset is {lag.get(p)}, the table's next is "
                                   f"{table_next}")
    check(all(r.get("table_committed") == r["committed"] for r in env.lag_json(cfg)),
          f"lag --json: the table's committed offsets are not Iggy's: {env.lag_json(cfg)}")
    log(f"table: {len(rows)} rows in {len(t['files'])} data files, {t['snapshots']} snapshots, "
        f"{len(want)} (day, tenant) partitions; summary offsets {offsets['app']['events']}")
    return t["files"]


def verify(env: Env, cfg: Path, *flags: str) -> tuple[int, str]:
    r = subprocess.run([env.bin("iggy-s3-sink"), "verify", "--config", str(cfg), *flags], env=env.daemon_env(),
                       capture_output=True, text=True, timeout=600)
    return r.returncode, r.stdout + r.stderr


def check_verify(env: Env, ice: dict, ns: str, cfg: Path, files: list) -> None:
    """`verify` on the table: ok; then with one data file registered a second time (PyIceberg's
    add_files), its offsets are twice in the table: exit 1, naming the file."""
    rc, out = verify(env, cfg)
    check(rc == 0 and "ok: every offset" in out, f"verify on the table exited {rc}:\n{out}")
    rc, out = verify(env, cfg, "--partition", "1")
    check(rc == 0 and "ok: every offset" in out, f"verify --partition 1 on the table exited {rc}:\n{out}")
    # a partition the table knows nothing of is named, not verified as empty
    rc, out = verify(env, cfg, "--partition", "7")
    check(rc == 1 and "partition 7 of app/events" in out, f"verify --partition 7 (3 partitions) exited {rc}:\n{out}")
    path = files[len(files) // 2][0]
    key = path.split("/", 3)[3]
    t = read_table(env, ice, ns, "events", f"--add-again={path}")
    check(t["summary"].get("added-data-files") == "1", f"PyIceberg's add_files: {t['summary']}")
    rc, out = verify(env, cfg)
    check(rc == 1, f"verify with a data file registered twice exited {rc}, want 1:\n{out}")
    check(f"are in two objects: {key} and {key}" in out, f"verify does not name the file registered twice:\n{out}")
    log(f"verify: ok on the table; with {key} registered twice: exit 1, naming it")


def kills_two_daemons(env: Env, rng) -> None:
    ice = iceberg_env()
    ns = f"e2e_{rng.randrange(1 << 30):x}_{os.getpid():x}"
    msgs = make_messages(rng, 2500)
    broker = env.start_broker()
    cfgs = [table_config(env, ice, broker.address, ns, f"sink{i}") for i in (0, 1)]
    delays = [rng.uniform(1.0, 4.0) for _ in range(10)]
    errors: list[BaseException] = []
    sent = [0]

    def producer() -> None:
        try:
            produce(env, broker.address, msgs, 0.8 * sum(delays), sent)
        except BaseException as e:  # noqa: BLE001 (reported by the main thread)
            errors.append(e)

    thread = threading.Thread(target=producer)
    thread.start()
    deadline = time.time() + 60
    while sent[0] == 0 and not errors and time.time() < deadline:  # the topic exists (its first run is in)
        time.sleep(0.05)
    daemons = [env.start_daemon(cfgs[i], tag=f"sink{i}") for i in (0, 1)]
    for i, delay in enumerate(delays):
        time.sleep(delay)
        victim = i % 2
        rc = daemons[victim].poll()
        check(rc is None, f"daemon {victim} exited on its own ({rc}) before kill {i + 1}")
        daemons[victim].kill()
        daemons[victim].wait()
        daemons[victim] = env.start_daemon(cfgs[victim], tag=f"sink{victim}")
        log(f"SIGKILL {i + 1}/10 of daemon {victim} after {delay:.2f}s; {sent[0]} of {len(msgs)} produced")
    thread.join(timeout=600)
    check(not thread.is_alive(), "producer did not finish")
    if errors:
        raise errors[0]
    env.wait_lag_zero(cfgs[0], 300)
    for i, d in enumerate(daemons):
        check(env.stop(d) == 0, f"daemon {i} did not exit 0 on SIGTERM")
    files = check_table(env, ice, ns, msgs, cfgs[0])
    check_verify(env, ice, ns, cfgs[0], files)
    logs = "".join((env.work / f"sink{i}.log").read_text(errors="replace") for i in (0, 1))
    log(f"the daemons' logs: {logs.count('committed as snapshot')} commits, "
        f"{logs.count('found in snapshot')} batches found in the table after a kill, "
        f"{logs.count('object exists already (412)')} objects adopted after a kill")


def bucket_mismatch(env: Env, rng) -> None:
    ice = iceberg_env()
    ns = f"e2e_{rng.randrange(1 << 30):x}_{os.getpid():x}"
    other = env.make_bucket(f"e2e-ice-other-{rng.randrange(1 << 30):x}-{os.getpid():x}")
    broker = env.start_broker()
    cfg = table_config(env, ice, broker.address, ns, "sink", bucket=other)
    d = env.start_daemon(cfg)
    rc = d.wait(timeout=120)
    text = (env.work / "sink.log").read_text(errors="replace")
    check(rc == 78, f"run exited {rc}, want 78 (a table outside s3.bucket):\n{text[-3000:]}")
    for want in (f"in bucket {ice['ICEBERG_BUCKET']}, but s3.bucket is {other}",
                 f"set s3.bucket: {ice['ICEBERG_BUCKET']}"):
        check(want in text, f"the error does not say {want!r}:\n{text[-3000:]}")
    check(not broker.membership_changes("s3-sink-ice"), "the daemon joined the group before checking the table")
    log("a table outside s3.bucket: exit 78, naming both buckets")


def many_partition_values(env: Env, rng) -> None:
    """hour(ts) over three days (72 partition values) with rotation.max_open_objects 4: objects
    closed early to make room are committed like the others (issue 36: every commit was refused
    as naming an object of unknown partition value, and the lag froze)."""
    ice = iceberg_env()
    ns = f"e2e_{rng.randrange(1 << 30):x}_{os.getpid():x}"
    msgs = make_messages(rng, 600)
    broker = env.start_broker()
    cfg = table_config(env, ice, broker.address, ns, "sink", partition_by=("hour(ts)",), max_open=4)
    sent = [0]
    produce(env, broker.address, msgs[:1], 0.0, sent)  # the topic exists
    d = env.start_daemon(cfg)
    produce(env, broker.address, msgs[1:], 10.0, sent)  # while the daemon commits
    env.wait_lag_zero(cfg, 120)
    check(env.stop(d) == 0, "the daemon did not exit 0 on SIGTERM")
    text = (env.work / "sink.log").read_text(errors="replace")
    check("was not named by this process's key namer" not in text, f"a batch was refused:\n{text[-3000:]}")
    t = read_table(env, ice, ns, "events", "--files", "--select=part,offset,seq,ts,tenant")
    counts = Counter((r[0], r[1]) for r in t["select"])
    want = Counter((m["part"], o) for p in range(3) for o, m in enumerate(x for x in msgs if x["part"] == p))
    check(counts == want, f"the table's rows are not every offset once: {len(counts)} distinct of {len(want)}, "
                          f"{sum(counts.values())} rows")
    hours = {m["ts"] // (DAY_US // 24) for m in msgs}
    log(f"hour(ts), max_open_objects 4: {len(t['select'])} rows in {len(t['files'])} data files over {len(hours)} "
        f"hours, each offset once")


def column_stats(env: Env, rng) -> None:
    """The manifests' column statistics (issue 36): every data file's value counts, null
    counts and lower and upper bounds (PyIceberg decodes Appendix D's single values) are those
    of its own rows (pyarrow reads the file), its column sizes are there for every column, and
    a scan with a row filter prunes data files by the bounds: `part == 1` keeps exactly the
    files of partition 1 (part is no partition field: only the bounds tell), `offset < N`
    (N the highest first offset of a file) the files whose bounds allow it, fewer than all. The table property write.parquet.compression-codec is the codec the
    data files are written with."""
    ice = iceberg_env()
    ns = f"e2e_{rng.randrange(1 << 30):x}_{os.getpid():x}"
    msgs = make_messages(rng, 500)
    broker = env.start_broker()
    cfg = table_config(env, ice, broker.address, ns, "sink")
    sent = [0]
    produce(env, broker.address, msgs[:1], 0.0, sent)  # the topic exists
    d = env.start_daemon(cfg)
    produce(env, broker.address, msgs[1:], 3.0, sent)
    env.wait_lag_zero(cfg, 120)
    check(env.stop(d) == 0, "the daemon did not exit 0 on SIGTERM")
    t = read_table(env, ice, ns, "events", "--stats")
    files = t["stats"]
    check(len(files) > 3, f"{len(files)} data files: too few to show pruning")
    names = [c["name"] for c in SCHEMA]
    for f in files:
        m, a, path = f["manifest"], f["actual"], f["path"]
        for c in names:
            want = a[c]
            check(m["value_counts"].get(c) == want["values"],
                  f"{path}: value_counts[{c}] = {m['value_counts'].get(c)}, the file has {want['values']}")
            check(m["null_value_counts"].get(c) == want["nulls"],
                  f"{path}: null_value_counts[{c}] = {m['null_value_counts'].get(c)}, the file has {want['nulls']}")
            check(m["column_sizes"].get(c, 0) > 0, f"{path}: no column_sizes for {c}: {m['column_sizes']}")
            if want["min"] is None:  # only nulls: no bounds
                check(c not in m["lower_bounds"] and c not in m["upper_bounds"], f"{path}: bounds for all-null {c}")
                continue
            check(m["lower_bounds"].get(c) == want["min"] and m["upper_bounds"].get(c) == want["max"],
                  f"{path}: bounds of {c} are [{m['lower_bounds'].get(c)}, {m['upper_bounds'].get(c)}], its rows "
                  f"span [{want['min']}, {want['max']}]")
    # The table property names the codec the data files are written with (the default
    # format.parquet.compression, snappy; the reference implementation's default is zstd).
    codec = t["properties"].get("write.parquet.compression-codec")
    used = {c for f in files for c in f["codecs"]}
    check(codec == "snappy" and used == {"SNAPPY"},
          f"write.parquet.compression-codec is {codec!r}, the data files' column chunks are {sorted(used)}")
    # Below the highest first offset of any file: at least that file is skipped by its bounds.
    cut = max(f["actual"]["offset"]["min"] for f in files)
    filters = ["part == 1", f"offset < {cut}"]
    planned = read_table(env, ice, ns, "events", *[f"--plan={f}" for f in filters])["planned"]
    of_part1 = sum(1 for f in files if f["actual"]["part"]["min"] == 1)
    check(0 < planned["part == 1"] == of_part1 < len(files),
          f"a scan for part == 1 plans {planned['part == 1']} data files; {of_part1} of {len(files)} hold partition 1")
    may_hold = sum(1 for f in files if f["actual"]["offset"]["min"] < cut)
    check(planned[f"offset < {cut}"] == may_hold < len(files),
          f"a scan for offset < {cut} plans {planned[f'offset < {cut}']} data files; {may_hold} of {len(files)} "
          f"can hold one")
    log(f"{len(files)} data files, statistics as their rows; planned per filter: {planned}")


def wait_log(env: Env, tag: str, text: str, seconds: float) -> float | None:
    """Seconds until `text` is in the daemon's log `tag`.log (polled every 50 ms), or None."""
    t0 = time.monotonic()
    path = env.work / f"{tag}.log"
    while time.monotonic() - t0 < seconds:
        if path.exists() and text in path.read_text(errors="replace"):
            return time.monotonic() - t0
        time.sleep(0.05)
    return None


def hand_over(env: Env, rng) -> None:
    """A second daemon joins the group (a cooperative rebalance takes one partition from the
    first, pending revocation until the first stores its offset, else the server's 30 s
    rebalance timeout): the first commits the revoked partition's durable objects to the table
    at once, not at iceberg.commit_interval (60 s here), and stores its offset (issue 36).
    Every offset once in the table after, with Iggy's committed offsets equal to the summary's.
    The time from the second daemon's start to its first partition is logged (measured; the
    bound only catches a hang)."""
    ice = iceberg_env()
    ns = f"e2e_{rng.randrange(1 << 30):x}_{os.getpid():x}"
    msgs = make_messages(rng, 400)
    half = len(msgs) // 2
    broker = env.start_broker()
    cfgs = [table_config(env, ice, broker.address, ns, f"sink{i}", commit_interval="60s") for i in (0, 1)]
    sent = [0]
    produce(env, broker.address, msgs[:half], 0.0, sent)
    a = env.start_daemon(cfgs[0], tag="sink0")
    check(wait_log(env, "sink0", "object uploaded", 60) is not None, "the first daemon uploaded nothing")
    time.sleep(3)  # every partition's objects durable (rotation.idle 1s), their commit deferred
    b = env.start_daemon(cfgs[1], tag="sink1")
    started = time.monotonic()
    produce(env, broker.address, msgs[half:], 0.0, sent)  # the partition handed over has messages to poll
    waited = wait_log(env, "sink1", "partition assigned", 120)
    took = time.monotonic() - started  # from its start (the log is polled every 50 ms)
    check(waited is not None, "the second daemon got no partition within 120 s")
    a_log = (env.work / "sink0.log").read_text(errors="replace")
    check("hand-over" in a_log, "the first daemon logged no hand-over")
    for d, name in ((a, "first"), (b, "second")):
        check(env.stop(d) == 0, f"the {name} daemon did not exit 0 on SIGTERM")
    # What is left (nothing, or what came after the stops) through one daemon, then the table.
    last = table_config(env, ice, broker.address, ns, "sink2")
    c = env.start_daemon(last, tag="sink2")
    env.wait_lag_zero(last, 120)
    check(env.stop(c) == 0, "the last daemon did not exit 0 on SIGTERM")
    t = read_table(env, ice, ns, "events", "--select=part,offset")
    counts = Counter((r[0], r[1]) for r in t["select"])
    want = Counter((m["part"], o) for p in range(3) for o, m in enumerate(x for x in msgs if x["part"] == p))
    check(counts == want, f"the table's rows are not every offset once: {len(counts)} distinct of {len(want)}, "
                          f"{sum(counts.values())} rows")
    offsets = json.loads(t["summary"]["iggy-s3-sink.offsets"])["app"]["events"]
    lag = {r["partition"]: r["committed"] for r in env.lag_json(last)}
    check(all(offsets.get(str(p)) == lag.get(p, -1) + 1 for p in range(3)),
          f"the summary's offsets {offsets} are not Iggy's committed offsets + 1 {lag}")
    log(f"hand-over: the second daemon's first partition {took:.1f} s after its start "
        f"(iceberg.commit_interval 60 s, the broker's rebalance timeout 30 s); every offset once in the table")


def private_catalog(env: Env) -> tuple[Path, dict]:
    """A catalog of this case's own (the `iceberg` fixture's is shared by the cases running
    beside it): tests/support/iceberg/catalog start in the work directory."""
    script = Path(__file__).resolve().parents[2] / "support" / "iceberg" / "catalog"
    d = env.work / "catalog"
    r = subprocess.run([str(script), "start", str(d), os.environ["RGW_DIR"]], capture_output=True, text=True,
                       timeout=180)
    check(r.returncode == 0, f"catalog start exited {r.returncode}: {r.stderr[-2000:]}")
    return script, read_env_file(d / "env")


def readyz_and_up(env: Env, admin: str) -> tuple[int, str, float | None]:
    status, body = env.http_get(admin, "/readyz")
    up = env.scrape(admin).get(("iggy_s3_sink_iceberg_catalog_up", ()))
    return status, body, up


def catalog_down(env: Env, rng) -> None:
    """The catalog stopped mid-run (issue 36): /readyz answers 503 naming it (`catalog:
    unreachable: HOST ...`), iggy_s3_sink_iceberg_catalog_up is 0, `lag` still prints Iggy's
    columns and says the catalog is unreachable; once it is started again the daemon commits
    what waited, without a restart: /readyz 200, the gauge 1, every record once in the table.
    Then a daemon started while the catalog is down waits for it, /readyz naming it, and is
    ready once it is back."""
    script, ice = private_catalog(env)
    cat_dir = env.work / "catalog"
    try:
        ns = f"e2e_{rng.randrange(1 << 30):x}_{os.getpid():x}"
        msgs = make_messages(rng, 400)
        broker = env.start_broker()
        cfg = table_config(env, ice, broker.address, ns, "sink")
        sent = [0]
        half = len(msgs) // 2
        produce(env, broker.address, msgs[:half], 0.0, sent)
        d = env.start_daemon(cfg)
        admin = env.admin_address()
        env.wait_lag_zero(cfg, 120)
        status, body, up = readyz_and_up(env, admin)
        check(status == 200 and up == 1, f"before the outage: /readyz {status} {body!r}, catalog_up {up}")

        r = subprocess.run([str(script), "pause", str(cat_dir)], capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, f"catalog pause exited {r.returncode}: {r.stderr}")
        produce(env, broker.address, msgs[half:], 0.0, sent)
        host = ice["ICEBERG_URI"].removeprefix("http://")
        deadline = time.time() + 90
        while time.time() < deadline:
            status, body, up = readyz_and_up(env, admin)
            if status == 503 and f"catalog: unreachable: {host}" in body and up == 0:
                break
            time.sleep(0.5)
        check(status == 503 and f"catalog: unreachable: {host}" in body and up == 0,
              f"with the catalog down: /readyz {status} {body!r}, catalog_up {up}")
        log(f"catalog down: /readyz 503: {body.strip().splitlines()[-1][:160]}")
        rc, out, err = env.lag(cfg)
        check(rc == 69, f"lag with the catalog down exited {rc}, want 69:\n{out}{err}")
        check("app" in out and "events" in out and "COMMITTED" in out, f"lag printed no Iggy columns:\n{out}{err}")
        check("catalog" in (out + err) and "unreachable" in (out + err),
              f"lag does not say the catalog is unreachable:\n{out}{err}")
        check(d.poll() is None, "the daemon exited while the catalog was down")

        r = subprocess.run([str(script), "resume", str(cat_dir), os.environ["RGW_DIR"]], capture_output=True,
                           text=True, timeout=180)
        check(r.returncode == 0, f"catalog resume exited {r.returncode}: {r.stderr}")
        env.wait_lag_zero(cfg, 180)
        status, body, up = readyz_and_up(env, admin)
        check(status == 200 and up == 1, f"after the outage: /readyz {status} {body!r}, catalog_up {up}")
        check(env.stop(d) == 0, "the daemon did not exit 0 on SIGTERM")
        t = read_table(env, ice, ns, "events", "--select=part,offset")
        counts = Counter((r[0], r[1]) for r in t["select"])
        want = Counter((m["part"], o) for p in range(3) for o, m in enumerate(x for x in msgs if x["part"] == p))
        check(counts == want, f"the table's rows are not every offset once: {len(counts)} distinct of {len(want)}, "
                              f"{sum(counts.values())} rows")
        text = (env.work / "sink.log").read_text(errors="replace")
        check("the catalog answers again" in text, "no 'the catalog answers again' line in the log")
        log(f"catalog back: every one of {len(want)} records once in the table, /readyz 200, catalog_up 1")

        # Down at start: the tables wait for it (no exit), /readyz names it meanwhile.
        r = subprocess.run([str(script), "pause", str(cat_dir)], capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, f"catalog pause exited {r.returncode}: {r.stderr}")
        d = env.start_daemon(cfg, tag="sink-b")
        admin = env.admin_address("sink-b")
        deadline = time.time() + 90
        while time.time() < deadline:
            status, body, up = readyz_and_up(env, admin)
            if f"catalog: unreachable: {host}" in body and up == 0:
                break
            time.sleep(0.5)
        check(status == 503 and f"catalog: unreachable: {host}" in body and up == 0,
              f"started with the catalog down: /readyz {status} {body!r}, catalog_up {up}")
        r = subprocess.run([str(script), "resume", str(cat_dir), os.environ["RGW_DIR"]], capture_output=True,
                           text=True, timeout=180)
        check(r.returncode == 0, f"catalog resume exited {r.returncode}: {r.stderr}")
        env.wait_lag_zero(cfg, 180)
        deadline = time.time() + 60
        while time.time() < deadline and readyz_and_up(env, admin)[0] != 200:
            time.sleep(0.5)
        status, body, up = readyz_and_up(env, admin)
        check(status == 200 and up == 1, f"the catalog back after a start without it: /readyz {status} {body!r}")
        check(env.stop(d) == 0, "the daemon started without the catalog did not exit 0 on SIGTERM")
        log("started with the catalog down: /readyz 503 naming it, ready once it came back")
    finally:
        subprocess.run([str(script), "stop", str(cat_dir)], capture_output=True, timeout=60)


def produce_one_partition(env: Env, address: str, n: int, seq0: int, *flags: str) -> None:
    """`n` messages (seq from `seq0`) into partition 0 of app/events, in one iggy-produce."""
    path = env.work / f"one-{seq0}.jsonl"
    path.write_text("".join(json.dumps({"seq": seq0 + i, "ts": T0_US + i, "tenant": "acme"}) + "\n"
                            for i in range(n)))
    out = env.produce(address, "app", "events", *flags, "--partition", "0", str(path))
    check(f"sent {n} messages" in out, f"iggy-produce: {out}")


def offsets_and_seqs(env: Env, ice: dict, ns: str, table: str) -> list[tuple[int, int]]:
    t = read_table(env, ice, ns, table, "--select=offset,seq")
    return sorted((r[0], r[1]) for r in (t["select"] or []))


def topic_recreated(env: Env, rng) -> None:
    """Issue 36 (a reviewer's silent loss): the table holds app/events up to offset 299; the
    daemon stopped, the topic deleted and created again with 500 messages (offsets 0..499, Iggy's
    stored offsets gone with the topic). Started again, single consumer and then in a group, it
    must not resume after the table's old offsets (which would skip the new topic's 0..299): the
    summary's iggy-s3-sink.topics records the old topic's creation time, so the partition is
    stopped as an offset reset (/readyz 503 naming the table and iceberg.table, the
    offset_reset_partitions gauge 1, one error line) and nothing of the new topic goes into the
    table. With a new iceberg.table, the new topic's 500 messages are there once."""
    from fault_cases import wait_metric, wait_readyz
    ice = iceberg_env()
    ns = f"e2e_{rng.randrange(1 << 30):x}_{os.getpid():x}"
    broker = env.start_broker()
    produce_one_partition(env, broker.address, 300, 0, "--create", "1")
    cfg = table_config(env, ice, broker.address, ns, "sink", consumer="sink", partition_by=())
    d = env.start_daemon(cfg)
    env.wait_lag_zero(cfg, 120)
    check(env.stop(d) == 0, "the daemon did not exit 0 on SIGTERM")
    before = offsets_and_seqs(env, ice, ns, "events")
    check(before == [(o, o) for o in range(300)], f"the table holds {len(before)} rows, not offsets 0..299 once")
    summary = read_table(env, ice, ns, "events")["summary"]
    check("iggy-s3-sink.topics" in summary and '"events"' in summary["iggy-s3-sink.topics"],
          f"the summary records no creation time of app/events: {summary}")
    log(f"table {ns}.events: offsets 0..299; {summary['iggy-s3-sink.topics']}")

    time.sleep(1.1)  # a creation time of its own (µs; the broker's clock)
    produce_one_partition(env, broker.address, 500, 1000, "--delete-topic", "--create", "1")
    want_readyz = ["iggy: offset reset: app/events partition 0", f"table {ns}.events holds offsets of an earlier topic",
                   "set iceberg.table to a new table"]
    for mode, tag, c in (("single consumer", "again", cfg),
                         ("group", "group", table_config(env, ice, broker.address, ns, "group", partition_by=()))):
        d = env.start_daemon(c, tag=f"sink-{tag}")
        admin = env.admin_address(f"sink-{tag}")
        body = wait_readyz(env, admin, 503, want_readyz, 90)
        wait_metric(env, admin, "iggy_s3_sink_offset_reset_partitions", 1, 30, stream="app", topic="events")
        time.sleep(3)  # nothing of the new topic is read meanwhile
        check(d.poll() is None, f"{mode}: the daemon exited ({d.returncode})")
        check(env.stop(d) == 0, f"{mode}: the daemon did not exit 0 on SIGTERM")
        text = (env.work / f"sink-{tag}.log").read_text(errors="replace")
        errors = [ln for ln in text.splitlines() if "offset reset: table" in ln]
        check(len(errors) == 1 and "ERROR" in errors[0].upper(), f"{mode}: offset reset lines {errors}")
        check("resuming after it" not in text, f"{mode}: resumed after the old topic's offsets:\n{text[-3000:]}")
        after = offsets_and_seqs(env, ice, ns, "events")
        check(after == before, f"{mode}: the table changed: {len(after)} rows (new topic rows: "
                               f"{sum(1 for _, q in after if q >= 1000)})")
        log(f"{mode}: /readyz 503 {body.strip().splitlines()[-1][:200]!r}; the table unchanged")

    # The remedy the error names: a new table; the new topic from its first message, once.
    cfg2 = table_config(env, ice, broker.address, ns, "sink-new", consumer="sink", partition_by=(), table="events_v2")
    d = env.start_daemon(cfg2, tag="sink-new")
    env.wait_lag_zero(cfg2, 120)
    wait_readyz(env, env.admin_address("sink-new"), 200, ["ready"], 30)
    check(env.stop(d) == 0, "the daemon with the new table did not exit 0 on SIGTERM")
    new = offsets_and_seqs(env, ice, ns, "events_v2")
    check(new == [(o, 1000 + o) for o in range(500)], f"the new table holds {len(new)} rows, not the new topic's 500")
    log("a new iceberg.table: the new topic's 500 messages once")


def named_wrongly(env: Env, rng) -> None:
    """Issue 36: a table or catalog path the configuration names wrongly is a configuration
    problem: `run` exits 78 (no restart loop under systemd) naming the key, before it joins the
    group: iceberg.create false with the table missing; a wrong iceberg.catalog.prefix. And a
    table dropped while the daemon runs with iceberg.create true is created again (the warning
    says so, not "set iceberg.create: true"), holding the messages committed after."""
    ice = iceberg_env()
    ns = f"e2e_{rng.randrange(1 << 30):x}_{os.getpid():x}"
    broker = env.start_broker()
    produce_one_partition(env, broker.address, 50, 0, "--create", "1")
    for tag, extra, extra_catalog, wants in (
            ("nocreate", {"create": False}, None, ["iceberg.create is false", "set iceberg.create: true",
                                                   f"table {ns}.events is not in the catalog"]),
            ("prefix", None, {"prefix": "no-such-prefix"}, ["iceberg.catalog.prefix (now 'no-such-prefix')"])):
        cfg = table_config(env, ice, broker.address, ns, tag, partition_by=(), extra=extra, extra_catalog=extra_catalog)
        d = env.start_daemon(cfg, tag=tag)
        rc = d.wait(timeout=120)
        text = (env.work / f"{tag}.log").read_text(errors="replace")
        check(rc == 78, f"{tag}: run exited {rc}, want 78:\n{text[-3000:]}")
        for want in wants:
            check(want in text, f"{tag}: the error does not say {want!r}:\n{text[-3000:]}")
        check(not broker.membership_changes("s3-sink-ice"), f"{tag}: the daemon joined the group")
        log(f"{tag}: exit 78: {[ln for ln in text.splitlines() if 'iceberg' in ln][-1][:240]}")

    cfg = table_config(env, ice, broker.address, ns, "sink", consumer="sink", partition_by=())
    d = env.start_daemon(cfg)
    env.wait_lag_zero(cfg, 120)
    rgw = env.rgw
    drop = ("import sys\nfrom pyiceberg.catalog.rest import RestCatalog\n"
            "RestCatalog('c', uri=sys.argv[1]).drop_table((sys.argv[2], 'events'))\n")
    r = subprocess.run([os.environ["ICEBERG_PYTHON"], "-c", drop, ice["ICEBERG_URI"], ns], capture_output=True,
                       text=True, timeout=120, env=dict(os.environ, AWS_REGION=rgw.get("RGW_REGION", "us-east-1")))
    check(r.returncode == 0, f"dropping the table: {r.stderr[-2000:]}")
    produce_one_partition(env, broker.address, 70, 50)
    env.wait_lag_zero(cfg, 120)
    check(env.stop(d) == 0, "the daemon did not exit 0 on SIGTERM")
    text = (env.work / "sink.log").read_text(errors="replace")
    check("it is created again (iceberg.create: true)" in text, f"no 'created again' warning:\n{text[-3000:]}")
    check("set iceberg.create: true" not in text, "a warning says to set iceberg.create: true, which is set")
    rows = offsets_and_seqs(env, ice, ns, "events")
    check(rows == [(o, o) for o in range(50, 120)], f"the table created again holds {rows[:3]}... ({len(rows)} rows)")
    log("the table dropped mid-run: created again, holding the 70 messages committed after")


CASES = {"catalog_down": catalog_down, "hand_over": hand_over, "kills_two_daemons": kills_two_daemons, "bucket_mismatch": bucket_mismatch,
         "many_partition_values": many_partition_values, "column_stats": column_stats,
         "topic_recreated": topic_recreated, "named_wrongly": named_wrongly}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print(f"usage: iceberg_cases.py {{{'|'.join(CASES)}}}", file=sys.stderr)
        sys.exit(2)
    fn = CASES[sys.argv[1]]
    fn.__name__ = sys.argv[1]
    run_case(fn)
