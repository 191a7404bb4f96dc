#!/usr/bin/env python3
"""End-to-end cases of issue 8 (design.md §3): broker + RGW + the daemon as a process.
Usage: cases.py CASE   (ISS_BINARY_DIR and RGW_DIR from CTest)."""
from __future__ import annotations

import signal
import subprocess
import sys
import time

from harness import (Env, Failure, SwitchableProxy, check, log, partition_counts, read_landed, run_case,
                     verify_exactly_once)


def bucket_name(env: Env, rng, case: str) -> str:
    return env.make_bucket(f"e2e-{case.replace('_', '-')}-{rng.randrange(1 << 30):x}")


def produce_synthetic(env: Env, address: str, n: int, partitions: int, stream="app", topic="events",
                      size: int = 200) -> dict[int, int]:
    out = env.produce(address, stream, topic, "--create", str(partitions), "--balanced",
                      "--header", "source=e2e", "--count", str(n), "--size", str(size), "--batch", "500")
    counts = partition_counts(out)
    check(sum(counts.values()) == n, f"iggy-produce reported {counts} for {n} messages:\n{out}")
    return counts


def exactly_once(env: Env, rng) -> None:
    """N messages over P partitions: exactly N records, each (partition, offset) once, in offset
    order within each object, keys and metadata matching content, offsets committed to the end."""
    broker = env.start_broker()
    bucket = bucket_name(env, rng, "exactly-once")
    counts = produce_synthetic(env, broker.address, 30_000, 3)
    cfg = env.config(bucket, broker.address, rotation={"max_records": 4000, "idle": "2s"})
    d = env.start_daemon(cfg)
    env.wait_lag_zero(cfg)
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    landed = read_landed(env.download(bucket))
    verify_exactly_once(landed, counts, "app", "events")
    keys = env.list_keys(bucket)
    for key in keys[:4]:
        md = env.head_metadata(bucket, key)
        obj = next(o for k, o in landed.per_object if key.endswith(k))
        check(md.get("iggy-first-offset") == str(obj[0]) and md.get("iggy-last-offset") == str(obj[-1])
              and md.get("iggy-count") == str(len(obj)), f"{key}: metadata {md} does not match its records")
    rows = env.lag_json(cfg)
    check(all(int(r["lag"]) == 0 for r in rows), f"lag not zero after the run: {rows}")
    log(f"{landed.records} records in {landed.objects} objects, 0 duplicates")


def crash_restart(env: Env, rng) -> None:
    """SIGKILL at seeded random moments during a run of 200 000 messages, restarted each time,
    10 times: each offset exactly once in the bucket."""
    broker = env.start_broker()
    bucket = bucket_name(env, rng, "crash")
    counts = produce_synthetic(env, broker.address, 200_000, 4, size=120)
    cfg = env.config(bucket, broker.address, consumer="s3-sink-crash",
                     rotation={"max_records": 7000, "max_bytes": "2MiB", "idle": "1s"})
    for i in range(10):
        d = env.start_daemon(cfg, tag="sink")
        delay = rng.uniform(0.3, 4.0)
        time.sleep(delay)
        rc = d.poll()
        d.kill()
        d.wait()
        log(f"kill {i + 1}/10 after {delay:.2f}s (exited on its own: {rc})")
    d = env.start_daemon(cfg, tag="sink")
    env.wait_lag_zero(cfg, 400)
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    landed = read_landed(env.download(bucket))
    verify_exactly_once(landed, counts, "app", "events")
    log(f"{landed.records} records in {landed.objects} objects after 10 kills, 0 duplicates")


def idle_flush(env: Env, rng) -> None:
    """A quiet partition lands within rotation.idle with no new messages."""
    broker = env.start_broker()
    bucket = bucket_name(env, rng, "idle")
    produce_synthetic(env, broker.address, 7, 1)
    cfg = env.config(bucket, broker.address, rotation={"max_records": 1_000_000, "idle": "2s"})
    d = env.start_daemon(cfg)
    t0 = time.monotonic()
    keys = []
    while time.monotonic() - t0 < 60 and not keys:
        time.sleep(0.5)
        keys = env.list_keys(bucket)
    waited = time.monotonic() - t0
    check(len(keys) == 1, f"idle partition not flushed within 60 s (rotation.idle 2s): {keys}")
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    landed = read_landed(env.download(bucket))
    check(landed.records == 7, f"expected 7 records, found {landed.records}")
    log(f"idle object landed after {waited:.1f}s")


def sigterm_flush(env: Env, rng) -> None:
    """SIGTERM with data buffered uploads it, commits, and exits 0."""
    broker = env.start_broker()
    bucket = bucket_name(env, rng, "sigterm")
    counts = produce_synthetic(env, broker.address, 2_500, 2)
    cfg = env.config(bucket, broker.address, rotation={"max_records": 1_000_000, "idle": "10m"})
    d = env.start_daemon(cfg)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # wait until everything is buffered (nothing uploaded yet)
        time.sleep(1)
        if "polled" in (env.work / "sink.log").read_text() or time.monotonic() > deadline - 55:
            break
    time.sleep(3)
    check(env.list_keys(bucket) == [], "objects uploaded before SIGTERM despite rotation limits")
    rc = env.stop(d)
    check(rc == 0, f"daemon exited {rc} on SIGTERM, expected 0")
    landed = read_landed(env.download(bucket))
    verify_exactly_once(landed, counts, "app", "events")
    rows = env.lag_json(cfg)
    check(all(int(r["lag"]) == 0 for r in rows), f"offsets not committed on clean stop: {rows}")


def s3_outage(env: Env, rng) -> None:
    """S3 unreachable for a while (after start): nothing committed meanwhile, the daemon keeps
    running (single-consumer mode retries without end), everything lands once S3 is back."""
    broker = env.start_broker()
    bucket = bucket_name(env, rng, "outage")
    proxy = SwitchableProxy("127.0.0.1", int(env.rgw["RGW_PORT"]))
    first = produce_synthetic(env, broker.address, 1_000, 2)
    cfg = env.config(bucket, broker.address, consumer="s3-sink-outage",
                     endpoint=f"http://127.0.0.1:{proxy.port}",
                     rotation={"max_records": 1000, "idle": "1s"})
    d = env.start_daemon(cfg)
    env.wait_lag_zero(cfg, 120)  # up and running, the first messages are in
    proxy.set_enabled(False)
    log("S3 is now unreachable")
    second = produce_synthetic(env, broker.address, 4_000, 2)
    time.sleep(10)  # several rotations' worth (idle 1s) and retries exhausted more than once
    rows = env.lag_json(cfg)
    check(sum(int(r["lag"]) for r in rows) == 4_000, f"offsets committed while S3 was unreachable: {rows}")
    check(d.poll() is None, "daemon exited while S3 was unreachable (single-consumer mode retries)")
    proxy.set_enabled(True)
    log("S3 is back")
    env.wait_lag_zero(cfg)
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    landed = read_landed(env.download(bucket))
    counts = {p: first.get(p, 0) + second.get(p, 0) for p in set(first) | set(second)}
    verify_exactly_once(landed, counts, "app", "events")


def group_failover(env: Env, rng) -> None:
    """Two daemons in one consumer group, one killed mid-run: nothing lost; duplicates counted
    (0 expected where the store honours the conditional on the operation used)."""
    broker = env.start_broker("--rebalance-timeout", "3s")
    bucket = bucket_name(env, rng, "group")
    counts = produce_synthetic(env, broker.address, 60_000, 4)
    cfg_a = env.config(bucket, broker.address, group="sinks", rotation={"max_records": 2500, "idle": "1s"},
                       name="a")
    cfg_b = env.config(bucket, broker.address, group="sinks", rotation={"max_records": 2500, "idle": "1s"},
                       name="b")
    a = env.start_daemon(cfg_a, tag="a")
    b = env.start_daemon(cfg_b, tag="b")
    time.sleep(rng.uniform(1.5, 4.0))
    a.kill()
    a.wait()
    log("killed daemon a")
    env.wait_lag_zero(cfg_b, 300)
    check(env.stop(b) == 0, "daemon b did not exit 0 on SIGTERM")
    landed = read_landed(env.download(bucket))
    dups = landed.duplicates()
    log(f"{landed.records} records, {dups} duplicates")
    missing = [(p, o) for p, n in counts.items() for o in range(n) if ("app", "events", p, o) not in landed.count]
    check(not missing, f"{len(missing)} messages lost in the fail-over, e.g. {missing[:5]}")
    check(dups == 0, f"{dups} duplicates although RGW honours If-None-Match on PutObject")


def stale_writer(env: Env, rng) -> None:
    """A stale owner's late upload is refused and nothing is lost: daemon a is frozen (SIGSTOP)
    while it holds data; b joins, and after the rebalance timeout the broker hands the partition to
    b (a never confirms the revocation), which uploads it;
    a is resumed and finishes its upload late: it must get 412 and adopt, not overwrite."""
    broker = env.start_broker("--rebalance-timeout", "2s")
    bucket = bucket_name(env, rng, "stale")
    # Two partitions: a owns both; b's join revokes one of them from a (0.8.0 join rule), which
    # completes after the rebalance timeout because a, frozen, never confirms it.
    counts = produce_synthetic(env, broker.address, 4_000, 2)
    rot = {"max_records": 1_000_000, "idle": "4s"}
    cfg_a = env.config(bucket, broker.address, group="sinks", rotation=rot, name="a")
    cfg_b = env.config(bucket, broker.address, group="sinks", rotation=rot, name="b")
    a = env.start_daemon(cfg_a, tag="a")
    time.sleep(2.5)  # a owns both partitions and has polled everything; idle not reached
    a.send_signal(signal.SIGSTOP)
    b = env.start_daemon(cfg_b, tag="b")
    deadline = time.monotonic() + 120
    keys = []
    while time.monotonic() < deadline and not keys:
        time.sleep(1)
        keys = env.list_keys(bucket)
    check(len(keys) == 1, f"b did not upload the partition it took over: {keys}")
    log(f"b uploaded {keys[0]}; resuming a")
    a.send_signal(signal.SIGCONT)
    env.wait_lag_zero(cfg_a, 120)  # a uploads its other partition; its late copy of b's is refused
    check(env.stop(a) == 0, "daemon a did not exit 0 on SIGTERM")
    check(env.stop(b) == 0, "daemon b did not exit 0")
    landed = read_landed(env.download(bucket))
    verify_exactly_once(landed, counts, "app", "events")
    log_a = (env.work / "a.log").read_text()
    check("adopt" in log_a or "412" in log_a, "daemon a's late upload was not refused (no 412/adoption in its log)")


def group_sigstop(env: Env, rng) -> None:
    """A group member frozen (SIGSTOP) past the server's heartbeat is evicted (G1: dropped, 30;
    G2: Eviction 13); after SIGCONT it says so at warn, reconnects, joins again and resumes. The
    other member takes over meanwhile, then leaves, so the last messages can only reach the bucket
    through the resumed one. Every message lands exactly once."""
    broker = env.start_broker("--heartbeat", "3s", "--rebalance-timeout", "3s")  # expiry after 3.6 s
    bucket = bucket_name(env, rng, "sigstop")
    first = produce_synthetic(env, broker.address, 8_000, 4)
    rot = {"max_records": 1500, "idle": "1s"}
    cfg_a = env.config(bucket, broker.address, group="sinks", rotation=rot, name="a")
    cfg_b = env.config(bucket, broker.address, group="sinks", rotation=rot, name="b")
    a = env.start_daemon(cfg_a, tag="a")
    b = env.start_daemon(cfg_b, tag="b")
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and "partition assigned" not in (env.work / "a.log").read_text():
        time.sleep(0.2)  # a must be a member holding partitions when it is frozen
    check("partition assigned" in (env.work / "a.log").read_text(), "daemon a got no partition within 90 s")
    time.sleep(rng.uniform(0.2, 2.0))
    a.send_signal(signal.SIGSTOP)
    log("froze daemon a for 8 s (past the 3 s heartbeat)")
    time.sleep(8)
    a.send_signal(signal.SIGCONT)
    log("resumed daemon a")
    second = produce_synthetic(env, broker.address, 10, 4)
    env.wait_lag_zero(cfg_a, 120)
    check(env.stop(b) == 0, "daemon b did not exit 0 on SIGTERM")
    log("stopped daemon b (it left the group): only a can deliver from here")
    third = produce_synthetic(env, broker.address, 2_000, 4)
    env.wait_lag_zero(cfg_a, 120)  # before the fix: a never came back, lag stayed at 2000
    check(a.poll() is None, "daemon a exited")
    check(env.stop(a) == 0, "daemon a did not exit 0 on SIGTERM")
    landed = read_landed(env.download(bucket))
    counts = {p: first.get(p, 0) + second.get(p, 0) + third.get(p, 0) for p in set(first) | set(second) | set(third)}
    verify_exactly_once(landed, counts, "app", "events")
    log_a = (env.work / "a.log").read_text()
    warned = [line for line in log_a.splitlines() if " warn " in line and (
        "ended the session" in line or "not a member" in line or "no longer counts" in line)]
    check(warned, "daemon a did not say at warn that the server had evicted it")
    log(f"{landed.records} records in {landed.objects} objects, 0 duplicates; a said: {warned[0][:160]}")


def invalid_config(env: Env, rng) -> None:
    """An invalid config exits 78 listing every error, before any connection."""
    p = env.work / "bad.yaml"
    p.write_text("iggy: {address: 127.0.0.1:1, poll: {messages: 0}}\n"
                 "sources: []\n"
                 "s3: {bucket: x, part_size: 1MiB}\n"
                 "rotation: {max_records: 0}\n"
                 "naming: {key: '{prefix}/{stream}/{end_offset}'}\n"
                 "bogus_key: 1\n")
    r = subprocess.run([env.bin("iggy-s3-sink"), "run", "--config", str(p)], capture_output=True, text=True,
                       timeout=30, env=env.daemon_env())
    out = r.stdout + r.stderr
    check(r.returncode == 78, f"exit {r.returncode}, expected 78:\n{out}")
    for needle in ("iggy.poll.messages", "sources", "s3.part_size", "rotation.max_records", "naming.key",
                   "bogus_key"):
        check(needle in out, f"error list does not name {needle}:\n{out}")


def bad_message(env: Env, rng, policy: str) -> None:
    """A non-JSON payload with format.payload: json follows on_bad_message."""
    broker = env.start_broker()
    bucket = bucket_name(env, rng, f"bad-{policy.replace('_', '-')}")
    lines = env.work / "input.txt"
    lines.write_text('{"n":1}\n{"n":2}\nthis is not json\n{"n":4}\n')
    env.produce(broker.address, "app", "events", "--create", "1", "--partition", "0", str(lines))
    delivery = {"on_bad_message": policy}
    if policy == "dead_letter":
        empty = env.work / "empty.txt"
        empty.write_text("")
        env.produce(broker.address, "app", "dead", "--create", "1", "--partition", "0", str(empty))
        delivery["dead_letter"] = {"stream": "app", "topic": "dead"}
    cfg = env.config(bucket, broker.address, consumer=f"bad-{policy}", delivery=delivery,
                     fmt={"type": "json_lines", "compression": "none", "payload": "json"},
                     rotation={"max_records": 2, "idle": "1s"})
    d = env.start_daemon(cfg)
    if policy == "fail":
        time.sleep(10)
        check(d.poll() is None, "daemon stopped entirely: fail must stop only that partition")
        env.stop(d)
        landed = read_landed(env.download(bucket))
        offs = sorted(k[3] for k in landed.count)
        check(offs == [0, 1], f"with fail, offsets before the bad one land and nothing after: {offs}")
        check("offset=2" in (env.work / "sink.log").read_text() or "offset 2" in (env.work / "sink.log").read_text(),
              "the log does not name the bad message's offset")
        rows = env.lag_json(cfg)
        check(sum(int(r["lag"]) for r in rows) == 2, f"bad message or later ones committed: {rows}")
        return
    env.wait_lag_zero(cfg, 120)
    check(env.stop(d) == 0, "daemon did not exit 0")
    landed = read_landed(env.download(bucket))
    offs = sorted(k[3] for k in landed.count)
    check(offs == [0, 1, 3], f"expected offsets 0,1,3 in the bucket, found {offs}")
    if policy == "dead_letter":
        # The dead-letter topic, read through the daemon's own lag view: one message, head offset 0.
        rows = env.lag_json(env.config(bucket, broker.address, consumer="dl-check",
                                       topics=["dead"], name="dl"))
        check(sum(int(r["messages"]) for r in rows) == 1,
              f"dead-letter topic should hold exactly one message: {rows}")


def lag_missing_and_sighup(env: Env, rng) -> None:
    """`lag` fails (exit 1, naming it) for a topic the server lacks instead of reporting lag 0;
    SIGHUP is a clean stop like SIGTERM (buffered data uploaded and committed, exit 0)."""
    broker = env.start_broker()
    bucket = bucket_name(env, rng, "hup")
    counts = produce_synthetic(env, broker.address, 300, 1)
    missing = env.config(bucket, broker.address, topics=["events", "nosuch"], name="missing")
    rc, out, err = env.lag(missing)
    check(rc == 1 and "nosuch" in err, f"lag on a missing topic: exit {rc}, stderr {err!r}")
    cfg = env.config(bucket, broker.address, rotation={"max_records": 1_000_000, "idle": "10m"})
    d = env.start_daemon(cfg)
    time.sleep(4)
    rc = env.stop(d, signal.SIGHUP)
    check(rc == 0, f"daemon exited {rc} on SIGHUP, expected a clean stop (0)")
    landed = read_landed(env.download(bucket))
    verify_exactly_once(landed, counts, "app", "events")


CASES = {
    "exactly_once": exactly_once,
    "crash_restart": crash_restart,
    "idle_flush": idle_flush,
    "sigterm_flush": sigterm_flush,
    "s3_outage": s3_outage,
    "group_failover": group_failover,
    "stale_writer": stale_writer,
    "group_sigstop": group_sigstop,
    "invalid_config": invalid_config,
    "lag_missing_and_sighup": lag_missing_and_sighup,
    "bad_message_fail": lambda e, r: bad_message(e, r, "fail"),
    "bad_message_skip": lambda e, r: bad_message(e, r, "skip"),
    "bad_message_dead_letter": lambda e, r: bad_message(e, r, "dead_letter"),
}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print(f"usage: cases.py {{{'|'.join(CASES)}}}", file=sys.stderr)
        sys.exit(2)
    fn = CASES[sys.argv[1]]
    fn.__name__ = sys.argv[1]
    run_case(fn)
