#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end cases of the lake layout: object keys rendered from each message's tenant header
and its own time (a payload field, in Europe/Berlin), checked by a computation of this script
(Python's zoneinfo, not the daemon's code) and by DuckDB reading the bucket with
hive_partitioning. Usage: lake_cases.py CASE   (ISS_BINARY_DIR and RGW_DIR from CTest).

- dst_crashes: messages over 3 partitions with a `tenant` header (3 values, and some without
  one) and a payload field `ts` around both Berlin DST switches of 2026 (the spring gap and the
  repeated autumn hour), out of order by up to an hour, produced while the daemon is SIGKILLed
  10 times at seeded moments; every offset lands exactly once, in the object whose key its own
  tenant and Berlin local time give; DuckDB's counts per dt/hour/tenant match.
- hive_parquet: Parquet objects under `tenant=.../dt=...` read by DuckDB with
  hive_partitioning; its counts per (tenant, dt) match the messages produced.
"""
from __future__ import annotations

import json
import os
import re
import threading
import time
from collections import Counter, defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

from harness import Env, check, log, run_case
from typed_cases import duck

BERLIN = ZoneInfo("Europe/Berlin")
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
MISSING = "__HIVE_DEFAULT_PARTITION__"
# Byte-wise percent encoding of everything outside [A-Za-z0-9._-] (docs/formats-and-layout.md "Object keys"): a
# value never adds a path level.
UNRESERVED = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


def key_text(value: str | None) -> str:
    if not value:
        return MISSING
    raw = value.encode()
    if set(raw) == {ord(".")}:
        return "".join(f"%{b:02X}" for b in raw)
    return "".join(chr(b) if b in UNRESERVED else f"%{b:02X}" for b in raw)


def utc_ms(text: str) -> int:
    """Epoch milliseconds of an ISO instant such as '2026-03-29T01:00:00Z'."""
    d = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return (d - EPOCH) // timedelta(milliseconds=1)


def berlin(ms: int) -> datetime:
    return (EPOCH + timedelta(milliseconds=ms)).astimezone(BERLIN)


def bucket_of(ms: int) -> tuple[str, str]:
    """(dt, hour) of the instant in Berlin local time, the zone's real offsets."""
    t = berlin(ms)
    return f"{t.year:04}-{t.month:02}-{t.day:02}", f"{t.hour:02}"


def rfc3339(ms: int, offset_minutes: int) -> str:
    """The instant as RFC 3339 text with the given UTC offset ('Z' for 0), milliseconds."""
    t = (EPOCH + timedelta(milliseconds=ms)).astimezone(timezone(timedelta(minutes=offset_minutes)))
    s = t.isoformat(timespec="milliseconds")
    return s.replace("+00:00", "Z")


# 2026's switches in Europe/Berlin: 29 March 01:00Z (02:00 CET -> 03:00 CEST, no local 02 hour)
# and 25 October 01:00Z (03:00 CEST -> 02:00 CET, the local 02 hour twice: 00:00Z-01:00Z and
# 01:00Z-02:00Z). Each window spans three local days.
WINDOWS = [
    (utc_ms("2026-03-28T20:00:00Z"), utc_ms("2026-03-29T23:00:00Z"), utc_ms("2026-03-29T01:00:00Z")),
    (utc_ms("2026-10-24T19:00:00Z"), utc_ms("2026-10-26T00:00:00Z"), utc_ms("2026-10-25T01:00:00Z")),
]
# Instants at the edges of the switched hours, sent as they are.
EDGES = [utc_ms(s) for s in (
    "2026-03-29T00:00:00Z", "2026-03-29T00:59:59.999Z", "2026-03-29T01:00:00Z",  # 01:00 CET, 01:59:59.999 CET, 03:00 CEST
    "2026-10-24T23:59:59.999Z", "2026-10-25T00:00:00Z", "2026-10-25T00:59:59.999Z",  # 01:59 CEST, 02:00 CEST, 02:59 CEST
    "2026-10-25T01:00:00Z", "2026-10-25T01:59:59.999Z", "2026-10-25T02:00:00Z",  # 02:00 CET, 02:59 CET, 03:00 CET
)]
HOUR_MS = 3_600_000


def make_messages(rng, n: int, tenants: list[str]) -> list[dict]:
    """n messages, seq 0..n-1, in send order. Each has `ts` (epoch ms as a number, or for one in
    ten an RFC 3339 string with some UTC offset), a tenant (None: no header) and a partition.
    Base times ascend through the two windows (denser within 3 h of each switch); each message's
    ts is its base time minus up to an hour, so times go back by up to an hour within a partition."""
    bases = []
    for lo, hi, switch in WINDOWS:
        for _ in range(n // 4):
            bases.append(rng.randrange(lo, hi))
        for _ in range(n // 4):
            bases.append(rng.randrange(max(lo, switch - 3 * HOUR_MS), min(hi, switch + 3 * HOUR_MS)))
    bases = sorted(bases)[: n - len(EDGES)]
    out = [{"ms": b - rng.randrange(0, HOUR_MS)} for b in bases]
    for e in EDGES:  # at their own place in the order, not moved
        i = next((k for k, b in enumerate(bases) if b >= e), len(bases))
        out.insert(i, {"ms": e})
        bases.insert(i, e)
    # Chunks of consecutive messages share a tenant and a partition (iggy-produce sets one
    # header set per run); 1 chunk in 20 has no tenant header.
    i = 0
    while i < len(out):
        size = rng.randrange(30, 150)
        tenant = None if rng.random() < 0.05 else rng.choice(tenants)
        part = rng.randrange(3)
        for m in out[i:i + size]:
            m["tenant"], m["partition"] = tenant, part
        i += size
    for seq, m in enumerate(out):
        m["seq"] = seq
        m["ts"] = rfc3339(m["ms"], rng.choice([0, 60, 120, -180, 330])) if rng.random() < 0.1 else m["ms"]
    return out


def chunks(msgs: list[dict]) -> list[list[dict]]:
    out: list[list[dict]] = []
    for m in msgs:
        if out and out[-1][0]["tenant"] == m["tenant"] and out[-1][0]["partition"] == m["partition"]:
            out[-1].append(m)
        else:
            out.append([m])
    return out


def produce_chunks(env: Env, address: str, msgs: list[dict], tag: str, spread: float = 0.0,
                   progress: list[int] | None = None) -> None:
    """Sends the chunks in order, chunk k not before k/len * `spread` seconds from the start;
    `progress[0]` counts the messages sent."""
    all_chunks = chunks(msgs)
    t0 = time.monotonic()
    for k, c in enumerate(all_chunks):
        wait = t0 + spread * k / len(all_chunks) - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        path = env.work / f"{tag}-{k}.jsonl"
        path.write_text("".join(json.dumps({"seq": m["seq"], "ts": m["ts"], "v": m["seq"] * 7 % 1000},
                                           ensure_ascii=False) + "\n" for m in c))
        args = ["--create", "3", "--partition", str(c[0]["partition"])]
        if c[0]["tenant"] is not None:
            args += ["--header", f"tenant={c[0]['tenant']}"]
        out = env.produce(address, "app", "events", *args, str(path))
        check(f"sent {len(c)} messages" in out, f"iggy-produce of chunk {k}: {out}")
        path.unlink()
        if progress is not None:
            progress[0] += len(c)


LAKE_KEY = "{prefix}/dt={date}/hour={hour}/tenant={header:tenant}/{partition}-{start_offset:020}.{ext}"
KEY_RE = re.compile(r"^iggy/dt=(\d{4}-\d\d-\d\d)/hour=(\d\d)/tenant=([^/]+)/(\d+)-(\d{20})\.jsonl$")


def check_lake(env: Env, bucket: str, msgs: list[dict], cfg: Path) -> Path:
    """The independent check of what landed; returns the download directory."""
    by_seq = {m["seq"]: m for m in msgs}
    keys = [k for k in env.list_keys(bucket) if "/.iggy-s3-sink/" not in k]
    root = env.download(bucket, "iggy/")
    seen_seq: Counter = Counter()
    seen_off: Counter = Counter()
    passes: dict[tuple, set] = defaultdict(set)  # (dt, hour, tenant) -> UTC hours of its objects
    problems: list[str] = []
    for key in keys:
        m = KEY_RE.match(key)
        if not m:
            problems.append(f"{key}: not of the form {LAKE_KEY}")
            continue
        dt, hour, tenant, part, start = m.group(1), m.group(2), m.group(3), int(m.group(4)), int(m.group(5))
        recs = [json.loads(line) for line in (root / key[len("iggy/"):]).read_text().splitlines() if line]
        if not recs:
            problems.append(f"{key}: empty object")
            continue
        offs = [r["offset"] for r in recs]
        if offs != sorted(set(offs)):
            problems.append(f"{key}: offsets not ascending: {offs[:10]}")
        if offs[0] != start:
            problems.append(f"{key}: key's start offset {start}, first record's offset {offs[0]}")
        utc_hours = set()
        for r in recs:
            src = by_seq.get(r["payload"]["seq"]) if isinstance(r.get("payload"), dict) else None
            if src is None:
                problems.append(f"{key}: record {r.get('offset')} is not a produced message")
                continue
            seen_seq[src["seq"]] += 1
            seen_off[(r["partition_id"], r["offset"])] += 1
            want = (*bucket_of(src["ms"]), key_text(src["tenant"]), src["partition"])
            if (dt, hour, tenant, part) != want or r["partition_id"] != part:
                problems.append(f"{key}: seq {src['seq']} (ts {src['ts']}, tenant {src['tenant']!r}, partition "
                                f"{src['partition']}) belongs under dt={want[0]}/hour={want[1]}/tenant={want[2]}/{want[3]}-")
            if r["payload"]["ts"] != src["ts"]:
                problems.append(f"{key}: seq {src['seq']} ts {r['payload']['ts']!r}, sent {src['ts']!r}")
            utc_hours.add(src["ms"] // HOUR_MS)
        # One object holds one pass of a local hour: the two 02 hours of 25 October are apart.
        if len(utc_hours) != 1:
            problems.append(f"{key}: records of {len(utc_hours)} different real hours in one object")
        passes[(dt, hour, tenant)] |= utc_hours
    check(not problems, f"{len(problems)} problems, first: " + "\n  ".join(problems[:40]))
    missing = [s for s in by_seq if seen_seq[s] == 0]
    dups = [(s, c) for s, c in seen_seq.items() if c > 1]
    check(not missing, f"{len(missing)} messages missing from the bucket, e.g. seq {missing[:10]}")
    check(not dups, f"{len(dups)} messages in the bucket more than once, e.g. (seq, times) {dups[:10]}")
    sent = Counter(m["partition"] for m in msgs)
    for p, n in sent.items():
        gaps = [o for o in range(n) if seen_off[(p, o)] != 1]
        check(not gaps, f"partition {p}: offsets not exactly once: {gaps[:10]}")
    check(sum(seen_off.values()) == len(msgs), f"{sum(seen_off.values())} records for {len(msgs)} messages")
    # The labels of the switched hours, as the issue has them.
    check(not any(k[0] == "2026-03-29" and k[1] == "02" for k in passes),
          "an object under dt=2026-03-29/hour=02: that local hour does not exist in Europe/Berlin")
    autumn = set().union(*[v for k, v in passes.items() if k[:2] == ("2026-10-25", "02")])
    first, second = utc_ms("2026-10-25T00:00:00Z") // HOUR_MS, utc_ms("2026-10-25T01:00:00Z") // HOUR_MS
    check(autumn == {first, second}, f"dt=2026-10-25/hour=02 should hold both passes (CEST and CET), holds UTC hours {autumn}")
    rows = env.lag_json(cfg)
    for r in rows:
        check(r["committed"] == r["head"] and r["lag"] == 0, f"committed offset is not the head: {r}")
        check(r["head"] == sent[r["partition"]] - 1, f"head {r['head']} of partition {r['partition']}, sent {sent[r['partition']]}")
    log(f"{len(msgs)} messages in {len(keys)} objects, each once and under its own dt/hour/tenant; "
        f"committed = head on {len(rows)} partitions; hour=02 of 2026-10-25 in "
        f"{sum(1 for k in keys if '/dt=2026-10-25/hour=02/' in k)} objects over both passes")
    return root


def duck_counts(sql: str) -> Counter:
    rows = json.loads(duck("query", sql))
    return Counter({tuple(str(v) if v is not None else None for k, v in r.items() if k != "n"): int(r["n"])
                    for r in rows})


def check_duck_hive(root: Path, msgs: list[dict]) -> None:
    """DuckDB over the downloaded JSON Lines with hive_partitioning: rows per (dt, hour, tenant)."""
    glob = str(root / "dt=*" / "hour=*" / "tenant=*" / "*.jsonl")
    got = duck_counts(f"SELECT dt, hour, tenant, count(*)::VARCHAR AS n FROM read_json_auto('{glob}', "
                      f"format = 'newline_delimited', hive_partitioning = true, hive_types_autocast = false) "
                      f"GROUP BY ALL")
    want = Counter((*bucket_of(m["ms"]), duck_tenant(m["tenant"])) for m in msgs)
    diff = {k: (got.get(k), want.get(k)) for k in set(got) | set(want) if got.get(k) != want.get(k)}
    check(not diff, f"DuckDB's counts per (dt, hour, tenant) differ from the messages': (got, want) {dict(list(diff.items())[:10])}")
    log(f"DuckDB hive_partitioning: {len(got)} (dt, hour, tenant) groups, {sum(got.values())} rows, as produced")


def duck_tenant(tenant: str | None) -> str | None:
    """The tenant column DuckDB reads from `tenant=VALUE`: it URL-decodes the value and takes
    __HIVE_DEFAULT_PARTITION__ as NULL."""
    return tenant if tenant else None


def dst_crashes(env: Env, rng) -> None:
    """16 000 messages over 3 partitions, key dt={date}/hour={hour}/tenant={header:tenant},
    time_source field:ts in Europe/Berlin across both DST switches, 10 SIGKILLs while they are
    produced: each message once, under its own tenant and local hour (check_lake), committed
    offsets at the heads, DuckDB's hive counts as produced."""
    tenants = ["acme", "globex", "zürich/ost"]
    msgs = make_messages(rng, 16_000, tenants)
    broker = env.start_broker()
    bucket = env.make_bucket(f"e2e-lake-dst-{rng.randrange(1 << 30):x}-{os.getpid():x}")  # a rerun: a new bucket
    # A single consumer, as in the other kill cases: a killed group member's partitions would
    # wait for the broker to notice it left.
    cfg = env.config(bucket, broker.address, consumer="s3-sink-lake",
                     rotation={"max_records": 2000, "idle": "2s", "max_span": "3h"})
    c = json.loads(cfg.read_text())
    c["naming"] = {"key": LAKE_KEY, "time_source": "field:ts", "timezone": "Europe/Berlin"}
    cfg.write_text(json.dumps(c, indent=2))
    # Produced while the daemon is killed and restarted: the chunks are spread over most of
    # the kill phase, so every kill falls while messages arrive and objects are open.
    delays = [rng.uniform(0.5, 3.5) for _ in range(10)]
    errors: list[BaseException] = []
    sent = [0]

    def produce() -> None:
        try:
            produce_chunks(env, broker.address, msgs, "chunk", spread=0.8 * sum(delays), progress=sent)
        except BaseException as e:  # noqa: BLE001 (reported by the main thread)
            errors.append(e)

    producer = threading.Thread(target=produce)
    producer.start()
    for i, delay in enumerate(delays):
        d = env.start_daemon(cfg)
        time.sleep(delay)
        rc = d.poll()
        d.kill()
        d.wait()
        check(rc is None, f"the daemon exited on its own ({rc}) before kill {i + 1}")
        log(f"SIGKILL {i + 1}/10 after {delay:.2f}s; {sent[0]} of {len(msgs)} messages produced so far")
    producer.join(timeout=600)
    check(not producer.is_alive(), "producer did not finish")
    if errors:
        raise errors[0]
    d = env.start_daemon(cfg)
    env.wait_lag_zero(cfg, 400)
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    inversions = sum(1 for a, b in zip(msgs, msgs[1:]) if b["ms"] < a["ms"])
    log(f"input: {len(msgs)} messages, {inversions} steps back in time (up to an hour), {len(chunks(msgs))} chunks")
    root = check_lake(env, bucket, msgs, cfg)
    check_duck_hive(root, msgs)
    text = (env.work / "sink.log").read_text(errors="replace")
    log(f"the daemon's runs adopted {text.count('object exists already (412)')} objects a killed run had written")


def hive_parquet(env: Env, rng) -> None:
    """Parquet under tenant={header:tenant}/dt={date}/, DuckDB with hive_partitioning: rows per
    (tenant, dt) equal the messages produced; the partition columns come from the paths."""
    tenants = ["acme", "globex", "initech"]
    msgs = make_messages(rng, 6_000, tenants)
    broker = env.start_broker()
    produce_chunks(env, broker.address, msgs, "chunk")
    bucket = env.make_bucket(f"e2e-lake-hive-{rng.randrange(1 << 30):x}-{os.getpid():x}")
    schema = [{"name": "seq", "type": "int64", "from": "payload:seq", "nullable": False},
              {"name": "offset", "type": "int64", "from": "offset", "nullable": False},
              {"name": "v", "type": "int32", "from": "payload:v"}]
    cfg = env.config(bucket, broker.address, fmt={"type": "parquet", "schema": schema},
                     rotation={"max_records": 5000, "idle": "2s", "max_span": "1d"})
    c = json.loads(cfg.read_text())
    c["naming"] = {"key": "{prefix}/{stream}/{topic}/tenant={header:tenant}/dt={date}/{partition}-{start_offset:020}.{ext}",
                   "time_source": "field:ts", "timezone": "Europe/Berlin"}
    cfg.write_text(json.dumps(c, indent=2))
    d = env.start_daemon(cfg)
    env.wait_lag_zero(cfg, 400)
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    root = env.download(bucket, "iggy/app/events/")
    glob = str(root / "tenant=*" / "dt=*" / "*.parquet")  # (the store probe's objects are elsewhere)
    got = duck_counts(f"SELECT tenant, dt::VARCHAR AS dt, count(*)::VARCHAR AS n FROM read_parquet('{glob}', "
                      f"hive_partitioning = true) GROUP BY ALL")
    want = Counter((duck_tenant(m["tenant"]), bucket_of(m["ms"])[0]) for m in msgs)
    diff = {k: (got.get(k), want.get(k)) for k in set(got) | set(want) if got.get(k) != want.get(k)}
    check(not diff, f"DuckDB's counts per (tenant, dt) differ from the messages': (got, want) {dict(list(diff.items())[:10])}")
    [tot] = json.loads(duck("query", f"SELECT count(*)::VARCHAR AS n, count(DISTINCT seq)::VARCHAR AS s FROM read_parquet('{glob}')"))
    check(int(tot["n"]) == len(msgs) and int(tot["s"]) == len(msgs), f"DuckDB reads {tot}, {len(msgs)} messages were sent")
    log(f"DuckDB hive_partitioning over Parquet: {len(got)} (tenant, dt) groups, {tot['n']} rows, as produced")


CASES = {"dst_crashes": dst_crashes, "hive_parquet": hive_parquet}

if __name__ == "__main__":
    import sys
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print(f"usage: lake_cases.py {{{'|'.join(CASES)}}}", file=sys.stderr)
        sys.exit(2)
    fn = CASES[sys.argv[1]]
    fn.__name__ = sys.argv[1]
    run_case(fn)
