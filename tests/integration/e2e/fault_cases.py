#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end cases of issue 40, point 4: the source changes under a running daemon
(docs/operations.md, Faults). Usage: fault_cases.py CASE   (ISS_BINARY_DIR and RGW_DIR from CTest)."""
from __future__ import annotations

import sys
import time

from harness import Env, check, log, metric_sum, partition_counts, read_landed, run_case, verify_exactly_once


def produce(env: Env, address: str, n: int, *args: str) -> dict[int, int]:
    out = env.produce(address, "app", "events", *args, "--balanced", "--count", str(n), "--size", "200",
                      "--batch", "250")
    counts = partition_counts(out)
    check(sum(counts.values()) == n, f"iggy-produce reported {counts} for {n} messages:\n{out}")
    return counts


def wait_metric(env: Env, admin: str, name: str, want: float, seconds: float, **labels: str) -> float:
    end = time.time() + seconds
    v = metric_sum(env.scrape(admin), name, **labels)
    while v != want and time.time() < end:
        time.sleep(0.2)
        v = metric_sum(env.scrape(admin), name, **labels)
    check(v == want, f"{name}{labels}: wanted {want} within {seconds}s, got {v}")
    return v


def partitions_added(env: Env, rng, group: bool) -> None:
    """A topic grown from 2 to 4 partitions under a running daemon (`partitions: all`): the
    messages produced into the new partitions land exactly once, the new partitions show in
    assigned_partitions within the documented bound (iggy metadata re-read every 5 s)."""
    broker = env.start_broker()
    mode = "group" if group else "single"
    bucket = env.make_bucket(f"e2e-partitions-added-{mode}-{rng.randrange(1 << 30):x}")
    counts = produce(env, broker.address, 2000, "--create", "2")
    kw = {} if group else {"consumer": "sink"}
    cfg = env.config(bucket, broker.address, rotation={"max_records": 1000, "idle": "1s"}, **kw)
    d = env.start_daemon(cfg)
    admin = env.admin_address()
    env.wait_lag_zero(cfg, 120)
    wait_metric(env, admin, "iggy_s3_sink_assigned_partitions", 2, 30, stream="app", topic="events")
    added = produce(env, broker.address, 4000, "--add-partitions", "2")
    check(set(added) == {0, 1, 2, 3}, f"the grown topic's messages did not go to 4 partitions: {added}")
    start = time.time()
    # The bound: 5 s (metadata_interval) plus a round; 30 s is generous for a loaded CI machine.
    wait_metric(env, admin, "iggy_s3_sink_assigned_partitions", 4, 30, stream="app", topic="events")
    log(f"{mode}: 4 partitions assigned {time.time() - start:.1f} s after CreatePartitions")
    env.wait_lag_zero(cfg, 120)
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    for p, n in added.items():
        counts[p] = counts.get(p, 0) + n
    landed = read_landed(env.download(bucket))
    verify_exactly_once(landed, counts, "app", "events")
    check(landed.records == 6000, f"{landed.records} records in the bucket, wanted 6000")
    log(f"{mode}: {landed.records} records in {landed.objects} objects, 0 duplicates, per partition {counts}")


def wait_readyz(env: Env, admin: str, want: int, needles: list[str], seconds: float) -> str:
    end = time.time() + seconds
    st, body = env.http_get(admin, "/readyz")
    while (st != want or not all(n in body for n in needles)) and time.time() < end:
        time.sleep(0.2)
        st, body = env.http_get(admin, "/readyz")
    check(st == want and all(n in body for n in needles), f"/readyz: wanted {want} with {needles}, got {st} {body!r}")
    return body


def topic_recreated_fail(env: Env, rng) -> None:
    """A source topic deleted under a running single consumer: /readyz 503 naming it,
    source_unavailable 1, no tight loop, the daemon keeps running. Created again (offsets from 0):
    iggy.on_offset_reset: fail stops both partitions (/readyz names the offset reset,
    offset_reset_partitions 2) and nothing of the new topic lands; the old messages are in the
    bucket exactly once."""
    broker = env.start_broker()
    bucket = env.make_bucket(f"e2e-topic-recreated-{rng.randrange(1 << 30):x}")
    counts = produce(env, broker.address, 2000, "--create", "2")
    cfg = env.config(bucket, broker.address, consumer="sink", rotation={"max_records": 500, "idle": "1s"})
    d = env.start_daemon(cfg)
    admin = env.admin_address()
    env.wait_lag_zero(cfg, 120)
    wait_readyz(env, admin, 200, ["ready"], 60)

    env.produce(broker.address, "app", "events", "--delete-topic")
    body = wait_readyz(env, admin, 503, ["iggy: source unavailable: app/events"], 60)
    wait_metric(env, admin, "iggy_s3_sink_source_unavailable", 1, 30, stream="app", topic="events")
    log(f"topic deleted: /readyz 503 {body.strip()!r}")
    logf = env.work / "sink.log"
    lines_before = logf.read_text(errors="replace").count("cannot be read")
    time.sleep(8)
    tries = logf.read_text(errors="replace").count("cannot be read") - lines_before
    check(d.poll() is None, f"the daemon exited ({d.returncode}) while its source topic was missing")
    # Tries at a backoff from 1 s doubling (one line per try for the topic and per partition):
    # a tight loop would log hundreds in 8 s.
    check(tries <= 15, f"{tries} 'cannot be read' lines in 8 s while the topic was missing: a tight loop?")

    new = produce(env, broker.address, 300, "--create", "2")
    body = wait_readyz(env, admin, 503, ["iggy: offset reset: app/events partition 0",
                                         "iggy: offset reset: app/events partition 1"], 60)
    check("source unavailable" not in body, f"/readyz still names the topic missing once it exists: {body!r}")
    wait_metric(env, admin, "iggy_s3_sink_offset_reset_partitions", 2, 30, stream="app", topic="events")
    wait_metric(env, admin, "iggy_s3_sink_source_unavailable", 0, 30, stream="app", topic="events")
    log(f"topic created again with {new}: /readyz 503 {body.strip()!r}")
    time.sleep(3)  # nothing of the new topic is read meanwhile
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    landed = read_landed(env.download(bucket))
    # The new topic's messages (offsets 0..) would show as duplicates of the old ones.
    verify_exactly_once(landed, counts, "app", "events")
    check(landed.records == 2000, f"{landed.records} records in the bucket, wanted the 2000 old ones")
    log(f"{landed.records} old records once, none of the new topic's {sum(new.values())}")


CASES = {
    "partitions_added_single": lambda e, r: partitions_added(e, r, False),
    "partitions_added_group": lambda e, r: partitions_added(e, r, True),
    "topic_recreated_fail": topic_recreated_fail,
}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print(f"usage: fault_cases.py {{{'|'.join(CASES)}}}", file=sys.stderr)
        sys.exit(2)
    fn = CASES[sys.argv[1]]
    fn.__name__ = sys.argv[1]
    run_case(fn)
