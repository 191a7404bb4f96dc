#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end cases of the typed formats: JSON web-request messages over 3 partitions, a
declared schema of 8 columns, Parquet or CSV objects on RGW, read back by DuckDB
(tests/readers/duck.mjs) and compared with what this script computed from the messages.
Usage: typed_cases.py CASE   (ISS_BINARY_DIR and RGW_DIR from CTest)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from harness import Env, Failure, Landed, check, log, partition_counts, run_case, verify_exactly_once

READERS = Path(__file__).resolve().parents[2] / "readers"

SCHEMA = [
    {"name": "offset", "type": "int64", "from": "offset", "nullable": False},
    {"name": "partition", "type": "int32", "from": "partition", "nullable": False},
    {"name": "ts", "type": "timestamp_ms", "from": "payload:ts"},
    {"name": "method", "type": "string", "from": "payload:method"},
    {"name": "country", "type": "string", "from": "payload:user.country"},
    {"name": "status", "type": "int32", "from": "payload:status", "nullable": False},
    {"name": "bytes", "type": "int64", "from": "payload:bytes"},
    {"name": "latency_ms", "type": "double", "from": "payload:latency_ms"},
]


def duck(*args: str) -> str:
    if not (READERS / "node_modules" / "@duckdb" / "node-api").is_dir():
        raise Failure("DuckDB reader missing: run scripts/install-deps (tests/readers/node_modules)")
    r = subprocess.run(["node", str(READERS / "duck.mjs"), *args], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise Failure(f"duck.mjs {args[0]} failed: {r.stderr[-2000:]}")
    return r.stdout


def web_requests(env: Env, rng, n: int) -> tuple[Path, dict]:
    """n JSON web-request lines (seeded) and the aggregates a reader must find."""
    methods = ["GET", "GET", "GET", "POST", "PUT", "DELETE"]
    countries = ["DE", "FR", "US", "JP", "BR", "IN", "ZA", "Ünïcode-✓"]
    statuses = [200, 200, 200, 201, 204, 301, 304, 400, 404, 500, 503]
    agg = {"status": [], "bytes": [], "latency_ms": []}
    path = env.work / "requests.jsonl"
    t0 = 1_796_000_000_000
    with path.open("w") as f:
        for i in range(n):
            status = rng.choice(statuses)
            size = rng.randrange(0, 5_000_000)
            latency = rng.randrange(0, 40_000) / 4  # quarter milliseconds: sums are exact in double
            msg = {"ts": t0 + i * 7, "method": rng.choice(methods), "path": f"/api/v1/items/{rng.randrange(10_000)}",
                   "status": status, "bytes": size, "latency_ms": latency,
                   "user": {"id": rng.randrange(1 << 40), "country": rng.choice(countries)}}
            agg["status"].append(status)
            agg["bytes"].append(size)
            agg["latency_ms"].append(latency)
            f.write(json.dumps(msg, ensure_ascii=False) + "\n")
    want = {}
    for k, v in agg.items():
        want[f"sum_{k}"], want[f"min_{k}"], want[f"max_{k}"] = sum(v), min(v), max(v)
    return path, want


def produce_file(env: Env, address: str, path: Path, n: int) -> dict[int, int]:
    out = env.produce(address, "app", "events", "--create", "3", "--balanced", "--batch", "1000", str(path))
    counts = partition_counts(out)
    check(sum(counts.values()) == n, f"iggy-produce reported {counts} for {n} messages:\n{out}")
    return counts


def scan(kind: str, root: Path) -> str:
    glob = str(root / "**" / f"*.{kind}")
    if kind == "parquet":
        return f"read_parquet('{glob}', filename = true)"
    return f"read_csv('{glob}', header = true, filename = true, allow_quoted_nulls = false)"


def landed_from(kind: str, root: Path) -> Landed:
    rows = json.loads(duck("query", f'SELECT filename, "partition"::INTEGER AS p, "offset"::BIGINT AS o '
                                    f'FROM {scan(kind, root)} ORDER BY filename, o'))
    count: dict[tuple, int] = {}
    per: dict[str, list[int]] = {}
    for r in rows:
        k = ("app", "events", int(r["p"]), int(r["o"]))
        count[k] = count.get(k, 0) + 1
        per.setdefault(str(Path(r["filename"]).relative_to(root)), []).append(int(r["o"]))
    return Landed(count, len(per), len(rows), sorted(per.items()))


def check_aggregates(kind: str, root: Path, n: int, want: dict) -> None:
    cols = ", ".join(f"sum({c})::VARCHAR AS sum_{c}, min({c})::VARCHAR AS min_{c}, max({c})::VARCHAR AS max_{c}"
                     for c in ("status", "bytes", "latency_ms"))
    [got] = json.loads(duck("query", f"SELECT count(*)::VARCHAR AS n, {cols} FROM {scan(kind, root)}"))
    check(int(got["n"]) == n, f"{kind}: DuckDB counts {got['n']} rows, {n} messages were produced")
    for k, v in want.items():
        g = float(got[k]) if "latency" in k else int(got[k])
        check(g == v, f"{kind}: {k} is {got[k]} in DuckDB, {v} computed from the messages")
    log(f"{kind}: {n} rows; {', '.join(f'{k}={got[k]}' for k in sorted(want))}")


def typed_queries(env: Env, rng, kind: str) -> None:
    """100 000 messages, 3 partitions, 8 declared columns -> every object read by DuckDB, the
    row count and SUM/MIN/MAX of three numeric columns as computed here; for Parquet a filter
    that the footer statistics answer without reading a row."""
    n = 100_000
    broker = env.start_broker()
    bucket = env.make_bucket(f"e2e-{kind}-{rng.randrange(1 << 30):x}")
    path, want = web_requests(env, rng, n)
    counts = produce_file(env, broker.address, path, n)
    fmt: dict = {"type": kind, "schema": SCHEMA}
    if kind == "parquet":
        fmt["parquet"] = {"compression": "snappy", "row_group_size": "256KiB"}
    cfg = env.config(bucket, broker.address, fmt=fmt, rotation={"max_records": 30_000, "idle": "2s"})
    d = env.start_daemon(cfg)
    env.wait_lag_zero(cfg, 400)
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    keys = [k for k in env.list_keys(bucket) if ".iggy-s3-sink" not in k]
    check(keys and all(k.endswith(f".{kind}") for k in keys), f"object keys should end in .{kind}: {keys[:3]}")
    root = env.download(bucket)
    landed = landed_from(kind, root)
    check(landed.objects == len(keys), f"DuckDB read {landed.objects} objects, the bucket holds {len(keys)}")
    verify_exactly_once(landed, counts, "app", "events")
    check_aggregates(kind, root, n, want)
    if kind == "parquet":
        groups = json.loads(duck("query", f"SELECT count(DISTINCT (file_name, row_group_id))::VARCHAR AS g "
                                          f"FROM parquet_metadata('{root}/**/*.parquet')"))[0]["g"]
        check(int(groups) > len(keys), f"{groups} row groups in {len(keys)} objects: want several per object")
        # Statistics: on each object, a filter beyond every row group's max is answered from the
        # footer without reading a row (DuckDB's profiler: 0 rows scanned), the same scan
        # without that bound reads the rows; the row groups' offset bounds let a filter on the
        # first offsets skip all but the first row group.
        for key in keys[:3]:
            f = root / key
            none = json.loads(duck("scanned", f"SELECT count(*)::VARCHAR AS c FROM read_parquet('{f}') WHERE status > 999"))
            some = json.loads(duck("scanned", f"SELECT count(*)::VARCHAR AS c FROM read_parquet('{f}') WHERE status >= 500"))
            check(none["rows_scanned"] == 0 and none["result"][0]["c"] == "0",
                  f"{key}: status > 999 should be answered from the statistics alone: {none}")
            check(some["rows_scanned"] > 0 and int(some["result"][0]["c"]) > 0, f"{key}: status >= 500 read nothing: {some}")
            bounds = json.loads(duck("query", f"SELECT stats_min_value::BIGINT AS lo, stats_max_value::BIGINT AS hi FROM "
                                              f"parquet_metadata('{f}') WHERE path_in_schema = 'offset' ORDER BY row_group_id"))
            check(all(bounds[i]["hi"] < bounds[i + 1]["lo"] for i in range(len(bounds) - 1)),
                  f"{key}: row groups' offset bounds are not ascending and disjoint: {bounds}")
            log(f"{key}: {len(bounds)} row groups; status > 999 scanned 0 rows, status >= 500 scanned {some['rows_scanned']}")
        md = env.aws("s3api", "head-object", "--bucket", bucket, "--key", keys[0], "--output", "json").stdout
        check(json.loads(md).get("ContentType") == "application/vnd.apache.parquet", f"Content-Type: {md}")


def parquet_crashes(env: Env, rng) -> None:
    """Parquet objects through 5 SIGKILLs at seeded moments: each offset exactly once."""
    n = 60_000
    broker = env.start_broker()
    bucket = env.make_bucket(f"e2e-parquet-crash-{rng.randrange(1 << 30):x}")
    path, want = web_requests(env, rng, n)
    counts = produce_file(env, broker.address, path, n)
    cfg = env.config(bucket, broker.address, consumer="s3-sink-parquet-crash",
                     fmt={"type": "parquet", "schema": SCHEMA, "parquet": {"compression": "zstd", "row_group_size": "128KiB"}},
                     rotation={"max_records": 4000, "idle": "1s"})
    for i in range(5):
        d = env.start_daemon(cfg, tag="sink")
        delay = rng.uniform(0.5, 4.0)
        time.sleep(delay)
        rc = d.poll()
        d.kill()
        d.wait()
        log(f"kill {i + 1}/5 after {delay:.2f}s (exited on its own: {rc})")
    d = env.start_daemon(cfg, tag="sink")
    env.wait_lag_zero(cfg, 400)
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    root = env.download(bucket)
    landed = landed_from("parquet", root)
    verify_exactly_once(landed, counts, "app", "events")
    check_aggregates("parquet", root, n, want)
    log(f"{landed.records} rows in {landed.objects} Parquet objects after 5 kills, 0 duplicates")


CASES = {
    "parquet_queries": lambda e, r: typed_queries(e, r, "parquet"),
    "csv_queries": lambda e, r: typed_queries(e, r, "csv"),
    "parquet_crashes": parquet_crashes,
}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print(f"usage: typed_cases.py {{{'|'.join(CASES)}}}", file=sys.stderr)
        sys.exit(2)
    fn = CASES[sys.argv[1]]
    fn.__name__ = sys.argv[1]
    run_case(fn)
