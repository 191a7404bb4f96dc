#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Soak: three daemons (`iggy-s3-sink run`) in one consumer group over 3 topics x 10 partitions,
the Iggy test broker on a data directory (so it can be restarted), Ceph RGW (the `rgw` CTest
fixture) behind the S3 fault front (s3-fault-front), and a producer at a steady rate for the
whole run. At seeded random moments: `kill -9` and restart of a daemon, SIGSTOP of a daemon
past the group's heartbeat and rebalance timeout then SIGCONT, a burst of S3 faults (10% 503
SlowDown, connection resets, slow answers), and a broker restart (stop, start on the same data
directory and port).

At the end: every offset of every partition exactly once in the bucket (every object
downloaded and read), committed offsets = partition heads, no daemon exited but by the kills,
each exits 0 on SIGTERM, and each daemon's sampled RSS stayed within memory.max_buffered plus a
stated fixed overhead. Prints the fault counts and the figures.

The long version (CTest label soak.long) sets the number of messages and of each fault kind
(`--messages 1000000 --kills 100 --stops 100`), or runs without faults for hours and samples
each daemon's RSS every `--rss-every` seconds: the least-squares slope of RSS over the second
half of the production phase must stay within `--rss-slope-max` MiB per hour.

Usage: soak.py [--seed S] [--duration SECONDS] [--messages N] [--rate MSGS_PER_S] [--size BYTES]
               [--min-faults N] [--kills N] [--stops N] [--s3-bursts N] [--broker-restarts N]
               [--rss-every SECONDS] [--rss-csv PATH] [--rss-slope-max MIB_PER_HOUR] [--massif PATH]
(ISS_BINARY_DIR and RGW_DIR as for the e2e cases; tests/soak/README.md.)"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "integration" / "e2e"))
from harness import (Env, Failure, FaultFront, RssSampler, check, free_port, log, read_landed,  # noqa: E402
                     rss_kib, run_case, verify_exactly_once)

STREAM = "soak"
TOPICS = ["t0", "t1", "t2"]
PARTITIONS = 10
GROUP = "soak-sinks"
HEARTBEAT_S = 2.0   # broker --heartbeat: a member without a Ping for 2.4 s is dropped
REBALANCE_S = 3.0   # broker --rebalance-timeout: a pending hand-over is forced after 3 s
BUDGET_MIB = 16     # memory.max_buffered of each daemon
# Fixed overhead beyond the budget, stated, not tuned (as e2e.memory_backlog): code, libraries,
# TLS contexts, the Iggy and S3 connections, per-partition bookkeeping, allocator slack.
OVERHEAD_MIB = 40
KINDS = ("kill", "stop", "s3", "broker")
KIND_FLAGS = {"kill": "kills", "stop": "stops", "s3": "s3_bursts", "broker": "broker_restarts"}
SECONDS_PER_FAULT = 15  # per kind, unless set: a 300 s run has 20 of each


def planned_faults(args: argparse.Namespace) -> dict[str, int]:
    """Faults of each kind in the run: the kind's own flag, else max(--min-faults, duration / 15)."""
    n = max(args.min_faults, args.duration // SECONDS_PER_FAULT)
    return {k: n if getattr(args, KIND_FLAGS[k]) is None else getattr(args, KIND_FLAGS[k]) for k in KINDS}


def slope_per_hour(points: list[tuple[float, int]]) -> float:
    """Least-squares slope of (seconds, KiB) points, in MiB per hour."""
    n = len(points)
    mt = sum(t for t, _ in points) / n
    my = sum(y for _, y in points) / n
    var = sum((t - mt) ** 2 for t, _ in points)
    return sum((t - mt) * (y - my) for t, y in points) / var * 3600 / 1024 if var > 0 else 0.0


def massif_peak(path: Path) -> str:
    """The peak snapshot of a massif output file: useful heap and allocator overhead."""
    best, snap, cur = None, {}, None
    for line in path.read_text().splitlines():
        if line.startswith("snapshot="):
            cur = {}
        elif cur is not None and "=" in line and line.split("=", 1)[0] in ("time", "mem_heap_B", "mem_heap_extra_B"):
            k, v = line.split("=", 1)
            cur[k] = int(v)
            if len(cur) == 3:
                snap, cur = cur, None
                total = snap["mem_heap_B"] + snap["mem_heap_extra_B"]
                if best is None or total > best["mem_heap_B"] + best["mem_heap_extra_B"]:
                    best = snap
    check(best is not None, f"no snapshot in {path}")
    return (f"massif ({path}): peak heap {best['mem_heap_B'] / 1048576:.2f} MiB useful + "
            f"{best['mem_heap_extra_B'] / 1048576:.2f} MiB allocator overhead at {best['time'] / 1000:.0f} s "
            f"(ms_print {path} for the allocation sites)")


class RssTrend:
    """Samples each daemon's RSS (KiB) every `every` seconds from the start of production, and
    appends `seconds,daemon,rss_kib` lines to `csv` as it goes (so a run cut short still leaves
    its samples)."""

    def __init__(self, daemons: list["Daemon"], every: float, csv: Path | None):
        self.daemons, self.every, self.t0 = daemons, every, time.monotonic()
        self.points: dict[str, list[tuple[float, int]]] = {d.tag: [] for d in daemons}
        self.out = open(csv, "w", buffering=1) if csv else None
        if self.out:
            self.out.write("seconds,daemon,rss_kib\n")
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            t = time.monotonic() - self.t0
            for d in self.daemons:
                with d.state:
                    pid = d.proc.pid
                try:
                    kib = rss_kib(pid)
                except (FileNotFoundError, ProcessLookupError):
                    continue  # killed between the two looks
                self.points[d.tag].append((t, kib))
                if self.out:
                    self.out.write(f"{t:.1f},{d.tag},{kib}\n")

    def stop(self) -> None:
        self._stop.set()
        self._t.join()
        if self.out:
            self.out.close()

    def verdict(self, duration: float, max_mib_per_hour: float) -> str | None:
        """Logs per daemon the slope and mean RSS of each half of the production phase; returns
        what is wrong when a slope over the second half is above `max_mib_per_hour`."""
        half = duration / 2
        too_steep = []
        for tag, pts in self.points.items():
            first = [p for p in pts if p[0] < half]
            second = [p for p in pts if half <= p[0] <= duration]
            check(len(first) >= 3 and len(second) >= 3, f"daemon {tag}: too few RSS samples ({len(pts)})")
            s1, s2 = slope_per_hour(first), slope_per_hour(second)
            log(f"daemon {tag}: RSS slope {s1:+.3f} MiB/h over the first half ({len(first)} samples, mean "
                f"{sum(y for _, y in first) / len(first) / 1024:.1f} MiB), {s2:+.3f} MiB/h over the second half "
                f"({len(second)} samples, mean {sum(y for _, y in second) / len(second) / 1024:.1f} MiB, "
                f"min {min(y for _, y in second) / 1024:.1f}, max {max(y for _, y in second) / 1024:.1f}; "
                f"limit {max_mib_per_hour} MiB/h)")
            if s2 > max_mib_per_hour:
                too_steep.append(f"daemon {tag} {s2:+.3f} MiB/h")
        return (f"RSS grows over the second half of the run: {', '.join(too_steep)} (limit {max_mib_per_hour} "
                f"MiB/h)") if too_steep else None


def quiet_port() -> int:
    """A free port below the kernel's ephemeral range, for the broker: restarted on the same
    port, it must not find it taken as the local port of someone's outgoing connection (those
    come from the ephemeral range, and so do the port-0 listeners of tests running alongside)."""
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    if low <= 11000:
        return free_port()
    pick = random.SystemRandom()  # not the run's rng: the schedule must not depend on which ports are free
    for _ in range(500):
        port = pick.randrange(10000, low)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise Failure(f"no free port between 10000 and {low}")


@dataclass
class Daemon:
    """One of the three group members; its process is replaced when killed."""
    env: Env
    tag: str
    cfg: Path
    wrapper: list[str] | None = None  # valgrind --tool=massif ... for the heap profile (--massif)
    proc: subprocess.Popen | None = None
    sampler: RssSampler | None = None
    expected_exit: bool = False
    peak_kib: int = 0
    samples: int = 0
    starts: int = 0
    fault_lock: threading.Lock = field(default_factory=threading.Lock)  # one fault at a time
    state: threading.Lock = field(default_factory=threading.Lock)       # proc + expected_exit

    def start(self) -> None:
        p = self.env.start_daemon(self.cfg, tag=self.tag, prefix=self.wrapper)
        with self.state:
            self.proc, self.expected_exit = p, False
            self.sampler = RssSampler(p.pid, interval=0.2)
            self.starts += 1

    def _retire_sampler(self) -> None:
        if self.sampler is not None:
            self.sampler.stop()
            self.peak_kib = max(self.peak_kib, self.sampler.peak)
            self.samples += self.sampler.samples
            self.sampler = None

    def kill(self) -> None:
        with self.state:
            self.expected_exit = True
        self.proc.kill()
        self.proc.wait()
        self._retire_sampler()

    def peak(self) -> int:
        return max(self.peak_kib, self.sampler.peak if self.sampler else 0)

    def sigterm(self) -> int:
        with self.state:
            self.expected_exit = True
        rc = self.env.stop(self.proc, timeout=120)
        self._retire_sampler()
        return rc


class Soak:
    def __init__(self, env: Env, rng: random.Random, args: argparse.Namespace):
        self.env, self.rng, self.args = env, rng, args
        self.stop_faults = threading.Event()
        self.stop_producer = threading.Event()
        self.failures: list[str] = []
        self.counts = {k: 0 for k in KINDS}
        self.planned = planned_faults(args)
        self.counts_lock = threading.Lock()
        self.broker_lock = threading.Lock()
        self.s3_lock = threading.Lock()
        self.sent_ok = 0
        self.sent_unsure = 0   # messages of produce runs that failed (may or may not be in)
        self.produce_failures = 0

    # ---- set-up ---------------------------------------------------------------------
    def start_broker(self) -> None:
        """Starts (or restarts) the broker on self.address with the same data directory; a start
        that cannot bind yet is tried again for 30 s."""
        deadline = time.monotonic() + 30
        while True:
            try:
                self.broker = self.env.start_broker("--heartbeat", f"{HEARTBEAT_S}s", "--rebalance-timeout",
                                                    f"{REBALANCE_S}s", data=self.env.work / "broker-data",
                                                    listen=self.address)
                return
            except Failure:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

    def setup(self) -> None:
        env = self.env
        self.address = f"127.0.0.1:{quiet_port()}"
        self.start_broker()
        for topic in TOPICS:
            env.produce(self.address, STREAM, topic, "--create", str(PARTITIONS), "--count", "0", "--size", "1")
        self.bucket = env.make_bucket(f"soak-{self.args.seed:x}-{self.rng.randrange(1 << 30):x}")
        self.front = FaultFront(env, env.rgw["RGW_ENDPOINT"])
        self.daemons = []
        for tag in ("a", "b", "c"):
            cfg = env.config(self.bucket, self.address, stream=STREAM, topics=TOPICS, group=GROUP,
                             endpoint=self.front.url, name=tag, grace="60s",
                             rotation={"max_records": 300, "max_bytes": "1MiB", "idle": "2s"})
            c = json.loads(cfg.read_text())
            c["memory"] = {"max_buffered": f"{BUDGET_MIB}MiB"}
            cfg.write_text(json.dumps(c, indent=2))
            self.daemons.append(Daemon(env, tag, cfg))
        if self.args.massif:
            # Heap only (malloc/new), time in ms; restarts (kills) overwrite the file, so use with --kills 0.
            self.daemons[0].wrapper = ["valgrind", "--tool=massif", "--time-unit=ms",
                                       f"--massif-out-file={self.args.massif.resolve()}"]
        for d in self.daemons:
            d.start()

    # ---- the producer -----------------------------------------------------------------
    def producer(self) -> None:
        """Steady production for --duration seconds, and on until --messages are acknowledged."""
        t_end = time.monotonic() + self.args.duration
        per_topic = max(1, self.args.rate // len(TOPICS))
        batch = max(1, per_topic // PARTITIONS)  # --balanced: one partition per batch, in turn
        cmd = [self.env.bin("iggy-produce"), "--address", self.address, "--username", "iggy", "--password", "iggy",
               "--stream", STREAM, "--balanced", "--count", str(per_topic), "--size", str(self.args.size),
               "--batch", str(batch)]
        next_tick = time.monotonic()
        while not self.stop_producer.is_set() and (time.monotonic() < t_end or self.sent_ok < self.args.messages):
            for topic in TOPICS:
                try:
                    r = subprocess.run(cmd + ["--topic", topic], capture_output=True, text=True, timeout=60)
                    m = re.match(r"^sent (\d+) messages", r.stdout)
                    ok = r.returncode == 0 and m is not None
                except subprocess.TimeoutExpired:
                    ok, m = False, None
                if ok:
                    self.sent_ok += int(m.group(1))
                else:
                    self.produce_failures += 1
                    self.sent_unsure += per_topic
            next_tick += 1.0
            now = time.monotonic()
            if next_tick < now - 5:
                next_tick = now  # far behind (a broker restart): steady from here, no catch-up burst
            self.stop_producer.wait(max(0.0, next_tick - now))

    # ---- faults ---------------------------------------------------------------------
    def monitor(self) -> None:
        """Every daemon that exits without being killed is a failure."""
        while not self.stop_faults.wait(0.5):
            for d in self.daemons:
                with d.state:
                    p, expected = d.proc, d.expected_exit
                if p is not None and not expected and p.poll() is not None:
                    self.failures.append(f"daemon {d.tag} (pid {p.pid}) exited {p.returncode} without being killed")
                    with d.state:
                        d.expected_exit = True  # reported once

    def count(self, kind: str) -> None:
        with self.counts_lock:
            self.counts[kind] += 1

    def fault_kill(self, r: random.Random) -> None:
        d = self.daemons[r.randrange(len(self.daemons))]
        pause = r.uniform(0.2, 3.0)
        with d.fault_lock:
            d.kill()
            time.sleep(pause)
            d.start()
        self.count("kill")
        log(f"kill -9 daemon {d.tag}, restarted after {pause:.1f}s")

    def fault_stop(self, r: random.Random) -> None:
        d = self.daemons[r.randrange(len(self.daemons))]
        frozen = r.uniform(HEARTBEAT_S * 1.2 + REBALANCE_S - 1, HEARTBEAT_S * 1.2 + REBALANCE_S + 3)
        with d.fault_lock:
            d.proc.send_signal(signal.SIGSTOP)
            time.sleep(frozen)
            d.proc.send_signal(signal.SIGCONT)
        self.count("stop")
        log(f"SIGSTOP daemon {d.tag} for {frozen:.1f}s, then SIGCONT")

    def fault_s3(self, r: random.Random) -> None:
        window = r.uniform(3.0, 10.0)
        delay_ms = r.randrange(500, 3000)
        with self.s3_lock:
            self.front.add("slow_down_503", every=10)  # first: 10% of all requests
            self.front.add("reset_before_response", every=30)
            self.front.add("drop_response", every=30)  # forwarded, the answer lost: a retry gets 412
            self.front.add("reset_mid_request", method="PUT", every=10)
            self.front.add("delay", every=15, delay_ms=delay_ms)
            time.sleep(window)
            self.front.clear()
        self.count("s3")
        log(f"S3 fault burst for {window:.1f}s (503 1/10, resets, answers {delay_ms} ms slow)")

    def fault_broker(self, r: random.Random) -> None:
        pause = r.uniform(0.2, 3.0)
        with self.broker_lock:
            rc = self.env.stop(self.broker.proc, timeout=60)
            check(rc == 0, f"the broker exited {rc} on SIGTERM")
            time.sleep(pause)
            self.start_broker()
        self.count("broker")
        log(f"broker restarted on {self.address} after {pause:.1f}s down")

    def run_fault(self, kind: str, seed: int) -> None:
        try:
            getattr(self, f"fault_{kind}")(random.Random(seed))
        except Exception as e:  # noqa: BLE001 - a fault that could not be applied fails the run
            self.failures.append(f"{kind} fault: {e!r}")

    def faults(self) -> None:
        """Seeded schedule: per kind, its planned number of moments uniform over the run; each
        fault's own parameters come from its own seed, so the schedule does not depend on thread
        timing."""
        lo, hi = 8.0, max(9.0, self.args.duration - 15.0)
        events = sorted((self.rng.uniform(lo, hi), kind, self.rng.randrange(1 << 30)) for kind in KINDS
                        for _ in range(self.planned[kind]))
        t0 = time.monotonic()
        threads = []
        for at, kind, seed in events:
            if self.stop_faults.wait(max(0.0, t0 + at - time.monotonic())) or self.failures:
                break
            t = threading.Thread(target=self.run_fault, args=(kind, seed), daemon=True)
            t.start()
            threads.append(t)
        for t in threads:
            t.join()

    # ---- the run --------------------------------------------------------------------
    def run(self) -> None:
        env, args = self.env, self.args
        t_start = time.monotonic()
        self.setup()
        threading.Thread(target=self.monitor, daemon=True).start()
        prod = threading.Thread(target=self.producer, daemon=True)
        trend = RssTrend(self.daemons, args.rss_every, args.rss_csv) if args.rss_every else None
        prod.start()
        self.faults()  # returns when every scheduled fault is done
        while prod.is_alive():  # production ends by itself (--duration, --messages)
            prod.join(1.0)
            if self.failures:
                self.stop_producer.set()
        t_faults = time.monotonic() - t_start
        if trend:
            trend.stop()
        check(not self.failures, "; ".join(self.failures))
        log(f"faults and production done after {t_faults:.0f}s: {self.counts}, {self.sent_ok} messages "
            f"acknowledged; waiting for lag 0")
        rss_growth = trend.verdict(args.duration, args.rss_slope_max) if trend else None
        t_drain = time.monotonic()
        env.wait_lag_zero(self.daemons[0].cfg, 600)
        drain = time.monotonic() - t_drain
        self.stop_faults.set()
        time.sleep(0.6)  # the monitor's last look
        check(not self.failures, "; ".join(self.failures))
        peaks = {d.tag: d.peak() for d in self.daemons}
        for d in self.daemons:
            rc = d.sigterm()
            check(rc == 0, f"daemon {d.tag} exited {rc} on SIGTERM, expected 0")
        front = self.front.finish()
        rows = env.lag_json(self.daemons[0].cfg)
        check(len(rows) == len(TOPICS) * PARTITIONS, f"lag rows: {rows}")
        lag = sum(int(r["lag"]) for r in rows)
        check(lag == 0 and all(r["committed"] == r["head"] for r in rows), f"committed != head after the run: {rows}")
        messages = sum(int(r["messages"]) for r in rows)
        check(self.sent_ok <= messages <= self.sent_ok + self.sent_unsure,
              f"the broker holds {messages} messages; the producer had {self.sent_ok} acknowledged and "
              f"{self.sent_unsure} unsure")

        landed = read_landed(env.download(self.bucket))
        for topic in TOPICS:
            expected = {int(r["partition"]): int(r["messages"]) for r in rows if r["topic"] == topic}
            verify_exactly_once(landed, expected, STREAM, topic)
        stray = {k[:2] for k in landed.count} - {(STREAM, t) for t in TOPICS}
        check(not stray, f"records of unexpected streams/topics: {stray}")
        check(landed.records == messages, f"{landed.records} records in the bucket, {messages} messages")

        for kind in KINDS:
            check(self.counts[kind] >= self.planned[kind],
                  f"only {self.counts[kind]} faults of kind {kind} ({self.planned[kind]} planned)")
        check(self.sent_ok >= args.messages, f"only {self.sent_ok} messages acknowledged, {args.messages} wanted")
        check(rss_growth is None, rss_growth or "")
        budget_kib = (BUDGET_MIB + OVERHEAD_MIB) << 10
        logs = {d.tag: (env.work / f"{d.tag}.log").read_text(errors="replace") for d in self.daemons}
        retries = sum(t.count("retrying in") for t in logs.values())
        adopted = sum(t.count("object exists already (412)") for t in logs.values())
        # What a member says when the server dropped it (as e2e.group_sigstop checks).
        evicted = sum(len(re.findall(r" warn .*(ended the session|not a member|no longer counts)", t))
                      for t in logs.values())
        mb = sum(f.stat().st_size for f in env.work.glob("dl-*/**/*") if f.is_file()) / 1e6
        log("---- soak figures")
        log(f"seed {args.seed}, duration {args.duration}s (production and faults {t_faults:.0f}s, drain to lag 0 "
            f"{drain:.0f}s, whole run {time.monotonic() - t_start:.0f}s)")
        log(f"faults: {self.counts['kill']} kill -9, {self.counts['stop']} SIGSTOP/SIGCONT, "
            f"{self.counts['s3']} S3 fault bursts, {self.counts['broker']} broker restarts")
        log(f"fault front: {front['requests']} requests, injected {json.dumps(front['faults'], sort_keys=True)}")
        log(f"messages {messages} ({self.sent_ok} acknowledged to the producer, {self.produce_failures} produce "
            f"runs failed), {landed.objects} objects, {mb:.1f} MB in the bucket, 0 missing, 0 duplicates")
        log(f"lag at end {lag}; daemon starts {sum(d.starts for d in self.daemons)}; S3 retries seen {retries}; "
            f"412 adoptions {adopted}; evictions logged {evicted}")
        for d in self.daemons:
            log(f"daemon {d.tag}: peak RSS {peaks[d.tag] / 1024:.1f} MiB over {d.samples} samples "
                f"(limit {BUDGET_MIB} MiB budget + {OVERHEAD_MIB} MiB overhead)")
        if args.massif:
            log(massif_peak(args.massif))
        for d in self.daemons:
            if d.wrapper:
                continue  # under valgrind the process's RSS is the tool's, not the daemon's
            check(peaks[d.tag] <= budget_kib,
                  f"daemon {d.tag}: peak RSS {peaks[d.tag]} KiB above {BUDGET_MIB} + {OVERHEAD_MIB} MiB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=int(os.environ.get("SOAK_SEED", random.SystemRandom().randrange(1 << 30))))
    ap.add_argument("--duration", type=int, default=None,
                    help="seconds of production and faults (default SOAK_DURATION, else --messages / --rate, "
                         "else 300)")
    ap.add_argument("--messages", type=int, default=0,
                    help="production goes on past --duration until this many messages are acknowledged")
    ap.add_argument("--rate", type=int, default=300, help="messages per second, all topics together (default 300)")
    ap.add_argument("--size", type=int, default=512, help="bytes per message (default 512)")
    ap.add_argument("--min-faults", type=int, default=20,
                    help="faults of each kind not set by its own flag: max(N, duration / 15) (default 20)")
    ap.add_argument("--kills", type=int, help="kill -9 faults (default: as --min-faults)")
    ap.add_argument("--stops", type=int, help="SIGSTOP/SIGCONT faults (default: as --min-faults)")
    ap.add_argument("--s3-bursts", type=int, help="S3 fault bursts (default: as --min-faults)")
    ap.add_argument("--broker-restarts", type=int, help="broker restarts (default: as --min-faults)")
    ap.add_argument("--rss-every", type=float, default=0,
                    help="sample each daemon's RSS every SECONDS over the production phase and check its slope")
    ap.add_argument("--rss-csv", type=Path, help="write the RSS samples there (seconds,daemon,rss_kib)")
    ap.add_argument("--rss-slope-max", type=float, default=4.0,
                    help="MiB per hour: the most a daemon's RSS may grow over the second half of production "
                         "(least-squares slope; default 4)")
    ap.add_argument("--massif", type=Path,
                    help="run daemon a under valgrind --tool=massif, its profile written there (use with --kills 0)")
    args = ap.parse_args()
    if args.duration is None:
        args.duration = int(os.environ.get("SOAK_DURATION", "0")) or -(-args.messages // args.rate) or 300
    check(args.duration >= 30, "--duration: at least 30 s")
    check(args.massif is None or args.kills == 0, "--massif: a killed daemon's restart overwrites the profile; "
          "add --kills 0")
    check(args.rss_every == 0 or args.duration >= 20 * args.rss_every,
          "--rss-every: at least 20 samples over --duration are needed for a slope")
    os.environ["E2E_SEED"] = str(args.seed)
    log(f"soak: seed {args.seed}, duration {args.duration}s, {args.rate} msgs/s of {args.size} B, at least "
        f"{args.messages} messages, faults {planned_faults(args)} (rerun: soak.py --seed {args.seed} "
        f"{' '.join(sys.argv[1:])})")

    def soak(env: Env, rng: random.Random) -> None:
        Soak(env, rng, args).run()

    sys.argv = sys.argv[:1]
    run_case(soak)


if __name__ == "__main__":
    try:
        main()
    except Failure as e:
        log(f"FAIL: {e}")
        sys.exit(1)
