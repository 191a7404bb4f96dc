#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The daemon against a real Iggy server that is already running (CTest label `real-server`).
Usage: real_server_cases.py CASE   (ISS_BINARY_DIR and RGW_DIR from CTest, as the e2e cases).

The server comes from the environment; nothing here builds or starts one:
  IGGY_TEST_SERVER=host:port     its TCP listener (unset: every case is skipped, exit 77)
  IGGY_TEST_USER, IGGY_TEST_PASSWORD   a user allowed to create and delete streams (default iggy/iggy)
  IGGY_TEST_PROTOCOL=0.8|0.9|0.10      the line it speaks (iggy.protocol of the daemon; default 0.8)
  IGGY_TEST_RESTART_CMD          shell command that restarts the server with its data and returns
                                 once it listens again (case server_restart; unset: skipped)
  IGGY_TEST_HEARTBEAT=5s         the server's [heartbeat] interval, enabled (case group_sigstop)
  IGGY_TEST_TOKEN                a personal access token of the user (case pat_login)
  IGGY_TEST_TLS_SERVER=host:port, IGGY_TEST_TLS_CA=file[, IGGY_TEST_TLS_NAME]  its TLS listener
                                 (case tls)
Each case creates its own stream (named iss-rs-<case>-<seed>) with the project's client
(iggy-produce), checks what landed in a fresh RGW bucket, and deletes the stream at the end.
A case whose settings are missing prints `SKIP: why` and exits 77 (CTest SKIP_RETURN_CODE).
"""
from __future__ import annotations

import os
import random
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass

from harness import Env, Failure, check, log, read_landed, run_case, verify_exactly_once

SKIP = 77


def skip(case: str, why: str) -> None:
    print(f"SKIP real_server.{case}: {why}", flush=True)
    sys.exit(SKIP)


def duration_s(text: str) -> float:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m)", text.strip())
    if not m:
        raise ValueError(f"not a duration (e.g. 5s): {text!r}")
    return float(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60}[m.group(2)]


@dataclass
class IggyServer:
    address: str
    user: str
    password: str
    protocol: str

    @staticmethod
    def from_env() -> "IggyServer | None":
        address = os.environ.get("IGGY_TEST_SERVER", "")
        if not address:
            return None
        protocol = os.environ.get("IGGY_TEST_PROTOCOL", "0.8")
        if protocol not in ("0.8", "0.9", "0.10"):
            raise SystemExit(f"IGGY_TEST_PROTOCOL={protocol!r}: want 0.8, 0.9 or 0.10")
        return IggyServer(address, os.environ.get("IGGY_TEST_USER", "iggy"),
                          os.environ.get("IGGY_TEST_PASSWORD", "iggy"), protocol)


SERVER: IggyServer | None = None


def prepare(env: Env, rng, case: str, address: str | None = None, *client_args: str) -> tuple[str, str]:
    """Points the harness at the server (`address`, default IGGY_TEST_SERVER; `client_args`
    extra iggy-produce options such as TLS); returns (stream name, bucket)."""
    env.iggy_user, env.iggy_password = SERVER.user, SERVER.password
    env.produce_protocol = SERVER.protocol
    os.environ["ISS_E2E_PROTOCOL"] = SERVER.protocol  # iggy.protocol of every daemon config
    tag = f"{case.replace('_', '-')}-{rng.randrange(1 << 30):x}"
    stream = f"iss-rs-{tag}"
    env.cleanups.append(lambda: delete_stream(env, stream, address or SERVER.address, *client_args))
    log(f"server {SERVER.address} (protocol {SERVER.protocol}, user {SERVER.user}), stream {stream}")
    return stream, env.make_bucket(f"rs-{tag}")


def delete_stream(env: Env, stream: str, address: str, *client_args: str) -> None:
    r = subprocess.run([env.bin("iggy-produce"), "--address", address, "--username", SERVER.user,
                        "--password", SERVER.password, "--protocol", SERVER.protocol, "--stream", stream,
                        "--delete-stream", *client_args], capture_output=True, text=True, timeout=120)
    log(f"cleanup: {r.stdout.strip()}{r.stderr.strip()} (exit {r.returncode})")
    check(r.returncode == 0, f"could not delete stream {stream}")


def produce(env: Env, stream: str, n: int, partitions: int, size: int = 200, address: str | None = None,
            *client_args: str) -> dict[int, int]:
    out = env.produce(address or SERVER.address, stream, "events", "--create", str(partitions), "--balanced",
                      "--header", "source=e2e", "--count", str(n), "--size", str(size), "--batch", "500",
                      *client_args)
    counts: dict[int, int] = {}
    for m in re.finditer(r"partition (\d+): (\d+)", out):
        counts[int(m.group(1))] = counts.get(int(m.group(1)), 0) + int(m.group(2))
    check(sum(counts.values()) == n, f"iggy-produce reported {counts} for {n} messages:\n{out}")
    return counts


def land_and_check(env: Env, bucket: str, stream: str, counts: dict[int, int]) -> None:
    landed = read_landed(env.download(bucket))
    verify_exactly_once(landed, counts, stream, "events")
    log(f"{landed.records} records in {landed.objects} objects, each offset exactly once")


def wait_listening(address: str, seconds: float) -> None:
    host, port = address.rsplit(":", 1)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection((host.strip("[]"), int(port)), timeout=2).close()
            return
        except OSError:
            time.sleep(0.2)
    raise Failure(f"the server at {address} does not accept connections {seconds:.0f}s after the restart")


# ---- the cases ---------------------------------------------------------------------------

def exactly_once(env: Env, rng) -> None:
    """A plain run: 20 000 messages over 3 partitions, each offset exactly once in the bucket,
    the group's offsets committed to the end (lag 0)."""
    stream, bucket = prepare(env, rng, "exactly_once")
    counts = produce(env, stream, 20_000, 3)
    cfg = env.config(bucket, SERVER.address, stream=stream, rotation={"max_records": 4000, "idle": "2s"})
    d = env.start_daemon(cfg)
    env.wait_lag_zero(cfg)
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    land_and_check(env, bucket, stream, counts)
    rows = env.lag_json(cfg)
    check(rows and all(int(r["lag"]) == 0 for r in rows), f"lag not zero after the run: {rows}")


def sigkill6(env: Env, rng) -> None:
    """6 SIGKILLs of the daemon at seeded random moments during a run of 100 000 messages,
    restarted each time: each offset exactly once."""
    stream, bucket = prepare(env, rng, "sigkill6")
    counts = produce(env, stream, 100_000, 4, size=120)
    cfg = env.config(bucket, SERVER.address, stream=stream, consumer="s3-sink-crash",
                     rotation={"max_records": 7000, "max_bytes": "2MiB", "idle": "1s"})
    for i in range(6):
        d = env.start_daemon(cfg)
        delay = rng.uniform(0.5, 4.0)
        time.sleep(delay)
        rc = d.poll()
        d.kill()
        d.wait()
        log(f"kill {i + 1}/6 after {delay:.2f}s (exited on its own: {rc})")
    d = env.start_daemon(cfg)
    env.wait_lag_zero(cfg, 400)
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    land_and_check(env, bucket, stream, counts)


def wait_logged(env: Env, name: str, text: str, seconds: float, failure: str) -> None:
    """Waits until the daemon log `name` (in the work dir) contains `text`; fails with `failure`."""
    deadline = time.monotonic() + seconds
    path = env.work / name
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text(errors="replace"):
            return
        time.sleep(0.2)
    check(False, failure)


def server_restart(env: Env, rng) -> None:
    """The server restarts (IGGY_TEST_RESTART_CMD) in the middle of a run: the daemon reconnects,
    logs in again and finishes; each offset exactly once."""
    cmd = os.environ.get("IGGY_TEST_RESTART_CMD", "")
    if not cmd:
        skip("server_restart", "IGGY_TEST_RESTART_CMD is not set (a command that restarts the server)")
    stream, bucket = prepare(env, rng, "server_restart")
    counts = produce(env, stream, 60_000, 3)
    cfg = env.config(bucket, SERVER.address, stream=stream, rotation={"max_records": 3000, "idle": "1s"})
    d = env.start_daemon(cfg)
    # In the middle of the run: once the daemon is logged in and has uploaded (its start-up, the
    # S3 probe included, takes seconds on a loaded machine: a fixed sleep restarted the server
    # before the daemon's first login).
    wait_logged(env, "sink.log", "object uploaded", 120, "the daemon uploaded nothing within 120 s")
    time.sleep(rng.uniform(0.0, 1.0))
    log(f"restarting the server: {cmd}")
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, f"IGGY_TEST_RESTART_CMD exited {r.returncode}: {r.stdout}{r.stderr}")
    wait_listening(SERVER.address, 120)
    more = produce(env, stream, 5_000, 3)
    env.wait_lag_zero(cfg, 300)
    check(d.poll() is None, "the daemon exited during the server restart")
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    land_and_check(env, bucket, stream, {p: counts.get(p, 0) + more.get(p, 0) for p in set(counts) | set(more)})
    text = (env.work / "sink.log").read_text(errors="replace")
    check(text.count("connected and logged in") >= 2, "the daemon did not log in again after the restart")


def group_sigstop(env: Env, rng) -> None:
    """Three daemons in one consumer group; one is frozen (SIGSTOP) past the server's heartbeat,
    the others take its partitions, it resumes (SIGCONT), comes back and is the last one left:
    every message lands exactly once."""
    hb = os.environ.get("IGGY_TEST_HEARTBEAT", "")
    if not hb:
        skip("group_sigstop", "IGGY_TEST_HEARTBEAT is not set (the server's [heartbeat] interval, enabled)")
    freeze = 2.5 * duration_s(hb) + 2
    stream, bucket = prepare(env, rng, "group_sigstop")
    first = produce(env, stream, 9_000, 6)
    rot = {"max_records": 1500, "idle": "1s"}
    cfgs = {n: env.config(bucket, SERVER.address, stream=stream, group="sinks", rotation=rot, name=n) for n in "abc"}
    procs = {n: env.start_daemon(cfgs[n], tag=n) for n in "abc"}
    wait_logged(env, "a.log", "partition assigned", 90, "daemon a got no partition within 90 s")
    time.sleep(rng.uniform(0.2, 2.0))
    procs["a"].send_signal(signal.SIGSTOP)
    log(f"froze daemon a for {freeze:.0f} s (server heartbeat {hb})")
    time.sleep(freeze)
    procs["a"].send_signal(signal.SIGCONT)
    log("resumed daemon a")
    second = produce(env, stream, 30, 6)
    env.wait_lag_zero(cfgs["a"], 180)
    for n in "bc":
        check(env.stop(procs[n]) == 0, f"daemon {n} did not exit 0 on SIGTERM")
    log("stopped daemons b and c (they left the group): only a can deliver from here")
    third = produce(env, stream, 3_000, 6)
    env.wait_lag_zero(cfgs["a"], 180)
    check(procs["a"].poll() is None, "daemon a exited")
    check(env.stop(procs["a"]) == 0, "daemon a did not exit 0 on SIGTERM")
    parts = set(first) | set(second) | set(third)
    land_and_check(env, bucket, stream, {p: first.get(p, 0) + second.get(p, 0) + third.get(p, 0) for p in parts})


def pat_login(env: Env, rng) -> None:
    """The daemon logs in with a personal access token (iggy.token) and delivers a run."""
    token = os.environ.get("IGGY_TEST_TOKEN", "")
    if not token:
        skip("pat_login", "IGGY_TEST_TOKEN is not set (a personal access token of the test user)")
    stream, bucket = prepare(env, rng, "pat_login")
    counts = produce(env, stream, 5_000, 2)
    env.daemon_password = False  # iggy.password (env IGGY_PASSWORD) and iggy.token exclude each other
    cfg = env.config(bucket, SERVER.address, stream=stream, extra_iggy={"token": token})
    d = env.start_daemon(cfg)
    env.wait_lag_zero(cfg)
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    land_and_check(env, bucket, stream, counts)
    check(token not in (env.work / "sink.log").read_text(errors="replace"), "the token appears in the log")


def tls(env: Env, rng) -> None:
    """The daemon reaches the server over TLS (iggy.tls, the server's certificate checked
    against IGGY_TEST_TLS_CA) and delivers a run; the stream is made and removed over TLS too
    (a server's TCP listener is either TLS or plain)."""
    address, ca = os.environ.get("IGGY_TEST_TLS_SERVER", ""), os.environ.get("IGGY_TEST_TLS_CA", "")
    if not address or not ca:
        skip("tls", "IGGY_TEST_TLS_SERVER and IGGY_TEST_TLS_CA are not both set (the server's TLS listener)")
    tls_cfg, tls_args = {"enabled": True, "ca_file": ca}, ["--tls-ca", ca]
    if os.environ.get("IGGY_TEST_TLS_NAME"):
        tls_cfg["server_name"] = os.environ["IGGY_TEST_TLS_NAME"]
        tls_args += ["--tls-name", os.environ["IGGY_TEST_TLS_NAME"]]
    stream, bucket = prepare(env, rng, "tls", address, *tls_args)
    counts = produce(env, stream, 5_000, 2, 200, address, *tls_args)
    cfg = env.config(bucket, address, stream=stream, extra_iggy={"tls": tls_cfg})
    d = env.start_daemon(cfg)
    env.wait_lag_zero(cfg)
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    land_and_check(env, bucket, stream, counts)
    check(re.search(r"connected and logged in.*tls=true", (env.work / "sink.log").read_text()),
          "the daemon did not log a TLS login")


def tools(env: Env, rng) -> None:
    """`probe` passes; `lag --wait-zero` waits for the daemon and exits 0; `verify` finds every
    offset exactly once, then names the gap when an object is deleted."""
    stream, bucket = prepare(env, rng, "tools")
    counts = produce(env, stream, 6_000, 2)
    cfg = env.config(bucket, SERVER.address, stream=stream, rotation={"max_records": 1000, "idle": "2s"})
    r = subprocess.run([env.bin("iggy-s3-sink"), "probe", "--config", str(cfg)], env=env.daemon_env(),
                       capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, f"probe exited {r.returncode}: {r.stdout}{r.stderr}")
    rc, out, err = env.lag(cfg, "--json")
    check(rc == 0, f"lag --json before the run exited {rc}: {out}{err}")
    d = env.start_daemon(cfg)
    env.wait_lag_zero(cfg)
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")

    def verify(*extra: str) -> tuple[int, str]:
        v = subprocess.run([env.bin("iggy-s3-sink"), "verify", "--config", str(cfg), *extra],
                           env=env.daemon_env(), capture_output=True, text=True, timeout=300)
        log(f"verify {' '.join(extra)} -> {v.returncode}\n{v.stdout}{v.stderr}")
        return v.returncode, v.stdout + v.stderr

    rc, out = verify()
    check(rc == 0, f"verify on a clean bucket exited {rc}")
    keys = sorted(k for k in env.list_keys(bucket) if "/partition=0/" in k)
    check(len(keys) >= 3, f"too few objects in partition 0: {keys}")
    md = env.head_metadata(bucket, keys[1])  # a middle one: before the lowest is no gap
    env.aws("s3api", "delete-object", "--bucket", bucket, "--key", keys[1])
    rc, out = verify()
    want = f"{stream}/events/0: gap: offsets {md['iggy-first-offset']}..{md['iggy-last-offset']} are in no object"
    check(rc == 1 and want in out, f"verify with {keys[1]} deleted: exit {rc}, no {want!r}")


def protocol_auto(env: Env, rng) -> None:
    """`iggy.protocol: auto` finds the line the server speaks (IGGY_TEST_PROTOCOL) and delivers."""
    stream, bucket = prepare(env, rng, "protocol_auto")
    counts = produce(env, stream, 3_000, 2)
    cfg = env.config(bucket, SERVER.address, stream=stream, extra_iggy={"protocol": "auto"})
    d = env.start_daemon(cfg)
    env.wait_lag_zero(cfg)
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    land_and_check(env, bucket, stream, counts)
    want = {"0.8": "0.8 (G1)", "0.9": "0.9 (G2", "0.10": "0.10 (G2"}[SERVER.protocol]
    logins = re.findall(r"connected and logged in.*", (env.work / "sink.log").read_text(errors="replace"))
    check(logins and all(f"protocol={want}" in x or f'protocol="{want}' in x for x in logins),
          f"auto did not pick {want}: {logins[:3]}")


CASES = {f.__name__: f for f in (exactly_once, sigkill6, server_restart, group_sigstop, pat_login, tls, tools,
                                  protocol_auto)}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print(f"usage: real_server_cases.py {{{'|'.join(CASES)}}}", file=sys.stderr)
        sys.exit(2)
    SERVER = IggyServer.from_env()
    if SERVER is None:
        skip(sys.argv[1], "IGGY_TEST_SERVER is not set (host:port of a running Iggy server; "
                          "see tests/integration/e2e/real_server_cases.py)")
    run_case(CASES[sys.argv[1]])
