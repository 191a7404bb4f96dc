#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end cases of issue 8 (docs/architecture.md §3): broker + RGW + the daemon as a process.
Usage: cases.py CASE   (ISS_BINARY_DIR and RGW_DIR from CTest)."""
from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from harness import (Env, Failure, FaultFront, SwitchableProxy, check, check_not_lower, free_port, log, metric_sum, parse_metrics, partition_counts,
                     read_landed, run_case, verify_exactly_once)


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
    # schedule 0: the default hourly wall-clock boundary would close the objects when a run
    # crosses the top of an hour.
    cfg = env.config(bucket, broker.address, rotation={"max_records": 1_000_000, "idle": "10m", "schedule": "0"})
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


def probe_interrupted(env: Env, rng) -> None:
    """The start-up capability probe's write gets no answer through every retry (resets before
    the answer): the daemon waits and probes again instead of exiting, then delivers exactly
    once in group mode with conditional writes (a later probe found them)."""
    broker = env.start_broker()
    bucket = bucket_name(env, rng, "probe-interrupted")
    front = FaultFront(env, env.rgw["RGW_ENDPOINT"])
    # More resets than one probe's attempts (s3.retry.attempts 10): the first probe gives up.
    front.add("reset_before_response", method="PUT", target="/.iggy-s3-sink/probe-", times=14)
    counts = produce_synthetic(env, broker.address, 3_000, 2)
    cfg = env.config(bucket, broker.address, endpoint=front.url, rotation={"max_records": 1000, "idle": "1s"})
    d = env.start_daemon(cfg)
    env.wait_lag_zero(cfg, 180)
    check(d.poll() is None, f"the daemon exited ({d.returncode}) after an interrupted probe")
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    stats = front.finish()
    check(stats["faults"].get("reset_before_response") == 14, f"fault front: {stats}")
    verify_exactly_once(read_landed(env.download(bucket)), counts, "app", "events")
    text = (env.work / "sink.log").read_text()
    check("capability probe interrupted" in text, "no 'capability probe interrupted' in the daemon's log")
    check("conditional_put=yes" in text, "the probe that finished did not find conditional PutObject")


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


def group_one_each(env: Env, rng) -> None:
    """Group mode, one daemon, one message in each of 4 partitions: every message lands, exactly
    once, while the daemon runs. Partition 0 then holds only offset 0, and a count-0 group poll of
    it answers `0, 0, no messages`, the same as "nothing to poll" (docs/protocol.md §5.6): before
    the fix the daemon did not count partition 0 as its own, so its message waited for a second."""
    broker = env.start_broker()
    bucket = bucket_name(env, rng, "group-one-each")
    # Balanced sends put a whole batch on one partition: one message per batch.
    out = env.produce(broker.address, "app", "events", "--create", "4", "--balanced", "--count", "4", "--size", "200",
                      "--batch", "1")
    counts = partition_counts(out)
    check(counts == {0: 1, 1: 1, 2: 1, 3: 1}, f"iggy-produce spread 4 messages as {counts}, want one per partition")
    cfg = env.config(bucket, broker.address, group="sinks", rotation={"max_records": 1000, "idle": "1s"})
    d = env.start_daemon(cfg)
    env.wait_lag_zero(cfg, 90)  # the lag counts messages, so partition 0's one message counts
    check(d.poll() is None, "the daemon exited")
    landed = read_landed(env.download(bucket))  # delivered while running, not by the stop's flush
    verify_exactly_once(landed, counts, "app", "events")
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    log_text = (env.work / "sink.log").read_text()
    check("partition assigned partition=app/events/0" in log_text, "the daemon did not log partition 0 as assigned")
    log(f"{landed.records} records in {landed.objects} objects, 0 duplicates")


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
    """A non-JSON payload with format.payload: json follows on_bad_message (fail: the partition
    stops; recovered by a reload with skip). `verify` counts the refused offset as accounted for
    and still names a real gap."""
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

    def verify() -> tuple[int, str]:
        r = subprocess.run([env.bin("iggy-s3-sink"), "verify", "--config", str(cfg)], env=env.daemon_env(),
                           capture_output=True, text=True, timeout=300)
        log(f"verify -> {r.returncode}\n{r.stdout}{r.stderr}")
        return r.returncode, r.stdout + r.stderr

    if policy == "fail":
        time.sleep(10)
        check(d.poll() is None, "daemon stopped entirely: fail must stop only that partition")
        landed = read_landed(env.download(bucket))
        offs = sorted(k[3] for k in landed.count)
        check(offs == [0, 1], f"with fail, offsets before the bad one land and nothing after: {offs}")
        check("offset=2" in (env.work / "sink.log").read_text() or "offset 2" in (env.work / "sink.log").read_text(),
              "the log does not name the bad message's offset")
        rows = env.lag_json(cfg)
        check(sum(int(r["lag"]) for r in rows) == 2, f"bad message or later ones committed: {rows}")
        # A reload without a change still rebuilds the pipeline while a partition is stopped
        # (the recovery after a foreign object was moved away): the partition starts again
        # from its committed offset and, the policy being the same, stops at the same message.
        sink_log = env.work / "sink.log"
        stops = sink_log.read_text().count("partition stops here")
        check(stops == 1, f"{stops} 'partition stops here' lines before the reload")
        d.send_signal(signal.SIGHUP)
        deadline = time.time() + 60
        while sink_log.read_text().count("partition stops here") < 2 and time.time() < deadline:
            time.sleep(0.2)
        text = sink_log.read_text()
        check(text.count("partition stops here") == 2,
              "the stopped partition did not start again (and stop at the same message) on an unchanged reload")
        check("the configuration is unchanged, but a partition is stopped" in text,
              "an unchanged reload with a stopped partition did not say it rebuilds the pipeline")
        # The recovery of docs/operations.md "A stopped partition": another policy, then a
        # reload (SIGHUP restarts the stopped partition from its committed offset).
        changed = json.loads(cfg.read_text())
        changed["delivery"] = {"on_bad_message": "skip"}
        cfg.write_text(json.dumps(changed, indent=2))
        d.send_signal(signal.SIGHUP)
        env.wait_lag_zero(cfg, 120)
        check(d.poll() is None, f"the daemon exited ({d.returncode}) on the reload")
    else:
        env.wait_lag_zero(cfg, 120)
    check(env.stop(d) == 0, "daemon did not exit 0")
    landed = read_landed(env.download(bucket))
    offs = sorted(k[3] for k in landed.count)
    check(offs == [0, 1, 3], f"expected offsets 0,1,3 in the bucket, found {offs}")
    # verify: offset 2 is in no object (objects 0..1 and 3..3: the bad message came between
    # them), but its message is one the format refuses, passed by the policy: accounted for,
    # not a gap.
    rc, out = verify()
    check(rc == 0 and "1 offset is in no object: the format refuses its message" in out,
          f"verify after the bad message was {policy}: exit {rc}, want 0 with offset 2 accounted for")
    # A real gap stays one: the object holding offset 3 deleted.
    key = next(k for k, o in landed.per_object if o[0] == 3)
    env.aws("s3api", "delete-object", "--bucket", bucket, "--key", key)
    rc, out = verify()
    # (3 is the committed offset: it is committed but in no object, a loss; 2 still accounted for)
    check(rc == 1 and "offsets 3..3 were committed but are in no object" in out and "2..3" not in out,
          f"verify with offset 3's object deleted: exit {rc}, want 1 naming offset 3 only")
    if policy == "dead_letter":
        # The dead-letter topic, read through the daemon's own lag view: one message, head offset 0.
        rows = env.lag_json(env.config(bucket, broker.address, consumer="dl-check",
                                       topics=["dead"], name="dl"))
        check(sum(int(r["messages"]) for r in rows) == 1,
              f"dead-letter topic should hold exactly one message: {rows}")


def lag_missing(env: Env, rng) -> None:
    """`lag` fails (exit 1, naming it) for a topic the server lacks instead of reporting lag 0;
    SIGINT is a clean stop like SIGTERM (buffered data uploaded and committed, exit 0). (SIGHUP
    reloads the configuration: config_reload.)"""
    broker = env.start_broker()
    bucket = bucket_name(env, rng, "hup")
    counts = produce_synthetic(env, broker.address, 300, 1)
    missing = env.config(bucket, broker.address, topics=["events", "nosuch"], name="missing")
    rc, out, err = env.lag(missing)
    check(rc == 1 and "nosuch" in err, f"lag on a missing topic: exit {rc}, stderr {err!r}")
    cfg = env.config(bucket, broker.address, rotation={"max_records": 1_000_000, "idle": "10m"})
    d = env.start_daemon(cfg)
    time.sleep(4)
    rc = env.stop(d, signal.SIGINT)
    check(rc == 0, f"daemon exited {rc} on SIGINT, expected a clean stop (0)")
    landed = read_landed(env.download(bucket))
    verify_exactly_once(landed, counts, "app", "events")


def config_reload(env: Env, rng) -> None:
    """SIGHUP during a run re-reads the file; daemon a shares its consumer group with daemon b.
    1. A good change that leaves `iggy` alone (rotation.max_records 5000 -> 250) is applied after
       a's open objects were uploaded and committed, on the same Iggy connection: the group sees
       no leave and no join (the broker reports none; b sees no rebalance).
    2. A bad change (an invalid value) is refused with its problem logged at error; a runs on.
    3. A change of an iggy.* key (iggy.poll.messages) makes a leave the group and join it again
       on a new connection (the broker reports both).
    Over all three every offset lands exactly once, no counter or histogram series of a's
    /metrics ever goes down (a reload rebuilds the pipeline and, in 3, the Iggy client), and
    a's and b's messages_total add up to what landed. `iggy_s3_sink_config_reloads_total{result}`
    counts the reloads."""
    broker = env.start_broker("--rebalance-timeout", "3s")
    bucket = bucket_name(env, rng, "reload")
    group = "s3-sink"
    # The topic and two messages per partition exist before the daemons join. (Two: a group
    # member learns its assignment from partition-less polls, and partition 0 holding only
    # offset 0 answers as "nothing to poll" does; it is polled once it holds more.)
    first = partition_counts(env.produce(broker.address, "app", "events", "--create", "4", "--balanced",
                                         "--count", "8", "--size", "200", "--batch", "1"))
    # a's objects close only at 5000 records or after 10 minutes: at the first reload some are
    # open. b writes small objects from the start and is never reloaded.
    # (schedule 0: the default hourly boundary would close them when the run crosses an hour.)
    cfg = env.config(bucket, broker.address, group=group,
                     rotation={"max_records": 5000, "idle": "10m", "schedule": "0"})
    cfg_b = env.config(bucket, broker.address, group=group, rotation={"max_records": 250, "idle": "1s"}, name="b")
    d = env.start_daemon(cfg)
    admin = env.admin_address()

    def wait_for(what: str, cond, seconds: float = 120) -> None:
        deadline = time.time() + seconds
        while not cond() and time.time() < deadline:
            time.sleep(0.2)
        check(cond(), f"{what}: not within {seconds:.0f} s")

    wait_for("a joined the group", lambda: len(broker.membership_changes(group)) == 1)
    b = env.start_daemon(cfg_b, tag="b")
    admin_b = env.admin_address("b")

    def assigned(address: str) -> float:
        return metric_sum(env.scrape(address), "iggy_s3_sink_assigned_partitions")

    # b's join hands it one of a's four partitions (the 0.8 join rule); then the group is settled.
    wait_for("a owns 3 partitions and b 1", lambda: assigned(admin) == 3 and assigned(admin_b) == 1)
    settled = broker.membership_changes(group)
    check(len(settled) == 2 and all(" joined " in line for line in settled), f"joins so far: {settled}")
    second = produce_synthetic(env, broker.address, 6000, 4)
    # a's three partitions get about 2 MB of the batch; the reload comes once it holds a good
    # part of it in open objects.
    wait_for("a holds 500 KB in open objects",
             lambda: metric_sum(env.scrape(admin), "iggy_s3_sink_buffered_bytes") > 500_000)

    def reloads_now() -> dict:
        m = env.scrape(admin)
        return {dict(k[1]).get("result"): v for k, v in m.items() if k[0] == "iggy_s3_sink_config_reloads_total"}

    sink_log = env.work / "sink.log"
    # 1. The good change, outside `iggy`, sent while a holds records in open objects.
    good = json.loads(cfg.read_text())
    good["rotation"] = {"max_records": 250, "idle": "1s"}
    cfg.write_text(json.dumps(good, indent=2))
    before = env.scrape(admin)
    d.send_signal(signal.SIGHUP)
    wait_for("the good reload counted", lambda: reloads_now().get("success", 0) >= 1)
    check(reloads_now() == {"success": 1, "failure": 0, "unchanged": 0},
          f"reload counts after the good change: {reloads_now()}")
    check(d.poll() is None, f"the daemon exited ({d.returncode}) on a good reload")
    check("configuration reloaded" in sink_log.read_text(), "no 'configuration reloaded' line in the log")
    check_not_lower(before, env.scrape(admin), "a's /metrics across the rotation reload")
    second_b = produce_synthetic(env, broker.address, 3000, 4)
    env.wait_lag_zero(cfg, 180)
    check(broker.membership_changes(group) == settled,
          "the rotation reload changed the group's membership (its other members saw a rebalance): "
          f"{broker.membership_changes(group)[len(settled):]}")
    check(assigned(admin) == 3 and assigned(admin_b) == 1, "the assignment moved across the rotation reload")
    check("keeping the connection and the consumer group membership" in sink_log.read_text(),
          "a's log does not say it kept its Iggy connection and membership")

    # 2. The bad change: refused, logged at error, the daemon keeps running on the good config.
    bad = dict(good)
    bad["rotation"] = {"max_records": 0, "idle": "1s"}
    cfg.write_text(json.dumps(bad, indent=2))
    d.send_signal(signal.SIGHUP)
    wait_for("the bad reload counted", lambda: reloads_now().get("failure", 0) >= 1, 60)
    check(reloads_now() == {"success": 1, "failure": 1, "unchanged": 0},
          f"reload counts after the bad change: {reloads_now()}")
    text = sink_log.read_text()
    check(any(" error " in line and "rotation.max_records: must be > 0" in line for line in text.splitlines()),
          "the bad reload's problem is not logged at error")
    check(d.poll() is None, f"the daemon exited ({d.returncode}) after a bad reload")

    # 3. An iggy.* key changes: a new connection, which leaves the group and joins it again.
    third = produce_synthetic(env, broker.address, 3000, 4)
    polled = dict(good)
    polled["iggy"] = dict(good["iggy"], poll={"messages": 500, "interval": "50ms"})
    cfg.write_text(json.dumps(polled, indent=2))
    before = env.scrape(admin)
    check(metric_sum(before, "iggy_s3_sink_messages_total") > 0, "a wrote nothing before the iggy reload")
    d.send_signal(signal.SIGHUP)
    wait_for("the iggy reload counted", lambda: reloads_now().get("success", 0) >= 2)
    check_not_lower(before, env.scrape(admin), "a's /metrics across the iggy.poll.messages reload")

    def rejoined() -> bool:
        since = broker.membership_changes(group)[len(settled):]
        return any(" left " in line for line in since) and any(" joined " in line for line in since)

    wait_for("a left the group and joined it again", rejoined, 60)

    env.wait_lag_zero(cfg, 180)
    check(d.poll() is None and b.poll() is None, f"a daemon exited: a {d.returncode}, b {b.returncode}")
    end_a, end_b = env.scrape(admin), env.scrape(admin_b)
    check_not_lower(before, end_a, "a's /metrics at the end")
    check(env.stop(d) == 0, "daemon a did not exit 0 on SIGTERM")
    check(env.stop(b) == 0, "daemon b did not exit 0 on SIGTERM")

    counts = {}
    for batch in (first, second, second_b, third):
        for p, n in batch.items():
            counts[p] = counts.get(p, 0) + n
    landed = read_landed(env.download(bucket))
    verify_exactly_once(landed, counts, "app", "events")
    written = metric_sum(end_a, "iggy_s3_sink_messages_total") + metric_sum(end_b, "iggy_s3_sink_messages_total")
    check(written == landed.records,
          f"a's and b's messages_total add up to {written:.0f}, but {landed.records} records landed "
          "(a counter was reset by a reload?)")
    # The first reload closed a's open objects (each partition's from offset 0); every other
    # object follows max_records 250 (b's from the start, a's after the reload).
    big = [(k, len(o), o[0]) for k, o in landed.per_object if len(o) > 250]
    check(all(first_offset == 0 for _, _, first_offset in big) and len(big) <= 3,
          f"objects of more than 250 records other than the ones the first reload closed: {big}")
    check(big, "no object of more than 250 records: the first reload closed none of a's open objects")
    log(f"{landed.records} records in {landed.objects} objects over three reloads (one refused), 0 duplicates; "
        f"membership: {broker.membership_changes(group)}")


def admin_metrics(env: Env, rng) -> None:
    """/metrics mid-run passes `promtool check metrics`; after the run its counters equal what
    landed (objects in the bucket, messages produced, committed = head per partition) and the
    per-partition numbers equal what `lag` reads from the server."""
    broker = env.start_broker()
    bucket = bucket_name(env, rng, "metrics")
    first = produce_synthetic(env, broker.address, 12_000, 3)
    cfg = env.config(bucket, broker.address, rotation={"max_records": 2000, "idle": "2s"})
    d = env.start_daemon(cfg)
    admin = env.admin_address()
    second = produce_synthetic(env, broker.address, 12_000, 3)
    n = sum(first.values()) + sum(second.values())
    # Mid-run: some messages delivered, not all, and every family there (an offset is
    # committed just after its object is durable, so committed_offset may lag a scrape).
    families = [f"iggy_s3_sink_{f}" for f in (
        "messages_total", "committed_offset", "head_offset", "lag_messages", "upload_duration_seconds",
        "s3_requests_total", "s3_request_duration_seconds", "iggy_requests_total", "assigned_partitions", "build_info")]
    deadline = time.time() + 120
    text, delivered = "", 0.0
    while time.time() < deadline:
        status, text = env.http_get(admin, "/metrics")
        check(status == 200, f"/metrics answered {status}")
        delivered = metric_sum(parse_metrics(text), "iggy_s3_sink_messages_total")
        if delivered >= n or (delivered > 0 and all(f in text for f in families)):
            break
        time.sleep(0.05)
    check(0 < delivered < n, f"no mid-run scrape: messages_total went to {delivered} of {n} between two scrapes")
    mid = env.work / "mid-run.prom"
    mid.write_text(text)
    r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, f"promtool check metrics failed ({r.returncode}): {r.stdout}{r.stderr}")
    check("iggy_s3_sink_build_info" in text, "no build_info in the mid-run scrape")
    env.wait_lag_zero(cfg)
    m = env.scrape(admin)
    keys = [k for k in env.list_keys(bucket) if "/_iggy_s3_sink_probe" not in k and "probe" not in k.split("/")[-1]]
    labels = {"stream": "app", "topic": "events"}
    check(metric_sum(m, "iggy_s3_sink_messages_total", **labels) == n,
          f"messages_total {metric_sum(m, 'iggy_s3_sink_messages_total')} != produced {n}")
    check(metric_sum(m, "iggy_s3_sink_payload_bytes_total", **labels) == n * 200,
          f"payload_bytes_total {metric_sum(m, 'iggy_s3_sink_payload_bytes_total')} != {n} x 200 payload bytes")
    # The deprecated names (CHANGELOG.md) still carry the same numbers for one release.
    check(metric_sum(m, "iggy_s3_sink_bytes_in_total", **labels) == n * 200, "bytes_in_total != payload_bytes_total")
    check(metric_sum(m, "iggy_s3_sink_bytes_uploaded_total", **labels)
          == metric_sum(m, "iggy_s3_sink_uploaded_bytes_total", **labels) > 0,
          "bytes_uploaded_total != uploaded_bytes_total")
    check(metric_sum(m, "iggy_s3_sink_objects_total", **labels) == len(keys),
          f"objects_total {metric_sum(m, 'iggy_s3_sink_objects_total')} != {len(keys)} objects in the bucket")
    check(metric_sum(m, "iggy_s3_sink_adopted_objects_total") == 0, "objects adopted in a clean run")
    check(metric_sum(m, "iggy_s3_sink_s3_requests_total", operation="PutObject", code="200") >= len(keys),
          "fewer PutObject 200 answers than objects")
    check(metric_sum(m, "iggy_s3_sink_upload_duration_seconds_count") == len(keys), "upload_duration count != objects")
    check(metric_sum(m, "iggy_s3_sink_iggy_requests_total", command="PollMessages", code="0") > 0, "no polls counted")
    check(metric_sum(m, "iggy_s3_sink_open_objects") == 0 and metric_sum(m, "iggy_s3_sink_buffered_bytes") == 0,
          "objects still open after lag 0")
    rows = env.lag_json(cfg)
    check(len(rows) == 3, f"lag rows {rows}")
    for row in rows:
        pl = {"stream": "app", "topic": "events", "partition": str(row["partition"])}
        head = metric_sum(m, "iggy_s3_sink_head_offset", **pl)
        committed = metric_sum(m, "iggy_s3_sink_committed_offset", **pl)
        check(committed == head, f"partition {row['partition']}: committed {committed} != head {head}")
        check(head == row["head"] and committed == row["committed"],
              f"partition {row['partition']}: metrics head/committed {head}/{committed} != lag {row}")
        check(metric_sum(m, "iggy_s3_sink_lag_messages", **pl) == row["lag"] == 0, f"lag_messages != lag: {row}")
    check(metric_sum(m, "iggy_s3_sink_assigned_partitions", **labels) == 3, "assigned_partitions != 3")
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    log(f"{n} messages in {len(keys)} objects; metrics agree with the bucket and with lag")


def readyz(env: Env, rng) -> None:
    """/readyz: 503 naming the store while it is unreachable at start; 200 once running; 503
    naming Iggy while Iggy is down, 200 again when it is back; 503 naming the group and the
    missing source topic while it is missing (group not joined), 200 once it exists; 200 saying
    `reloading:` during a reload's drain. /healthz answers 200 throughout."""
    broker = env.start_broker()
    bucket = bucket_name(env, rng, "readyz")
    produce_synthetic(env, broker.address, 100, 1)
    # 1. Store unreachable at start (a port nobody listens on).
    dead = env.config(bucket, broker.address, endpoint=f"http://127.0.0.1:{free_port()}", name="dead",
                      grace="5s")
    d0 = env.start_daemon(dead, tag="dead")
    admin0 = env.admin_address("dead")
    check(env.http_get(admin0, "/healthz") == (200, "ok\n"), "/healthz not 200 while the store is probed")
    deadline = time.time() + 30
    status, body = env.http_get(admin0, "/readyz")
    while "store" not in body and time.time() < deadline:
        time.sleep(0.2)
        status, body = env.http_get(admin0, "/readyz")
    check(status == 503 and body.startswith("store:"), f"/readyz with the store unreachable: {status} {body!r}")
    check("iggy: not connected" in body, f"/readyz lists every unmet condition: {body!r}")
    # The image's HEALTHCHECK command: 0 for /healthz, 1 (with the reason) for /readyz while not
    # ready, 69 once nothing answers.
    def healthcheck(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([env.bin("iggy-s3-sink"), "healthcheck", "--timeout", "2s", *extra],
                              capture_output=True, text=True, timeout=30)
    hc = healthcheck("--url", f"http://{admin0}/healthz")
    check(hc.returncode == 0, f"healthcheck of /healthz: exit {hc.returncode}: {hc.stderr}")
    hc = healthcheck("--url", f"http://{admin0}/readyz")
    check(hc.returncode == 1 and "503" in hc.stderr and "store:" in hc.stderr,
          f"healthcheck of /readyz while not ready: exit {hc.returncode}: {hc.stderr}")
    # --ready with --url would be ignored (the URL names the path): a usage error, not a pass.
    hc = healthcheck("--url", f"http://{admin0}/healthz", "--ready")
    check(hc.returncode == 64 and "--url" in hc.stderr,
          f"healthcheck --url .../healthz --ready while not ready: exit {hc.returncode}: {hc.stderr}")
    check(env.stop(d0) == 0, "daemon waiting for the store did not exit 0 on SIGTERM")
    hc = healthcheck("--url", f"http://{admin0}/healthz")
    check(hc.returncode == 69, f"healthcheck with nothing listening: exit {hc.returncode}: {hc.stderr}")
    log(f"store unreachable: /readyz {status} {body.strip()!r}")

    # 2. Iggy down and back, through a proxy that can be switched off.
    host, port = broker.address.rsplit(":", 1)
    proxy = SwitchableProxy(host, int(port))
    cfg = env.config(bucket, f"127.0.0.1:{proxy.port}", grace="5s")
    d = env.start_daemon(cfg)
    admin = env.admin_address()

    def wait_status(want: int, needle: str, seconds: float) -> str:
        end = time.time() + seconds
        st, b = env.http_get(admin, "/readyz")
        while (st != want or needle not in b) and time.time() < end:
            time.sleep(0.2)
            st, b = env.http_get(admin, "/readyz")
        check(st == want and needle in b, f"/readyz: wanted {want} with {needle!r}, got {st} {b!r}")
        return b

    wait_status(200, "ready", 90)
    proxy.set_enabled(False)
    body = wait_status(503, "iggy: not connected", 60)
    check(env.http_get(admin, "/healthz")[0] == 200, "/healthz not 200 while Iggy is down")
    log(f"Iggy down: /readyz 503 {body.strip()!r}")
    proxy.set_enabled(True)
    wait_status(200, "ready", 90)
    env.stop(d)

    # 3. Not yet joined: the daemon starts (group mode) before its stream and topic exist, so
    # the group cannot be joined. The store is usable and Iggy connected: /readyz names only
    # the group. Once the topic is created the next try joins and /readyz answers 200.
    late = env.config(bucket, broker.address, stream="late", prefix="late", name="late", grace="5s",
                      rotation={"max_records": 1000, "idle": "1s"})
    d3 = env.start_daemon(late, tag="late")
    admin3 = env.admin_address("late")
    end = time.time() + 60
    status, body = 0, ""
    # The group line, then the topic that cannot be joined (docs/operations.md, Faults).
    want = "iggy: consumer group not joined\niggy: source unavailable: late/events: "
    while not body.startswith(want) and time.time() < end:
        time.sleep(0.2)
        check(d3.poll() is None, f"the daemon exited ({d3.returncode}) while its source topic was missing")
        status, body = env.http_get(admin3, "/readyz")
    check(status == 503 and body.startswith(want), f"/readyz before the group can be joined: {status} {body!r}")
    time.sleep(3)  # still not ready while the topic is missing, and still running
    status, body = env.http_get(admin3, "/readyz")
    check(d3.poll() is None, f"the daemon exited ({d3.returncode}) while its source topic was missing")
    check(status == 503 and body.startswith(want), f"/readyz while the topic is missing: {status} {body!r}")
    log(f"not yet joined: /readyz {status} {body.strip()!r}")
    counts = produce_synthetic(env, broker.address, 500, 2, stream="late")
    st3, b3 = 0, ""
    end = time.time() + 90
    while time.time() < end:
        st3, b3 = env.http_get(admin3, "/readyz")
        if st3 == 200:
            break
        time.sleep(0.2)
    check(st3 == 200 and b3 == "ready\n", f"/readyz after the topic was created: {st3} {b3!r}")
    env.wait_lag_zero(late, 120)
    check(env.stop(d3) == 0, "daemon did not exit 0 on SIGTERM")
    verify_exactly_once(read_landed(env.download(bucket, "late/")), counts, "late", "events")
    log(f"joined once the topic existed: /readyz 200, {sum(counts.values())} messages delivered")

    # 4. A reload drains the pipeline as a stop does, but is not one: /readyz stays 200 and says
    # `reloading:` (a reload must not get the pod unrouted or restarted; docs/operations.md
    # "Reloading the configuration"). The drain is held open by a store that answers every PUT
    # 503 SlowDown (single-consumer mode: uploads retry without end), so the assertion does not
    # race it. (A store that does not answer at all is an unmet condition of its own: `store:
    # unreachable: ...`, docs/operations.md "Faults".)
    store = FaultFront(env, env.rgw["RGW_ENDPOINT"])
    rl = env.config(bucket, broker.address, stream="rl", prefix="rl", name="rl", consumer="reload-ready",
                    grace="5s", endpoint=store.url,
                    rotation={"max_records": 100_000, "idle": "10m", "schedule": "0"})
    rl_counts = produce_synthetic(env, broker.address, 400, 1, stream="rl")
    d4 = env.start_daemon(rl, tag="rl")
    admin4 = env.admin_address("rl")
    end = time.time() + 90
    while time.time() < end and not (env.http_get(admin4, "/readyz")[0] == 200
                                     and metric_sum(env.scrape(admin4), "iggy_s3_sink_buffered_bytes") > 0):
        time.sleep(0.2)
    check(metric_sum(env.scrape(admin4), "iggy_s3_sink_buffered_bytes") > 0, "no open object before the reload")
    store.add("slow_down_503", method="PUT")
    changed = json.loads(rl.read_text())
    changed["rotation"] = {"max_records": 50, "idle": "1s"}
    rl.write_text(json.dumps(changed, indent=2))
    d4.send_signal(signal.SIGHUP)
    end = time.time() + 60
    st4, b4 = env.http_get(admin4, "/readyz")
    while "reloading" not in b4 and time.time() < end:
        check("stopping" not in b4, f"/readyz during a reload's drain says stopping: {st4} {b4!r}")
        time.sleep(0.1)
        st4, b4 = env.http_get(admin4, "/readyz")
    check(st4 == 200 and b4.startswith("ready\nreloading: "), f"/readyz during a reload's drain: {st4} {b4!r}")
    time.sleep(2)  # the drain is held by the store: still draining, still ready
    st4, b4 = env.http_get(admin4, "/readyz")
    check(st4 == 200 and "reloading: " in b4, f"/readyz while the reload's drain waits for the store: {st4} {b4!r}")
    log(f"reload draining: /readyz {st4} {b4.strip()!r}")
    store.clear()
    end = time.time() + 90
    while time.time() < end and env.http_get(admin4, "/readyz") != (200, "ready\n"):
        time.sleep(0.2)
    check(env.http_get(admin4, "/readyz") == (200, "ready\n"), "/readyz after the reload is not plain ready")
    reloads = {dict(k[1]).get("result"): v for k, v in env.scrape(admin4).items()
               if k[0] == "iggy_s3_sink_config_reloads_total"}
    check(reloads.get("success") == 1, f"the reload was not counted as a success: {reloads}")
    env.wait_lag_zero(rl, 120)
    check(env.stop(d4) == 0, "daemon did not exit 0 on SIGTERM after the reload")
    verify_exactly_once(read_landed(env.download(bucket, "rl/")), rl_counts, "rl", "events")


def systemd_notify(env: Env, rng) -> None:
    """With NOTIFY_SOCKET and WATCHDOG_USEC set (as systemd does for Type=notify, WatchdogSec=):
    READY=1 after the first assignment, WATCHDOG=1 at half the watchdog period, RELOADING=1
    and READY=1 again after a reload (of s3.*: its new store checked first) with STATUS= still
    counting from the start, STOPPING=1 and
    EXTEND_TIMEOUT_USEC at SIGTERM, then exit 0."""
    broker = env.start_broker()
    bucket = bucket_name(env, rng, "notify")
    produce_synthetic(env, broker.address, 1_000, 2)
    sock_path = str(env.work / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(sock_path)
    got: list[tuple[float, str]] = []
    stop = threading.Event()

    def receive() -> None:
        sock.settimeout(0.5)
        while not stop.is_set():
            try:
                data = sock.recv(4096)
            except socket.timeout:
                continue
            except OSError:
                return
            got.append((time.monotonic(), data.decode()))

    threading.Thread(target=receive, daemon=True).start()
    cfg = env.config(bucket, broker.address)
    watchdog_usec = 400_000  # WATCHDOG=1 expected every 200 ms
    d = env.start_daemon(cfg, extra_env={"NOTIFY_SOCKET": sock_path, "WATCHDOG_USEC": str(watchdog_usec)})
    deadline = time.time() + 90
    while not any("READY=1" in m for _, m in got) and time.time() < deadline:
        time.sleep(0.1)
    ready = [(t, m) for t, m in got if "READY=1" in m]
    check(len(ready) == 1, f"READY=1 not received exactly once: {got[:20]}")
    daemon_log = (env.work / "sink.log").read_text(errors="replace")
    check("partition assigned" in daemon_log, "READY=1 before the first assignment was logged")
    check("STATUS=running" in ready[0][1], f"READY=1 without a running STATUS: {ready[0][1]!r}")
    time.sleep(3)
    pings = [t for t, m in got if m == "WATCHDOG=1" and t >= ready[0][0]]
    check(len(pings) >= 8, f"{len(pings)} WATCHDOG=1 in 3 s (expected ~15 at 200 ms)")
    gaps = sorted(b - a for a, b in zip(pings, pings[1:]))
    median = gaps[len(gaps) // 2]
    check(0.1 <= median <= 0.6, f"median WATCHDOG=1 interval {median:.3f}s, expected ~0.2 s (half of WATCHDOG_USEC)")
    # STATUS= counts since the start: a reload (which rebuilds the pipeline) does not start
    # the numbers again at 0, as the metrics do not.
    env.wait_lag_zero(cfg, 120)
    delivered = "; 1000 messages in "
    deadline = time.time() + 30
    while not any(delivered in m for _, m in got) and time.time() < deadline:
        time.sleep(0.2)
    check(any(delivered in m for _, m in got), f"no STATUS= with the 1000 messages: {[m for _, m in got[-5:]]}")
    n_reload = len(got)
    # A change under s3.* (the new store is checked before the drain, then the pipeline
    # restarts): RELOADING=1, then READY=1 again. (An unchanged file does nothing at all.)
    changed = json.loads(cfg.read_text())
    changed["s3"]["retry"] = dict(changed["s3"]["retry"], attempts=9)
    cfg.write_text(json.dumps(changed, indent=2))
    d.send_signal(signal.SIGHUP)
    deadline = time.time() + 60
    while not any("READY=1" in m for _, m in got[n_reload:]) and time.time() < deadline:
        time.sleep(0.1)
    again = [m for _, m in got[n_reload:] if "READY=1" in m]
    check(again, f"no READY=1 after the reload: {[m for _, m in got[n_reload:]][:10]}")
    check(any("RELOADING=1" in m for _, m in got[n_reload:]), "no RELOADING=1 at the reload")
    check(delivered in again[0], f"STATUS= after the reload does not count from the start: {again[0]!r}")
    n_before = len(got)
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    time.sleep(0.5)
    stop.set()
    after = [m for _, m in got[n_before:]]
    stopping = [m for m in after if "STOPPING=1" in m]
    check(stopping, f"no STOPPING=1 after SIGTERM: {after[:10]}")
    check("EXTEND_TIMEOUT_USEC=" in stopping[0], f"STOPPING=1 without EXTEND_TIMEOUT_USEC: {stopping[0]!r}")
    sock.close()
    log(f"READY=1 after the first assignment; WATCHDOG=1 median {median * 1000:.0f} ms; {stopping[0]!r}")


def verify_bucket(env: Env, rng) -> None:
    """`verify` exits 0 on a clean bucket; names the gap when one object is deleted; names the
    duplicate offsets when an extra object overlaps another; exits 69 when Iggy or the store
    cannot be reached, 1 when either refuses the credentials."""
    broker = env.start_broker()
    bucket = bucket_name(env, rng, "verify")
    counts = produce_synthetic(env, broker.address, 9_000, 3)
    cfg = env.config(bucket, broker.address, rotation={"max_records": 1000, "idle": "2s"})
    d = env.start_daemon(cfg)
    env.wait_lag_zero(cfg)
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")

    def verify(config: Path, *extra: str, proxy_env: dict[str, str] | None = None) -> tuple[int, str]:
        r = subprocess.run([env.bin("iggy-s3-sink"), "verify", "--config", str(config), *extra],
                           env={**env.daemon_env(), **(proxy_env or {})}, capture_output=True, text=True, timeout=300)
        log(f"verify {' '.join(extra)} {proxy_env or ''} -> {r.returncode}\n{r.stdout}{r.stderr}")
        return r.returncode, r.stdout + r.stderr

    rc, out = verify(cfg)
    check(rc == 0, f"verify on a clean bucket exited {rc}")
    # verify reaches the store as `run` does, through the proxy in force: one on a closed port
    # fails the listing, and NO_PROXY for the endpoint's host goes direct again.
    dead = f"http://127.0.0.1:{free_port()}"
    rc, out = verify(cfg, proxy_env={"HTTP_PROXY": dead, "HTTPS_PROXY": dead, "NO_PROXY": ""})
    check(rc != 0 and "(proxy)" in out, f"verify ignored HTTP_PROXY: exit {rc}")
    rc, out = verify(cfg, proxy_env={"HTTP_PROXY": dead, "HTTPS_PROXY": dead, "NO_PROXY": "127.0.0.1"})
    check(rc == 0, f"verify with NO_PROXY=127.0.0.1 exited {rc}")
    rc, out = verify(cfg, "--json")
    doc = json.loads(out.splitlines()[0])
    check(rc == 0 and doc["ok"] and len(doc["partitions"]) == 3, f"verify --json: {out}")
    for part in doc["partitions"]:
        check(part["committed"] == part["highest"] == counts[part["partition"]] - 1 and part["lowest"] == 0,
              f"partition {part}: not 0..{counts[part['partition']] - 1} committed")

    keys = sorted(k for k in env.list_keys(bucket) if "/partition=0/" in k)
    check(len(keys) >= 3, f"too few objects in partition 0: {keys}")
    victim = keys[1]
    md = env.head_metadata(bucket, victim)
    env.aws("s3api", "delete-object", "--bucket", bucket, "--key", victim)
    rc, out = verify(cfg)
    want = f"app/events/0: gap: offsets {md['iggy-first-offset']}..{md['iggy-last-offset']} are in no object"
    check(rc == 1 and want in out, f"verify with {victim} deleted: exit {rc}, no {want!r}")
    rc, out = verify(cfg, "--stream", "app", "--topic", "events", "--partition", "1")
    check(rc == 0, "verify --partition 1 is not about partition 0's gap")
    # Flags naming nothing that exists: exit 1 naming it, not an empty "ok" over the whole bucket.
    rc, out = verify(cfg, "--stream", "nosuch", "--topic", "nosuch", "--partition", "0")
    check(rc == 1 and "topic nosuch/nosuch: no configured topic matches" in out and "ok:" not in out,
          f"verify --stream nosuch: exit {rc}, want 1 naming the topic")
    rc, out = verify(cfg, "--stream", "app", "--topic", "events", "--partition", "7")
    check(rc == 1 and "partition 7 of app/events not found on the server (the topic has 3)" in out
          and "objects listed" not in out, f"verify --partition 7 (of 3): exit {rc}, want 1 naming the partition")

    # Put the deleted range back as two objects, one of them overlapping the next object.
    first, last = int(md["iggy-first-offset"]), int(md["iggy-last-offset"])
    nxt = env.head_metadata(bucket, keys[2])
    body = env.work / "extra.jsonl"
    body.write_text("{}\n")
    stem = victim[: victim.rfind("+") + 1]
    ext = victim[victim.rfind("."):]
    for start, end in ((first, last), (last - 9, int(nxt["iggy-first-offset"]) + 4)):
        key = f"{stem}{start:020d}{ext}"
        env.aws("s3api", "put-object", "--bucket", bucket, "--key", key, "--body", str(body), "--metadata",
                f"iggy-first-offset={start},iggy-last-offset={end},iggy-count={end - start + 1}")
    rc, out = verify(cfg)
    check(rc == 1 and "duplicate offsets" in out, f"verify with an overlapping object: exit {rc}")
    check(f"duplicate offsets {last - 9}..{last}" in out, "the overlap with the restored object is not named")
    check(f"duplicate offsets {nxt['iggy-first-offset']}..{int(nxt['iggy-first-offset']) + 4}" in out,
          "the overlap with the next object is not named")

    # Unreachable: Iggy, then the store.
    no_iggy = env.config(bucket, f"127.0.0.1:{free_port()}", name="no-iggy")
    rc, out = verify(no_iggy)
    check(rc == 69 and "cannot reach Iggy" in out, f"verify with Iggy unreachable exited {rc}, want 69")
    no_store = env.config(bucket, broker.address, endpoint=f"http://127.0.0.1:{free_port()}", name="no-store",
                          retry={"attempts": 2, "base": "50ms", "cap": "100ms", "deadline": "3s"},
                          extra_s3={"timeouts": {"connect": "1s", "request": "2s"}})
    rc, out = verify(no_store)
    check(rc == 69 and "listing s3://" in out, f"verify with the store unreachable exited {rc}, want 69")

    # Refused: the service answered no. A runtime failure (1), not "unavailable" (69): trying
    # again later would not help (docs/operations.md "Exit codes").
    rc, out = verify(cfg, proxy_env={"IGGY_PASSWORD": "not-the-password"})
    check(rc == 1 and "refused" in out and "iggy.password" in out,
          f"verify with Iggy refusing the password exited {rc}, want 1 naming the refusal")
    r = subprocess.run([env.bin("iggy-s3-sink"), "lag", "--config", str(cfg)], capture_output=True, text=True,
                       timeout=120, env={**env.daemon_env(), "IGGY_PASSWORD": "not-the-password"})
    check(r.returncode == 1 and "refused" in r.stderr,
          f"lag with Iggy refusing the password exited {r.returncode}, want 1: {r.stderr}")
    rc, out = verify(cfg, proxy_env={"AWS_SECRET_ACCESS_KEY": "not-the-secret"})
    check(rc == 1 and "listing s3://" in out, f"verify with the store refusing the signature (403) exited {rc}, want 1")

CASES = {
    "admin_metrics": admin_metrics,
    "readyz": readyz,
    "systemd_notify": systemd_notify,
    "verify_bucket": verify_bucket,
    "exactly_once": exactly_once,
    "crash_restart": crash_restart,
    "idle_flush": idle_flush,
    "sigterm_flush": sigterm_flush,
    "s3_outage": s3_outage,
    "probe_interrupted": probe_interrupted,
    "group_failover": group_failover,
    "group_one_each": group_one_each,
    "stale_writer": stale_writer,
    "group_sigstop": group_sigstop,
    "invalid_config": invalid_config,
    "lag_missing": lag_missing,
    "config_reload": config_reload,
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
