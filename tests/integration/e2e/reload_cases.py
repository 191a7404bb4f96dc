#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Reloads that must not touch the running pipeline (docs/operations.md, "Reloading the
configuration"): a SIGHUP whose file means the same, changes only what applies in place, or
is refused must leave every open object open, make no request to the running store, and keep
/readyz at 200 throughout. Then a real change drains and restarts as before, exactly once.

Usage: reload_cases.py in_place   (ISS_BINARY_DIR and RGW_DIR from CTest)."""
from __future__ import annotations

import json
import signal
import socket
import sys
import threading
import time

from cases import bucket_name, produce_synthetic
from harness import Env, check, log, metric_sum, read_landed, run_case, verify_exactly_once


def wait_for(what: str, cond, seconds: float = 90) -> None:
    deadline = time.time() + seconds
    while not cond() and time.time() < deadline:
        time.sleep(0.1)
    check(cond(), f"{what}: not within {seconds:.0f} s")


def daemon_state(env: Env, admin: str) -> dict:
    """What the reload cases read from /metrics: open objects, objects uploaded, requests to
    the store, and config_reloads_total by result."""
    m = env.scrape(admin)
    reloads = {dict(k[1]).get("result"): v for k, v in m.items() if k[0] == "iggy_s3_sink_config_reloads_total"}
    return {"open": metric_sum(m, "iggy_s3_sink_open_objects"),
            "objects": metric_sum(m, "iggy_s3_sink_objects_total"),
            "s3_requests": metric_sum(m, "iggy_s3_sink_s3_requests_total"),
            "messages_buffered": metric_sum(m, "iggy_s3_sink_buffered_bytes") > 0,
            "reloads": reloads}


def start_holding(env: Env, rng, tag: str):
    """A broker with 600 messages over 2 partitions and one daemon (group mode) that holds them
    in open objects (rotation: 100 000 records or 10 minutes), once /readyz is 200 and both
    objects are open: (broker, bucket, counts, cfg, daemon, admin, sink_log)."""
    broker = env.start_broker()
    bucket = bucket_name(env, rng, tag)
    counts = produce_synthetic(env, broker.address, 600, 2)
    cfg = env.config(bucket, broker.address, grace="20s",
                     rotation={"max_records": 100_000, "idle": "10m", "schedule": "0"})
    d = env.start_daemon(cfg)
    admin = env.admin_address()
    wait_for("both partitions' objects open",
             lambda: env.http_get(admin, "/readyz")[0] == 200 and daemon_state(env, admin)["open"] == 2)
    return broker, bucket, counts, cfg, d, admin, env.work / "sink.log"


def in_place(env: Env, rng) -> None:
    """One daemon (group mode) holding open objects (rotation: 100 000 records or 10 minutes)
    gets, in turn:
    1. the same file re-written with other whitespace and a comment: counted `unchanged`;
    2. a change of shutdown.grace only: applied in place, counted `success`;
    3. s3.bucket changed to a bucket that does not exist: the new store is refused before
       anything is drained, counted `failure`;
    4. a file `check-config` refuses (rotation.max_records 0): counted `failure`.
    Over 1-4 /readyz (polled every 20 ms) never answers anything but 200, the objects stay
    open (open_objects, objects_total unchanged) and the running store sees no request
    (s3_requests_total unchanged). Then 5. a rotation change drains and restarts: counted
    `success`, and every message lands exactly once; 6. SIGTERM while a reload's new store
    (one that never answers) is checked stops the daemon at once with 0."""
    broker, bucket, counts, cfg, d, admin, sink_log = start_holding(env, rng, "reload-in-place")

    def state() -> dict:
        return daemon_state(env, admin)

    time.sleep(1)
    before = state()
    check(before["objects"] == 0 and before["messages_buffered"],
          f"expected 2 open objects and none uploaded before the reloads: {before}")
    check(before["reloads"] == {"success": 0, "failure": 0, "unchanged": 0}, f"reload counts at start: {before}")

    # /readyz polled throughout 1-4.
    not_ready: list[tuple[int, str]] = []
    polls = [0]
    stop = threading.Event()

    def poll_readyz() -> None:
        while not stop.is_set():
            try:
                status, body = env.http_get(admin, "/readyz", timeout=5)
            except OSError as e:  # the admin server must answer throughout
                status, body = 0, str(e)
            polls[0] += 1
            if status != 200:
                not_ready.append((status, body))
            time.sleep(0.02)

    poller = threading.Thread(target=poll_readyz, daemon=True)
    poller.start()
    original = json.loads(cfg.read_text())

    def reload_with(text: str, result: str, count: int) -> None:
        cfg.write_text(text)
        d.send_signal(signal.SIGHUP)
        wait_for(f"reload counted as {result} ({count})", lambda: state()["reloads"].get(result, 0) >= count, 60)
        time.sleep(1)  # anything a reload would set going (a drain, a probe) has started by now
        now = state()
        check(d.poll() is None, f"the daemon exited ({d.returncode}) after the {result} reload")
        check(now["open"] == before["open"] and now["objects"] == before["objects"],
              f"a {result} reload closed objects: open {before['open']} -> {now['open']}, "
              f"uploaded {before['objects']} -> {now['objects']}")
        check(now["s3_requests"] == before["s3_requests"],
              f"a {result} reload made requests to the running store: {before['s3_requests']} -> "
              f"{now['s3_requests']}")

    # 1. The same configuration, other whitespace and a comment.
    reload_with("# the same configuration, re-indented\n" + json.dumps(original, indent=6) + "\n\n", "unchanged", 1)
    check("SIGHUP: the configuration is unchanged: nothing to do" in sink_log.read_text(),
          "no 'configuration is unchanged' line in the log")
    # 2. Only shutdown.grace: in place.
    graced = dict(original, shutdown={"grace": "25s"})
    reload_with(json.dumps(graced, indent=2), "success", 1)
    check("configuration reloaded in place (changed: shutdown)" in sink_log.read_text(),
          "no 'reloaded in place' line in the log")
    # 3. A bucket that does not exist: the new store is refused before anything is drained.
    missing = dict(graced, s3=dict(graced["s3"], bucket=f"{bucket}-missing"))
    reload_with(json.dumps(missing, indent=2), "failure", 1)
    check(any(" error " in line and "the new s3 settings do not work" in line
              for line in sink_log.read_text().splitlines()),
          "the refused store is not logged at error")
    # 4. A file check-config refuses.
    refused = dict(graced, rotation={"max_records": 0, "idle": "10m", "schedule": "0"})
    reload_with(json.dumps(refused, indent=2), "failure", 2)
    stop.set()
    poller.join(timeout=10)
    check(polls[0] > 20, f"/readyz was polled only {polls[0]} times")
    check(not not_ready, f"/readyz answered other than 200 during reloads that change nothing: {not_ready[:5]}")
    check(state()["reloads"] == {"success": 1, "failure": 2, "unchanged": 1},
          f"reload counts after 1-4: {state()['reloads']}")
    log(f"4 reloads, {polls[0]} /readyz polls all 200, 2 objects still open, no request to the store")

    # 5. A real change: drains (the open objects are uploaded), restarts, consumes.
    changed = dict(graced, rotation={"max_records": 50, "idle": "1s"})
    cfg.write_text(json.dumps(changed, indent=2))
    d.send_signal(signal.SIGHUP)
    wait_for("the rotation reload counted", lambda: state()["reloads"].get("success", 0) >= 2)
    more = produce_synthetic(env, broker.address, 200, 2)
    env.wait_lag_zero(cfg, 120)
    wait_for("every object closed", lambda: state()["open"] == 0, 60)

    # 6. SIGTERM while a reload's new store is checked, a store that accepts connections and
    # never answers: the check is abandoned and the stop is an ordinary one (exit 0 at once,
    # not after the check's timeouts).
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(64)
    # (Its check would take at least 25 s: the longest bound group mode allows; a stop takes
    # about a second.)
    hung = dict(changed, s3=dict(changed["s3"], endpoint=f"http://127.0.0.1:{silent.getsockname()[1]}",
                                 timeouts={"request": "25s"},
                                 retry={"attempts": 5, "base": "100ms", "cap": "1s", "deadline": "25s"}))
    cfg.write_text(json.dumps(hung, indent=2))
    d.send_signal(signal.SIGHUP)
    wait_for("the silent store being checked",
             lambda: sink_log.read_text().count("checking the new store before draining") == 2, 30)
    time.sleep(1)
    check(env.http_get(admin, "/readyz")[0] == 200, "/readyz not 200 while a reload's new store is checked")
    started = time.time()
    rc = env.stop(d, timeout=120)
    took = time.time() - started
    silent.close()
    check(rc == 0 and took < 20, f"SIGTERM during the store check: exit {rc} after {took:.1f} s, want 0 at once")
    log(f"SIGTERM during a reload's store check: exit 0 after {took:.1f} s")
    check("the new s3 settings do not work" not in sink_log.read_text().split("checking the new store")[-1],
          "the abandoned check was counted as a refused store")
    for p, n in more.items():
        counts[p] = counts.get(p, 0) + n
    landed = read_landed(env.download(bucket))
    verify_exactly_once(landed, counts, "app", "events")
    big = [len(o) for _, o in landed.per_object if len(o) > 50]
    check(len(big) == 2, f"expected the 2 objects the rotation reload closed to hold > 50 records: {big}")
    log(f"{landed.records} records in {landed.objects} objects, exactly once")


def refused_during_drain(env: Env, rng) -> None:
    """A SIGHUP whose `s3.bucket` does not exist, arriving while a rotation reload's drain runs
    (the broker frozen with SIGSTOP, so the drain waits on the offset commit): its store is
    checked and refused (`failure`) and the rotation change waiting for the drain still applies
    once the broker resumes (`success`, one restart, not two); every message lands once in the
    original bucket."""
    broker, bucket, counts, cfg, d, admin, sink_log = start_holding(env, rng, "reload-drain")
    changed = dict(json.loads(cfg.read_text()), rotation={"max_records": 50, "idle": "1s"})
    broker.proc.send_signal(signal.SIGSTOP)
    try:
        cfg.write_text(json.dumps(changed, indent=2))
        d.send_signal(signal.SIGHUP)
        wait_for("the rotation reload's drain", lambda: "uploading and committing what is buffered, then restarting"
                 in sink_log.read_text(), 30)
        missing = dict(changed, s3=dict(changed["s3"], bucket=f"{bucket}-missing"))
        cfg.write_text(json.dumps(missing, indent=2))
        d.send_signal(signal.SIGHUP)
        wait_for("the missing bucket refused", lambda: daemon_state(env, admin)["reloads"].get("failure", 0) >= 1, 60)
        check("the new s3 settings do not work" in sink_log.read_text(), "no 'the new s3 settings do not work' line")
    finally:
        broker.proc.send_signal(signal.SIGCONT)
    wait_for("the rotation reload counted", lambda: daemon_state(env, admin)["reloads"].get("success", 0) >= 1)
    more = produce_synthetic(env, broker.address, 200, 2)
    env.wait_lag_zero(cfg, 120)
    wait_for("every object closed", lambda: daemon_state(env, admin)["open"] == 0, 60)
    reloads = {k: v for k, v in daemon_state(env, admin)["reloads"].items() if v}
    check(reloads == {"success": 1, "failure": 1}, f"reload counts: {reloads}, want success 1, failure 1")
    text = sink_log.read_text()
    check(text.index("the new s3 settings do not work") < text.index("restarting with the reloaded configuration"),
          "the missing bucket was not refused during the drain (the broker's freeze did not hold it)")
    restarts = sink_log.read_text().count("restarting with the reloaded configuration")
    check(restarts == 1, f"{restarts} pipeline restarts, want 1 (the rotation change only)")
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    for p, n in more.items():
        counts[p] = counts.get(p, 0) + n
    landed = read_landed(env.download(bucket))
    verify_exactly_once(landed, counts, "app", "events")
    small = [len(o) for _, o in landed.per_object if len(o) <= 50]
    check(len(small) >= 4, f"the 200 later records are not in objects of at most 50 (rotation change): {small}")
    log(f"refused store during the drain: failure 1, success 1, 1 restart; {landed.records} records once")


CASES = {"in_place": in_place, "refused_during_drain": refused_during_drain}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print(f"usage: reload_cases.py {{{'|'.join(CASES)}}}", file=sys.stderr)
        sys.exit(2)
    fn = CASES[sys.argv[1]]
    fn.__name__ = sys.argv[1]
    run_case(fn)
