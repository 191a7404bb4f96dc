#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end cases of issue 40 (docs/operations.md, Faults): the source changes under a running
daemon (point 4), the spool directory fills up, turns read-only or goes (point 1), the store
refuses writes (point 3). Usage: fault_cases.py CASE   (ISS_BINARY_DIR and RGW_DIR from CTest)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from harness import (Env, FaultFront, check, log, metric_sum, parse_metrics, partition_counts, read_landed, run_case,
                     verify_exactly_once)


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


def topic_recreated_fail(env: Env, rng, what: str = "topic") -> None:
    """A source topic (`what` = "stream": its whole stream) deleted under a running single
    consumer: /readyz 503 naming it,
    source_unavailable 1, no tight loop, the daemon keeps running. Created again (offsets from 0):
    iggy.on_offset_reset: fail stops both partitions (/readyz names the offset reset,
    offset_reset_partitions 2) and nothing of the new topic lands; the old messages are in the
    bucket exactly once."""
    broker = env.start_broker()
    bucket = env.make_bucket(f"e2e-{what}-recreated-{rng.randrange(1 << 30):x}")
    counts = produce(env, broker.address, 2000, "--create", "2")
    cfg = env.config(bucket, broker.address, consumer="sink", rotation={"max_records": 500, "idle": "1s"})
    d = env.start_daemon(cfg)
    admin = env.admin_address()
    env.wait_lag_zero(cfg, 120)
    wait_readyz(env, admin, 200, ["ready"], 60)

    if what == "stream":
        r = subprocess.run([env.bin("iggy-produce"), "--address", broker.address, "--username", env.iggy_user,
                            "--password", env.iggy_password, "--stream", "app", "--delete-stream"],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, f"iggy-produce --delete-stream: {r.stdout} {r.stderr}")
    else:
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


def topic_recreated_group(env: Env, rng, what: str = "topic") -> None:
    """A source topic (`what` = "stream": its whole stream) deleted and created again under a
    running consumer-group member: the group went with it, and the member's polls of the new
    topic answer 5000 ConsumerGroupIdNotFound (Iggy 0.8, and the test broker). The member joins
    again (which creates the group) and /readyz goes back to 200, not 'source unavailable' for
    ever. The new topic's first offsets are taken as covered by the old objects at the same keys
    (docs/operations.md known gaps), so the bucket holds the old records exactly once."""
    broker = env.start_broker()
    bucket = env.make_bucket(f"e2e-{what}-recreated-group-{rng.randrange(1 << 30):x}")
    counts = produce(env, broker.address, 2000, "--create", "2")
    cfg = env.config(bucket, broker.address, rotation={"max_records": 500, "idle": "1s"})
    d = env.start_daemon(cfg)
    admin = env.admin_address()
    env.wait_lag_zero(cfg, 120)
    wait_readyz(env, admin, 200, ["ready"], 60)
    if what == "stream":
        r = subprocess.run([env.bin("iggy-produce"), "--address", broker.address, "--username", env.iggy_user,
                            "--password", env.iggy_password, "--stream", "app", "--delete-stream"],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, f"iggy-produce --delete-stream: {r.stdout} {r.stderr}")
    else:
        env.produce(broker.address, "app", "events", "--delete-topic")
    body = wait_readyz(env, admin, 503, ["iggy: source unavailable: app/events"], 60)
    log(f"{what} deleted: /readyz 503 {body.strip()!r}")
    new = produce(env, broker.address, 300, "--create", "2")
    body = wait_readyz(env, admin, 200, ["ready"], 60)
    wait_metric(env, admin, "iggy_s3_sink_source_unavailable", 0, 30, stream="app", topic="events")
    log(f"{what} created again with {new}: the member joined again, /readyz 200 {body.strip()!r}")
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    landed = read_landed(env.download(bucket))
    verify_exactly_once(landed, counts, "app", "events")
    check(landed.records == 2000, f"{landed.records} records in the bucket, wanted the 2000 old ones")


def topic_gone(env: Env, rng) -> None:
    """One of two source topics deleted under a running single consumer and left gone: /readyz
    503 naming it, source_unavailable 1 for it and 0 for the other, whose messages go on landing;
    tries at a backoff (no tight loop); the daemon keeps running. When it comes back (created
    again; nothing of it had been delivered, so no offset lies past its head) it is read from its
    first message without a restart: /readyz 200, source_unavailable 0. Both topics exactly once."""
    broker = env.start_broker()
    bucket = env.make_bucket(f"e2e-topic-gone-{rng.randrange(1 << 30):x}")
    counts = produce(env, broker.address, 1000, "--create", "2")
    empty = env.work / "empty.txt"
    empty.write_text("")
    env.produce(broker.address, "app", "audit", "--create", "1", "--partition", "0", str(empty))
    cfg = env.config(bucket, broker.address, consumer="sink", topics=["events", "audit"],
                     rotation={"max_records": 500, "idle": "1s"})
    events_only = env.config(bucket, broker.address, consumer="sink", name="events-only")
    d = env.start_daemon(cfg)
    admin = env.admin_address()
    env.wait_lag_zero(cfg, 120)
    wait_readyz(env, admin, 200, ["ready"], 60)

    env.produce(broker.address, "app", "audit", "--delete-topic")
    body = wait_readyz(env, admin, 503, ["iggy: source unavailable: app/audit"], 60)
    check("app/events" not in body, f"/readyz names the topic that is still there: {body!r}")
    wait_metric(env, admin, "iggy_s3_sink_source_unavailable", 1, 30, stream="app", topic="audit")
    wait_metric(env, admin, "iggy_s3_sink_source_unavailable", 0, 5, stream="app", topic="events")
    log(f"audit deleted: /readyz 503 {body.strip()!r}")
    logf = env.work / "sink.log"
    lines_before = logf.read_text(errors="replace").count("cannot be read")
    for p, n in produce(env, broker.address, 2000).items():  # the other topic goes on
        counts[p] = counts.get(p, 0) + n
    env.wait_lag_zero(events_only, 60)
    time.sleep(6)
    tries = logf.read_text(errors="replace").count("cannot be read") - lines_before
    # One line per try at a backoff from 1 s doubling (the topic and its partition): a loop
    # would log hundreds.
    check(tries <= 15, f"{tries} 'cannot be read' lines while audit was gone: a tight loop?")
    check(d.poll() is None, f"the daemon exited ({d.returncode}) while a source topic was gone")
    st, body = env.http_get(admin, "/readyz")
    check(st == 503 and "app/audit" in body, f"/readyz {st} {body!r} while audit is still gone")

    audit = env.produce(broker.address, "app", "audit", "--create", "1", "--count", "500", "--size", "200")
    audit_counts = partition_counts(audit)
    check(sum(audit_counts.values()) == 500, f"iggy-produce reported {audit_counts} for audit")
    start = time.time()
    # The bound: the next try, at most twice the time the topic was gone (backoff doubling).
    env.wait_lag_zero(cfg, 120)
    wait_readyz(env, admin, 200, ["ready"], 30)
    wait_metric(env, admin, "iggy_s3_sink_source_unavailable", 0, 10, stream="app", topic="audit")
    wait_metric(env, admin, "iggy_s3_sink_offset_reset_partitions", 0, 5, stream="app", topic="audit")
    log(f"audit back: read within {time.time() - start:.1f} s, {tries} tries logged while it was gone")
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    landed = read_landed(env.download(bucket))
    verify_exactly_once(landed, counts, "app", "events")
    verify_exactly_once(landed, audit_counts, "app", "audit")
    check(landed.records == 3500, f"{landed.records} records in the bucket, wanted 3500")
    log(f"{landed.records} records once: events through the outage of audit, audit once it was back")


def spool_errors(env: Env, admin: str) -> dict[str, float]:
    m = env.scrape(admin)
    return {r: metric_sum(m, "iggy_s3_sink_spool_errors_total", reason=r)
            for r in ("no_space", "read_only", "missing", "io_error")}


def wait_spool_error(env: Env, admin: str, reason: str, above: float, seconds: float) -> float:
    end = time.time() + seconds
    v = spool_errors(env, admin)[reason]
    while v <= above and time.time() < end:
        time.sleep(0.2)
        v = spool_errors(env, admin)[reason]
    check(v > above, f"iggy_s3_sink_spool_errors_total{{reason={reason!r}}} stayed at {v} for {seconds}s")
    return v


def sh(*cmd: str) -> None:
    r = subprocess.run(list(cmd), capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, f"{' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()}")


def big_objects(env: Env, bucket: str, part: int) -> int:
    """Objects in `bucket` larger than two parts (only the spool lets an object grow past about
    one part: an object closed instead of spooling holds a part and at most one run more)."""
    r = env.aws("s3api", "list-objects-v2", "--bucket", bucket, "--output", "json")
    return sum(1 for o in json.loads(r.stdout or "{}").get("Contents", []) if o["Size"] > 2 * part)


def spool_faults(env: Env, rng) -> None:
    """The spool directory (memory.spool_dir, a 48 MiB tmpfs of the test's own) fills up, is
    deleted, and turns read-only under a running single consumer. Each time /readyz answers 503
    `spool: REASON`, iggy_s3_sink_spool_errors_total counts the reason, and what is produced
    meanwhile lands (objects are closed at about s3.part_size where a part cannot be spooled:
    nothing waits for the disk, memory stays within memory.max_buffered). Once the directory is
    usable again /readyz is 200 and objects grow past a part again, without a restart. At the
    end every message is in the bucket exactly once."""
    part = 5 << 20
    mnt = env.work / "spool-mnt"
    mnt.mkdir()
    sh("mount", "-t", "tmpfs", "-o", "size=48m", "iggy-s3-sink-e2e-spool", str(mnt))
    mounted = [mnt]

    def unmount() -> None:
        for m in reversed(mounted):
            subprocess.run(["umount", "-l", str(m)], capture_output=True)
    env.cleanups.append(unmount)
    spool = mnt / "spool"
    spool.mkdir()
    broker = env.start_broker()
    bucket = env.make_bucket(f"e2e-spool-faults-{rng.randrange(1 << 30):x}")
    # Big objects (max_bytes 16 MiB > part_size 5 MiB) need the spool; conditional_writes off
    # lets RGW take them as multipart uploads (RGW ignores If-None-Match on Complete, which
    # would keep every object at one part).
    cfg_args = dict(consumer="sink", rotation={"max_records": 1000000, "max_bytes": "16MiB", "idle": "2s"},
                    extra_s3={"conditional_writes": "off"})
    cfg = env.config(bucket, broker.address, **cfg_args)
    doc = json.loads(cfg.read_text())
    # max_spool 256 MiB: a spare spool file up to 16 MiB (max_spool / 16) is reused, so one
    # file serves the objects one after another (spool.hpp) and the tmpfs holds it with room.
    doc["memory"] = {"max_buffered": "64MiB", "max_spool": "256MiB", "spool_dir": str(spool)}
    cfg.write_text(json.dumps(doc, indent=2))
    total: dict[int, int] = {}

    def produce_mib(mib: int) -> None:
        out = env.produce(broker.address, "app", "events", *(["--create", "1"] if not total else []),
                          "--partition", "0", "--count", str(mib * 128), "--size", "8000", "--batch", "128")
        for p, n in partition_counts(out).items():
            total[p] = total.get(p, 0) + n

    produce_mib(1)
    d = env.start_daemon(cfg)
    admin = env.admin_address()
    env.wait_lag_zero(cfg, 120)
    wait_readyz(env, admin, 200, ["ready"], 60)
    before = spool_errors(env, admin)
    check(sum(before.values()) == 0, f"spool errors before any fault: {before}")

    # 1. Full, before anything was spooled (no spare spool file yet): a filler leaves less than
    # one part free, so spool writes fail and objects are closed at about one part.
    filler = mnt / "filler"
    st = os.statvfs(mnt)
    sh("fallocate", "-l", str(st.f_bavail * st.f_frsize - (1 << 20)), str(filler))
    wait_spool_error(env, admin, "no_space", 0, 30)
    body = wait_readyz(env, admin, 503, ["spool: no_space"], 30)
    log(f"spool full: /readyz 503 {body.strip()!r}")
    produce_mib(12)  # enough for a 16 MiB object, which would need the spool
    env.wait_lag_zero(cfg, 180)  # lands while the disk is full: nothing waits for it
    check(big_objects(env, bucket, part) == 0, "an object grew past s3.part_size while the spool had no room")
    sink_log = (env.work / "sink.log").read_text(errors="replace")
    check("reason=spool_error" in sink_log, "no object was closed for a failed spool write while it had no room")
    full_errors = spool_errors(env, admin)["no_space"]
    log(f"spool full: {full_errors:.0f} no_space errors (failed writes and checks), no object past two parts")
    filler.unlink()
    wait_readyz(env, admin, 200, ["ready"], 30)
    produce_mib(12)  # the spool works again: a 16 MiB object grows past one part
    env.wait_lag_zero(cfg, 180)
    check(big_objects(env, bucket, part) >= 1, "no object grew past s3.part_size once the spool had room")

    # 2. Deleted: the directory goes (spool files are unlinked and open: nothing of them is lost).
    subprocess.run(["rm", "-rf", str(spool)], check=True)
    wait_spool_error(env, admin, "missing", 0, 30)
    body = wait_readyz(env, admin, 503, ["spool: missing"], 30)
    log(f"spool deleted: /readyz 503 {body.strip()!r}")
    produce_mib(4)
    env.wait_lag_zero(cfg, 180)
    spool.mkdir()
    wait_readyz(env, admin, 200, ["ready"], 30)

    # 3. Read-only: a read-only tmpfs mounted over the directory (the spool files the daemon
    # holds open stay on the one below, as they would after a remount).
    ro = spool
    sh("mount", "-t", "tmpfs", "-o", "ro,size=1m", "iggy-s3-sink-e2e-ro", str(ro))
    mounted.append(ro)
    wait_spool_error(env, admin, "read_only", 0, 30)
    body = wait_readyz(env, admin, 503, ["spool: read_only"], 30)
    log(f"spool read-only: /readyz 503 {body.strip()!r}")
    produce_mib(4)
    env.wait_lag_zero(cfg, 180)
    sh("umount", str(ro))
    mounted.remove(ro)
    wait_readyz(env, admin, 200, ["ready"], 30)

    # Back to normal without a restart: an object grows past a part again.
    big_before = big_objects(env, bucket, part)
    produce_mib(12)
    env.wait_lag_zero(cfg, 180)
    check(big_objects(env, bucket, part) > big_before, "objects did not grow past s3.part_size once the spool was back")
    m = env.scrape(admin)
    peak = metric_sum(m, "iggy_s3_sink_memory_buffered_peak_bytes")
    check(peak <= 64 << 20, f"memory_buffered_peak_bytes {peak} above memory.max_buffered (64 MiB)")
    errors = spool_errors(env, admin)
    check(d.poll() is None, f"the daemon exited ({d.returncode})")
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    landed = read_landed(env.download(bucket))
    verify_exactly_once(landed, total, "app", "events")
    check(landed.records == sum(total.values()), f"{landed.records} records, wanted {sum(total.values())}")
    log(f"{landed.records} records in {landed.objects} objects once; spool errors {errors}; peak memory {peak:.0f}")


def store_refuses(env: Env, rng) -> None:
    """The store starts refusing writes under a running consumer-group member: 403 AccessDenied
    to every PUT, then 400 KMS.DisabledException (the bucket's SSE-KMS key disabled), then
    nothing. While it refuses: no commit, no dead letter (delivery.on_bad_message is
    dead_letter), /readyz 503 naming the S3 error code, iggy_s3_sink_store_refusing 1 and
    store_refusals_total counting by code, and PUTs at a backoff (s3.retry.cap 2 s: a bounded
    count, not a storm). Once it accepts again the backlog lands by itself, exactly once."""
    broker = env.start_broker()
    bucket = env.make_bucket(f"e2e-store-refuses-{rng.randrange(1 << 30):x}")
    front = FaultFront(env, env.rgw["RGW_ENDPOINT"])
    counts = produce(env, broker.address, 2000, "--create", "2")
    empty = env.work / "empty.txt"
    empty.write_text("")
    env.produce(broker.address, "app", "dead", "--create", "1", "--partition", "0", str(empty))
    cfg = env.config(bucket, broker.address, endpoint=front.url, rotation={"max_records": 250, "idle": "1s"},
                     retry={"attempts": 3, "base": "200ms", "cap": "2s", "deadline": "15s"},
                     delivery={"on_bad_message": "dead_letter", "dead_letter": {"stream": "app", "topic": "dead"}})
    d = env.start_daemon(cfg)
    admin = env.admin_address()
    env.wait_lag_zero(cfg, 120)
    wait_readyz(env, admin, 200, ["ready"], 60)
    committed = {r["partition"]: r["committed"] for r in env.lag_json(cfg)}

    for action, code in (("access_denied_403", "AccessDenied"), ("kms_disabled_400", "KMS.DisabledException")):
        front.clear()
        front.add(action, method="PUT")
        more = produce(env, broker.address, 3000)
        for p, n in more.items():
            counts[p] = counts.get(p, 0) + n
        body = wait_readyz(env, admin, 503, [f"store: refusing writes: {code}"], 60)
        wait_metric(env, admin, "iggy_s3_sink_store_refusing", 1, 30)
        log(f"{code}: /readyz 503 {body.strip()!r}")
        faults_before = front.stats()["faults"].get(action, 0)
        time.sleep(12)
        refused = front.stats()["faults"].get(action, 0) - faults_before
        # Two partitions, each asked again after a wait growing from 200 ms to 2 s: about 6 to
        # 12 PUTs each in 12 s. Without the backoff a member re-reads and PUTs as fast as it can
        # (hundreds).
        check(0 < refused <= 40, f"{refused} PUTs refused in 12 s: wanted a few at a backoff, not a storm")
        rows = {r["partition"]: r["committed"] for r in env.lag_json(cfg)}
        check(rows == committed, f"offsets moved while the store refused every write: {committed} -> {rows}")
        m = env.scrape(admin)
        check(metric_sum(m, "iggy_s3_sink_store_refusals_total", code=code) >= refused,
              f"store_refusals_total{{code={code!r}}} did not count the refusals: {metric_sum(m, 'iggy_s3_sink_store_refusals_total', code=code)}")
        check(metric_sum(m, "iggy_s3_sink_dead_letters_total") == 0, "dead letters used for a refusing store")
        check(d.poll() is None, f"the daemon exited ({d.returncode}) while the store refused")
        log(f"{code}: {refused} PUTs refused in 12 s, offsets unchanged, no dead letter")

    front.clear()
    env.wait_lag_zero(cfg, 120)  # resumes by itself
    wait_readyz(env, admin, 200, ["ready"], 30)
    wait_metric(env, admin, "iggy_s3_sink_store_refusing", 0, 30)
    m = env.scrape(admin)
    check(metric_sum(m, "iggy_s3_sink_dead_letters_total") == 0, "dead letters used for a refusing store")
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    stats = front.finish()
    landed = read_landed(env.download(bucket))
    verify_exactly_once(landed, counts, "app", "events")
    check(landed.records == sum(counts.values()), f"{landed.records} records, wanted {sum(counts.values())}")
    dead = env.lag_json(env.config(bucket, broker.address, consumer="dl-check", topics=["dead"], name="dl"))
    check(sum(int(r["messages"]) for r in dead) == 0, f"the dead-letter topic holds messages: {dead}")
    log(f"{landed.records} records once after the store accepted again; front {stats}")


def admin_hostile(env: Env, rng) -> None:
    """The admin port under hostile clients (point 7) while the daemon delivers: 10 000 idle
    connections opened (admin.max_connections 64 by default; the client keeps at most 2 000
    of its own open, so its fd use stays bounded), then slow headers, a 1 MiB header and
    garbage. /metrics answers throughout, the server holds at most 64 connections, each abuse
    is counted by reason, and every message lands exactly once."""
    import threading

    import hostile_admin as ha
    broker = env.start_broker()
    bucket = env.make_bucket(f"e2e-admin-hostile-{rng.randrange(1 << 30):x}")
    counts = produce(env, broker.address, 2000, "--create", "2")
    cfg = env.config(bucket, broker.address, consumer="sink", rotation={"max_records": 500, "idle": "1s"})
    d = env.start_daemon(cfg)
    admin = env.admin_address()
    env.wait_lag_zero(cfg, 120)
    limit = ha.raise_nofile(4096)
    check(limit >= 2100, f"RLIMIT_NOFILE {limit}: the test needs 2 100 descriptors")

    made: list[int] = []
    # Paced at 2 500 a second, so the flood lasts long enough for a few dozen scrapes.
    flood = threading.Thread(target=lambda: made.append(ha.idle_connections(admin, 10_000, 2_000, None, 2500)))
    flood.start()
    scrapes = 0
    most = 0.0  # admin_connections seen during the flood
    while flood.is_alive() or scrapes == 0:
        # Every scrape must be answered (a fresh connection each time, as Prometheus makes
        # when its previous one was closed), with messages flowing meanwhile.
        st, body = env.http_get(admin, "/metrics", timeout=10)
        check(st == 200 and "iggy_s3_sink_admin_connections" in body, f"/metrics during the flood: {st}")
        most = max(most, metric_sum(parse_metrics(body), "iggy_s3_sink_admin_connections"))
        scrapes += 1
        if scrapes == 3:
            for p, n in produce(env, broker.address, 3000).items():
                counts[p] = counts.get(p, 0) + n
        time.sleep(0.1)
    flood.join()
    check(made and made[0] >= 9_000, f"only {made} of 10 000 idle connections were made")
    m = env.scrape(admin)
    accepted = metric_sum(m, "iggy_s3_sink_admin_connections_total")
    evicted = metric_sum(m, "iggy_s3_sink_admin_connections_closed_total", reason="max_connections")
    open_now = metric_sum(m, "iggy_s3_sink_admin_connections")
    log(f"{made[0]} idle connections, {scrapes} scrapes answered during them; accepted {accepted}, closed at "
        f"the limit {evicted}, open {open_now} (at most {most} seen during the flood)")
    check(accepted >= made[0], f"admin_connections_total {accepted} < {made[0]} connections made")
    check(evicted >= made[0] - 64, f"closed_total{{reason=max_connections}} {evicted}: the cap of 64 was not kept")
    check(open_now <= 64 and most <= 64, f"admin_connections {open_now} (during the flood up to {most}) above "
          "admin.max_connections 64")

    took = ha.slow_headers(admin, every=1.0, limit=60)
    check(took is not None, "a connection sending a header line a second was not closed within 60 s")
    log(f"slow headers: closed after {took:.1f} s (header_timeout 10 s)")
    got, closed = ha.exchange(admin, ha.BIG_HEADER)
    check(got.startswith(b"HTTP/1.1 431 ") and closed, f"1 MiB header: got {got[:80]!r}, closed {closed}")
    got, closed = ha.exchange(admin, ha.GARBAGE)
    check(got.startswith(b"HTTP/1.1 400 ") and closed, f"garbage: got {got[:80]!r}, closed {closed}")
    m = env.scrape(admin)
    for reason in ("header_timeout", "header_too_large", "bad_request"):
        n = metric_sum(m, "iggy_s3_sink_admin_connections_closed_total", reason=reason)
        check(n >= 1, f"admin_connections_closed_total{{reason={reason!r}}} is {n}")
    st, body = env.http_get(admin, "/readyz")
    check(st == 200, f"/readyz {st} {body!r} after the hostile clients")

    env.wait_lag_zero(cfg, 120)
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    landed = read_landed(env.download(bucket))
    verify_exactly_once(landed, counts, "app", "events")
    check(landed.records == 5000, f"{landed.records} records in the bucket, wanted 5000")
    log(f"{landed.records} records once; hostile admin clients counted by reason")


FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1"


def clock_steps(env: Env, rng) -> None:
    """The daemon's wall clock stepped 1 h forward, then 1 h back (libfaketime, LD_PRELOAD,
    the offset read from a file the test rewrites; the monotonic clock is left alone, as NTP
    leaves it) while it delivers to RGW, which refuses signatures more than 15 min off
    (RequestTimeTooSkewed). Each step: the client corrects by RGW's Date (s3_resigns_total
    grows, s3_clock_offset_seconds is the step), /readyz stays 200, and every message lands
    exactly once."""
    lib = os.environ.get("ISS_FAKETIME_LIB", FAKETIME_LIB)
    check(os.path.exists(lib), f"{lib} missing: install libfaketime (scripts/install-deps)")
    broker = env.start_broker()
    bucket = env.make_bucket(f"e2e-clock-steps-{rng.randrange(1 << 30):x}")
    counts = produce(env, broker.address, 2000, "--create", "2")
    offset_file = env.work / "faketime.rc"
    offset_file.write_text("+0\n")
    cfg = env.config(bucket, broker.address, consumer="sink", rotation={"max_records": 500, "idle": "1s"})
    d = env.start_daemon(cfg, extra_env={"LD_PRELOAD": lib, "FAKETIME_TIMESTAMP_FILE": str(offset_file),
                                         "FAKETIME_DONT_FAKE_MONOTONIC": "1", "FAKETIME_CACHE_DURATION": "1"})
    admin = env.admin_address()
    env.wait_lag_zero(cfg, 120)
    wait_readyz(env, admin, 200, ["ready"], 60)
    check(metric_sum(env.scrape(admin), "iggy_s3_sink_s3_resigns_total") == 0, "re-signs before any step")

    for step, want_resigns in (("+3600", 1), ("-3600", 2)):
        offset_file.write_text(step + "\n")
        time.sleep(2)  # past libfaketime's 1 s cache of the file
        for p, n in produce(env, broker.address, 2000).items():
            counts[p] = counts.get(p, 0) + n
        env.wait_lag_zero(cfg, 120)
        m = env.scrape(admin)
        resigns = metric_sum(m, "iggy_s3_sink_s3_resigns_total")
        offset = metric_sum(m, "iggy_s3_sink_s3_clock_offset_seconds")
        log(f"clock stepped {step} s: {resigns} re-signs so far, clock offset {offset:.1f} s")
        check(resigns >= want_resigns, f"after the step {step}: s3_resigns_total {resigns}, wanted >= {want_resigns}")
        check(abs(offset + int(step)) < 120, f"after the step {step}: s3_clock_offset_seconds {offset}")
        st, body = env.http_get(admin, "/readyz")
        check(st == 200, f"/readyz {st} {body!r} after the step {step}")
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    landed = read_landed(env.download(bucket))
    verify_exactly_once(landed, counts, "app", "events")
    check(landed.records == 6000, f"{landed.records} records in the bucket, wanted 6000")
    log(f"{landed.records} records once across a +1 h and a -1 h step of the daemon's clock")


CASES = {
    "clock_steps": clock_steps,
    "admin_hostile": admin_hostile,
    "partitions_added_single": lambda e, r: partitions_added(e, r, False),
    "partitions_added_group": lambda e, r: partitions_added(e, r, True),
    "topic_recreated_fail": topic_recreated_fail,
    "stream_recreated_fail": lambda e, r: topic_recreated_fail(e, r, "stream"),
    "topic_recreated_group": topic_recreated_group,
    "stream_recreated_group": lambda e, r: topic_recreated_group(e, r, "stream"),
    "topic_gone": topic_gone,
    "spool_faults": spool_faults,
    "store_refuses": store_refuses,
}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print(f"usage: fault_cases.py {{{'|'.join(CASES)}}}", file=sys.stderr)
        sys.exit(2)
    fn = CASES[sys.argv[1]]
    fn.__name__ = sys.argv[1]
    run_case(fn)
