#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end throughput of iggy-s3-sink: broker -> daemon -> S3.

    tests/bench/e2e_bench.py --build build [--messages 500000] [--size 1024] [--partitions 3]
                             [--targets discard,discard-https,rgw] [--rgw-env DIR/env] [--repeat 1]
                             [--cells targets | FORMAT:COMPRESSION[:LEVEL],...] [--workers 1,all]
                             [--payload records|synthetic] [--profile DIR] [--scrape-ms 100] [--keep]

Starts the Iggy test broker (in memory) and preloads it once with N JSON messages of exactly
SIZE bytes (seeded web-request records, sent with `iggy-produce FILE`, balanced over P
partitions; `--payload synthetic` uses `iggy-produce --count N --size SIZE` instead). Then, for
each cell (target x format x compression), it runs `iggy-s3-sink run` with a fresh consumer
group (so every cell reads all N messages from offset 0) and a fresh prefix, and measures from
the daemon's start until `iggy-s3-sink lag --wait-zero` reports every partition committed:
messages/s, MB/s (payload bytes, 10^6), daemon CPU seconds (user+sys from /proc/PID/stat just
before SIGTERM) and peak RSS (VmHWM from /proc/PID/status), next to the CPU the broker and
the S3 server (discard-s3, or RGW's mon+osd+radosgw by their pid files) spent meanwhile.
Targets:

  discard  tests/bench/discard-s3 (keeps keys and metadata, drops bodies): the daemon's cost
  discard-https  the same over TLS (a self-signed certificate made with openssl, trusted through
           s3.tls.ca_file): with the defaults (s3.payload_signing auto, s3.checksum auto) the
           daemon sends UNSIGNED-PAYLOAD and x-amz-checksum-crc32c, which discard-s3 checks,
           as AWS users get
  rgw      a real Ceph RGW: `scripts/rgw start` in a temporary directory (stopped at the end),
           or the one described by --rgw-env

--iggy-server HOST:PORT (default $IGGY_TEST_SERVER; --iggy-protocol, --iggy-user,
--iggy-password, defaults from IGGY_TEST_PROTOCOL, IGGY_TEST_USER, IGGY_TEST_PASSWORD) runs
against an Iggy server that is already running instead of the test broker: the input goes to
a stream of the bench's own there (bench-<time>, deleted at the end).

--peer-cmd CMD [--peer-config TEMPLATE] [--peer-name NAME] (repeatable, paired in order) runs
another program after the daemon's cells, per target, on the same input, server and store:
its CPU seconds per GB, messages/s and peak RSS (from wait4) go into a table next to the
daemon's first cell (placeholders and rules: tests/bench/e2e_peers.py; templates for Iggy's
connector runtime with its s3_sink and a Node SDK consumer: tests/bench/peers/).
--kills N then SIGKILLs the daemon and each peer N times (each when its consumer group has
committed the next of N seeded targets spread over the input, --seed), restarts it, lets it finish to lag 0, and counts the missing and duplicated
messages in a fresh RGW bucket. --dry-run fills the peers' templates and prints their command
lines without starting anything.

--hostile runs a hostile admin client while each cell runs (idle connections, slow headers,
1 MiB headers, garbage: tests/integration/e2e/hostile_admin.py) and logs what it sent.

--scrape-ms MS scrapes /metrics every MS ms while each cell runs and reports the daemon CPU
the scrapes cost (CPU per scrape measured on the idle daemon after the cell, times the number
of scrapes, over the cell's daemon CPU).

Prints a markdown table on stdout (progress on stderr): wall-clock MB/s, daemon CPU seconds per
GB and MB/s per daemon core (payload MB over daemon CPU seconds), with the 1-minute load
average at the start of each cell: the machine is shared, so read the numbers next to it.
--profile DIR records each cell with `perf record` and keeps `perf report --stdio` of it.
Only the standard library is used.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from e2e_peers import Contestant, Peer, kill_run, parse_peers, run_peer_cell

ROOT = Path(__file__).resolve().parents[2]
AWS = "/usr/bin/aws"
CLK_TCK = os.sysconf("SC_CLK_TCK")


def log(msg: str) -> None:
    print(f"[e2e-bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def read_env_file(path: Path) -> dict[str, str]:
    env = {}
    for line in path.read_text().splitlines():
        m = re.match(r"^([A-Z0-9_]+)=(.*)$", line.strip())
        if m:
            env[m.group(1)] = m.group(2).strip("'\"")
    return env


WORDS = ("user session cart checkout search product page image thumbnail account login logout order "
         "payment invoice shipping address review rating comment profile settings token refresh api v1 v2 "
         "catalog item price currency discount coupon inventory warehouse region eu us west east mobile "
         "desktop tablet android ios chrome firefox safari edge cache hit miss upstream timeout retry").split()
AGENTS = ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36",
          "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148",
          "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0",
          "okhttp/4.12.0", "curl/7.88.1", "python-requests/2.31.0")


def write_payloads(path: Path, count: int, size: int, seed: int = 8) -> None:
    """`count` JSON web-request records of exactly `size` bytes, one per line (seeded): field
    names repeat, values vary (ids, hex tokens, latencies, words), so gzip sees roughly what it
    would see on access logs (about 4:1), unlike a padded constant."""
    import random
    rng = random.Random(seed)
    t = 1_767_225_600_000
    with open(path, "w") as out:
        for i in range(count):
            t += rng.randint(0, 3)
            rec = {"seq": i, "ts_ms": t, "method": rng.choice(("GET", "GET", "GET", "POST", "PUT", "DELETE")),
                   "path": f"/{rng.choice(WORDS)}/{rng.randint(1, 999999)}/{rng.choice(WORDS)}",
                   "status": rng.choice((200, 200, 200, 200, 201, 204, 301, 304, 400, 404, 500, 503)),
                   "latency_ms": round(rng.expovariate(1 / 40), 3), "bytes": rng.randint(0, 200_000),
                   "client": f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
                   "user_agent": rng.choice(AGENTS), "request_id": f"{rng.getrandbits(128):032x}",
                   "trace": {"trace_id": f"{rng.getrandbits(128):032x}", "span_id": f"{rng.getrandbits(64):016x}"},
                   "user": {"id": rng.randint(1, 10_000_000), "tier": rng.choice(("free", "pro", "team"))},
                   "note": ""}
            line = json.dumps(rec, separators=(",", ":"))
            words = []
            room = size - len(line)
            while room > 0:
                w = rng.choice(WORDS)
                if len(w) + 1 > room:
                    w = "x" * (room - 1) if room > 1 else ""
                    if not w:
                        break
                words.append(w)
                room -= len(w) + 1
            rec["note"] = " ".join(words)
            line = json.dumps(rec, separators=(",", ":"))
            line += " " * max(0, size - len(line))  # JSON allows trailing whitespace
            out.write(line + "\n")


def loadavg() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def cpu_seconds(pid: int) -> tuple[float, float]:
    """(user, sys) CPU seconds of a live process (/proc/PID/stat fields 14 and 15)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2:].split()
    return int(fields[11]) / CLK_TCK, int(fields[12]) / CLK_TCK


def runqueue_wait_s(pid: int) -> float:
    """Seconds the process's threads spent runnable but waiting for a CPU (schedstat field 2):
    on a shared machine, wall time = CPU + this + time blocked on I/O."""
    total = 0
    for f in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        try:
            total += int(f.read_text().split()[1])
        except (FileNotFoundError, IndexError, ValueError):
            pass
    return total / 1e9


def vm_hwm_kib(pid: int) -> int:
    m = re.search(r"^VmHWM:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text(), re.M)
    return int(m.group(1)) if m else 0


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.build = Path(args.build).resolve()
        self.work = Path(tempfile.mkdtemp(prefix="e2e-bench-", dir=args.work_dir))
        self.procs: list[subprocess.Popen] = []
        self.rgw_dir: Path | None = None
        self.rgw: dict[str, str] | None = None
        self.stream = "bench"  # on an external server (--iggy-server): bench-<time>, deleted at the end
        self.broker_pids: list[int] = []
        self.delete_stream = False
        self.counts: dict[int, int] = {}  # partition id -> messages produced

    def bin(self, name: str) -> str:
        for sub in ("daemon", "tests/support", "tests/bench"):
            cand = self.build / sub / name
            if cand.exists():
                return str(cand)
        sys.exit(f"{name} not built under {self.build} (cmake --build {self.build})")

    def start_server(self, args: list[str], logname: str) -> tuple[subprocess.Popen, str]:
        p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=open(self.work / logname, "w"), text=True)
        self.procs.append(p)
        line = p.stdout.readline().strip()
        m = re.match(r"^listening on (\S+):(\d+)$", line)
        if not m:
            sys.exit(f"{args[0]}: first line was {line!r}")
        return p, f"{m.group(1)}:{m.group(2)}"

    # ---- setup --------------------------------------------------------------------------
    def start_broker_and_preload(self) -> None:
        a = self.args
        if a.iggy_server:
            # An Iggy server that is already running: a stream of our own, deleted at the end;
            # its CPU by the pid listening on its port (when ss can tell).
            self.broker_addr, self.stream = a.iggy_server, f"bench-{int(time.time())}"
            self.broker_pids = listening_pids(a.iggy_server)
            self.delete_stream = True
            log(f"Iggy server {a.iggy_server} (protocol {a.iggy_protocol or '0.8'}, pid {self.broker_pids or 'unknown'})")
        else:
            self.broker, self.broker_addr = self.start_server(
                [self.bin("iggy-test-broker"), "--listen", "127.0.0.1:0"], "broker.log")
            self.broker_pids = [self.broker.pid]
            # The broker's stdout must keep draining.
            threading.Thread(target=lambda: [None for _ in self.broker.stdout], daemon=True).start()
        log(f"broker on {self.broker_addr}; producing {self.args.messages} x {self.args.size} B "
            f"over {self.args.partitions} partitions")
        t0 = time.monotonic()
        source = ["--count", str(self.args.messages), "--size", str(self.args.size)]
        if self.args.payload == "records":
            source = [str(self.work / "payloads.jsonl")]
            write_payloads(Path(source[0]), self.args.messages, self.args.size)
        r = subprocess.run(self.produce_cmd() + ["--create", str(self.args.partitions), "--balanced", "--batch",
                                                 "1000", *source], capture_output=True, text=True, timeout=1800)
        if r.returncode != 0:
            sys.exit(f"iggy-produce failed ({r.returncode}): {r.stdout}{r.stderr}")
        # "... partition 0: 66667, partition 1: ..." (the topic's counters before and after)
        self.counts = {int(m.group(1)): int(m.group(2)) for m in re.finditer(r"partition (\d+): (\d+)", r.stdout)}
        log(f"preloaded in {time.monotonic() - t0:.1f} s")

    def produce_cmd(self, topic: bool = True) -> list[str]:
        a = self.args
        return ([self.bin("iggy-produce"), "--address", self.broker_addr, "--username", a.iggy_user, "--password",
                 a.iggy_password, "--stream", self.stream] + (["--topic", "events"] if topic else [])
                + (["--protocol", a.iggy_protocol] if a.iggy_protocol else []))

    def aws(self, *args: str) -> subprocess.CompletedProcess:
        """The AWS CLI against the RGW in use; exits naming the command when it fails."""
        r = subprocess.run([AWS, "--endpoint-url", self.rgw["RGW_ENDPOINT"], *args], env=self.aws_env(),
                           capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            sys.exit(f"aws {' '.join(args)} failed: {r.stderr}")
        return r

    def other_pids(self, target: str) -> dict[str, list[int]]:
        """The pids of the S3 server (discard-s3, or RGW's mon+osd+radosgw by their pid files)
        and of the Iggy broker or server: their CPU is reported next to each run's."""
        others: dict = {}
        if target.startswith("discard"):
            others["s3"] = [self.discard.pid]
        elif self.rgw and self.rgw.get("RGW_DIR"):
            others["s3"] = [int(f.read_text().strip()) for f in Path(self.rgw["RGW_DIR"]).glob("run/*.pid")]
        if self.broker_pids:
            others["broker"] = self.broker_pids
        return others

    @staticmethod
    def cpu_of(pids: list[int]) -> float:
        total = 0.0
        for pid in pids:
            try:
                total += sum(cpu_seconds(pid))
            except (FileNotFoundError, ProcessLookupError, ValueError):
                pass
        return total

    def peer_values(self, cell: str, endpoint: str, bucket: str) -> dict[str, str]:
        """The placeholders of a peer's templates (tests/bench/e2e_peers.py) for one run."""
        env = self.aws_env()
        return placeholder_values(self.args, self.broker_addr, self.stream, cell, endpoint, bucket,
                                  env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"])

    def start_discard(self, https: bool = False) -> str:
        args = [self.bin("discard-s3")]
        if https:
            self.make_tls()
            args += ["--tls-cert", str(self.tls_dir / "cert.pem"), "--tls-key", str(self.tls_dir / "key.pem")]
        self.discard, addr = self.start_server(args, "discard.log")
        return f"{'https' if https else 'http'}://{addr}"

    def start_rgw(self) -> None:
        if self.args.rgw_env:
            self.rgw = read_env_file(Path(self.args.rgw_env))
            return
        self.rgw_dir = self.work / "rgw"
        log("starting RGW (scripts/rgw start)")
        r = subprocess.run([str(ROOT / "scripts" / "rgw"), "start", str(self.rgw_dir)],
                           capture_output=True, text=True, timeout=900)
        if r.returncode != 0:
            sys.exit(f"scripts/rgw start failed: {r.stderr[-3000:]}")
        self.rgw = read_env_file(self.rgw_dir / "env")

    def aws_env(self) -> dict[str, str]:
        e = dict(os.environ)
        if self.rgw:
            e.update(AWS_ACCESS_KEY_ID=self.rgw["RGW_ACCESS_KEY"], AWS_SECRET_ACCESS_KEY=self.rgw["RGW_SECRET_KEY"])
        else:
            e.update(AWS_ACCESS_KEY_ID="DISCARDACCESSKEY0001", AWS_SECRET_ACCESS_KEY="discard-secret")
        e.update(AWS_DEFAULT_REGION="us-east-1", AWS_EC2_METADATA_DISABLED="true", AWS_PAGER="",
                 IGGY_PASSWORD=self.args.iggy_password)
        return e

    # ---- one cell -----------------------------------------------------------------------
    def config(self, cell: str, endpoint: str, bucket: str, c: "Cell") -> Path:
        fmt_cfg: dict = {"type": c.fmt, "compression": c.compression}
        if c.level:
            fmt_cfg["compression_level"] = c.level
        if c.fmt == "raw":
            fmt_cfg["separator"] = "\n"
        cfg = {
            "iggy": {"address": self.broker_addr, "username": self.args.iggy_user, "password": "${IGGY_PASSWORD}",
                     "consumer_group": f"bench-{cell}"},
            "sources": [{"stream": self.stream, "topics": ["events"], "partitions": "all"}],
            "s3": {"bucket": bucket, "region": "us-east-1", "endpoint": endpoint, "prefix": f"bench/{cell}",
                   "access_key_id": "${AWS_ACCESS_KEY_ID}", "secret_access_key": "${AWS_SECRET_ACCESS_KEY}"},
            "format": fmt_cfg,
            "rotation": {"max_records": self.args.max_records, "idle": "1s"},
            "log": {"level": "info", "format": "text"},
            "admin": {"listen": "127.0.0.1:0"},  # the bound port is read from the log (--scrape-ms)
        }
        if self.args.iggy_protocol:
            cfg["iggy"]["protocol"] = self.args.iggy_protocol
        if endpoint.startswith("https://"):
            cfg["s3"]["tls"] = {"ca_file": str(self.tls_dir / "cert.pem")}
        if c.workers is not None:
            cfg["performance"] = {"workers": c.workers}
        for item in list(c.sets) + list(self.args.set or []):
            path, _, value = item.partition("=")
            try:
                v = json.loads(value)
            except json.JSONDecodeError:
                v = value
            node = cfg
            *parents, leaf = path.split(".")
            for k in parents:
                node = node.setdefault(k, {})
            node[leaf] = v
        path = self.work / f"{cell}.yaml"
        path.write_text(json.dumps(cfg, indent=2))  # JSON is YAML
        return path

    def run_cell(self, target: str, endpoint: str, bucket: str, c: "Cell", n: int) -> dict:
        fmt, compression = c.fmt, c.compression
        cell = f"{target}-{c.slug()}-{n}-{int(time.time())}"
        cfg = self.config(cell, endpoint, bucket, c)
        env = self.aws_env()
        load = loadavg()
        others = self.other_pids(target)
        cpu_of = self.cpu_of
        before = {k: cpu_of(pids) for k, pids in others.items()}
        logf = open(self.work / f"{cell}.log", "w")
        t0 = time.monotonic()
        d = subprocess.Popen([self.bin("iggy-s3-sink"), "run", "--config", str(cfg)], env=env,
                             stdout=logf, stderr=subprocess.STDOUT)
        self.procs.append(d)
        perf = None
        perf_data = None
        if self.args.profile:
            Path(self.args.profile).mkdir(parents=True, exist_ok=True)
            perf_data = Path(self.args.profile) / f"{target}-{c.slug()}.data"
            # `perf record -p` follows only the threads that exist when it attaches: wait until
            # the daemon has made its worker pool (its "formatting and compression" line).
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and "formatting and compression:" not in \
                    (self.work / f"{cell}.log").read_text(errors="replace"):
                time.sleep(0.01)
            perf = subprocess.Popen(["perf", "record", "--call-graph", "dwarf,16384", "-F", str(self.args.profile_hz), "-p", str(d.pid), "-o",
                                     str(perf_data)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        scraper = Scraper(self.work / f"{cell}.log", self.args.scrape_ms) if self.args.scrape_ms else None
        hostile = None
        if self.args.hostile:
            sys.path.insert(0, str(ROOT / "tests" / "integration" / "e2e"))
            import hostile_admin
            hostile_admin.raise_nofile(4096)
            hostile = hostile_admin.Hostile(admin_address(self.work / f"{cell}.log"))
        try:
            r = subprocess.run([self.bin("iggy-s3-sink"), "lag", "--config", str(cfg), "--wait-zero", "900s"],
                               env=env, capture_output=True, text=True, timeout=1000)
            t1 = time.monotonic()
            if scraper:
                scraper.halt()
            hostile_counts = hostile.halt() if hostile else None
            if r.returncode != 0 or d.poll() is not None:
                sys.exit(f"cell {cell}: lag --wait-zero exited {r.returncode}, daemon "
                         f"{'exited ' + str(d.returncode) if d.poll() is not None else 'alive'}:\n"
                         f"{r.stdout}{r.stderr}\nlog: {self.work / (cell + '.log')}")
            user, sys_s = cpu_seconds(d.pid)
            hwm = vm_hwm_kib(d.pid)
            waited = runqueue_wait_s(d.pid)
            other_cpu = {k: cpu_of(pids) - before[k] for k, pids in others.items()}
            scrape = scraper.measure(d.pid) if scraper else None
        finally:
            if perf is not None:
                perf.send_signal(signal.SIGINT)
                perf.wait(timeout=60)
            if d.poll() is None:
                d.send_signal(signal.SIGTERM)
                try:
                    d.wait(timeout=120)
                except subprocess.TimeoutExpired:
                    d.kill()
                    d.wait()
        secs = t1 - t0
        payload = self.args.messages * self.args.size
        if perf_data is not None:
            self.perf_report(perf_data)
        res = {"target": target, "cell": c, "format": fmt, "compression": compression, "seconds": secs,
               "msgs_per_s": self.args.messages / secs, "mb_per_s": payload / 1e6 / secs,
               "cpu_user": user, "cpu_sys": sys_s, "cpu": user + sys_s, "rss_mib": hwm / 1024,
               "load": load, "exit": d.returncode, "waited": waited, "broker_cpu": other_cpu.get("broker"),
               "s3_cpu": other_cpu.get("s3"), "scrape": scrape, "hostile": hostile_counts}
        if hostile_counts:
            log(f"hostile admin client during the run: {hostile_counts}")
        if scrape:
            share = 100 * scrape["scrapes"] * scrape["cpu_per_scrape_s"] / (user + sys_s)
            res["scrape"]["share_pct"] = share
            log(f"/metrics every {self.args.scrape_ms} ms: {scrape['scrapes']} scrapes of ~{scrape['bytes'] // max(1, scrape['scrapes'])} "
                f"bytes during the run; {scrape['cpu_per_scrape_s'] * 1e6:.0f} us daemon CPU per scrape (burst of "
                f"{scrape['burst']} on the idle daemon, idle rate subtracted) = {share:.2f}% of the run's daemon CPU")
        log(f"{target} {c.label()}: {secs:.1f} s, {res['msgs_per_s']:.0f} msg/s, "
            f"{res['mb_per_s']:.1f} MB/s, cpu {user:.1f}+{sys_s:.1f} s, VmHWM {hwm / 1024:.0f} MiB, "
            f"waited for a CPU {waited:.1f} s, load {load:.2f}, exit {d.returncode}, broker cpu {other_cpu.get('broker', 0):.1f} s"
            + (f", S3 server cpu {other_cpu['s3']:.1f} s" if "s3" in other_cpu else ""))
        return res

    def perf_report(self, data: Path) -> None:
        """Keeps `perf report` of one cell next to its data: DATA.txt (self time by symbol,
        children folded) and DATA.children.txt (with callers' totals)."""
        for name, extra in ((".txt", ["--no-children"]), (".children.txt", ["--children"])):
            out = data.with_suffix(name)
            r = subprocess.run(["perf", "report", "-i", str(data), "--stdio", "--percent-limit", "0.5", "--sort", "dso,symbol",
                                "-g", "none", *extra], capture_output=True, text=True, timeout=900)
            out.write_text(r.stdout if r.returncode == 0 else f"perf report failed ({r.returncode}):\n{r.stderr}")
        log(f"perf report: {data.with_suffix('.txt')}")

    def make_tls(self) -> None:
        """A self-signed certificate for 127.0.0.1 (the daemon trusts it through s3.tls.ca_file)."""
        self.tls_dir = self.work / "tls"
        self.tls_dir.mkdir(exist_ok=True)
        r = subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                            "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                            "-keyout", str(self.tls_dir / "key.pem"), "-out", str(self.tls_dir / "cert.pem")],
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            sys.exit(f"openssl req failed: {r.stderr}")

    def cleanup(self) -> None:
        if self.delete_stream:
            r = subprocess.run(self.produce_cmd(topic=False) + ["--delete-stream"], capture_output=True, text=True, timeout=300)
            log(f"deleted stream {self.stream}: {(r.stdout + r.stderr).strip()} (exit {r.returncode})")
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        if self.rgw_dir is not None:
            subprocess.run([str(ROOT / "scripts" / "rgw"), "stop", str(self.rgw_dir)], capture_output=True)
        if not self.args.keep:
            shutil.rmtree(self.work, ignore_errors=True)
        else:
            log(f"kept {self.work}")


def listening_pids(address: str) -> list[int]:
    """The pids listening on TCP `address` (host:port), by `ss -ltnpH`; [] when ss cannot tell."""
    port = address.rsplit(":", 1)[-1]
    try:
        out = subprocess.run(["ss", "-ltnpH", f"sport = :{port}"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    return sorted({int(m) for m in re.findall(r"pid=(\d+)", out)})


def admin_address(daemon_log: Path) -> str:
    """The admin server's address, from the daemon's `admin server listening` line."""
    deadline = time.time() + 60
    while time.time() < deadline:
        m = re.findall(r"admin server listening on http://(\S+?)/", daemon_log.read_text(errors="replace")
                       if daemon_log.exists() else "")
        if m:
            return m[-1]
        time.sleep(0.05)
    sys.exit(f"no admin server line in {daemon_log}")


class Scraper:
    """Scrapes the daemon's /metrics every `every_ms` while a cell runs, then measures the
    daemon CPU one scrape costs: on the idle daemon (lag 0), CPU over a burst of scrapes minus
    the idle rate over the same time."""

    def __init__(self, daemon_log: Path, every_ms: int) -> None:
        self.every = every_ms / 1000
        self.stop = threading.Event()
        self.scrapes = 0
        self.bytes = 0
        self.address = admin_address(daemon_log)
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def get(self) -> int:
        import urllib.request
        with urllib.request.urlopen(f"http://{self.address}/metrics", timeout=10) as r:
            return len(r.read())

    def _loop(self) -> None:
        nxt = time.monotonic()
        while not self.stop.is_set():
            try:
                self.bytes += self.get()
                self.scrapes += 1
            except OSError:
                pass
            nxt += self.every
            self.stop.wait(max(0.0, nxt - time.monotonic()))

    def halt(self) -> None:
        self.stop.set()
        self.thread.join()

    def measure(self, pid: int, burst: int = 500) -> dict:
        time.sleep(1)
        c0, t0 = sum(cpu_seconds(pid)), time.monotonic()
        time.sleep(3)
        c1, t1 = sum(cpu_seconds(pid)), time.monotonic()
        idle_rate = (c1 - c0) / (t1 - t0)
        for _ in range(burst):
            self.get()
        c2, t2 = sum(cpu_seconds(pid)), time.monotonic()
        per = max(0.0, (c2 - c1) - idle_rate * (t2 - t1)) / burst
        return {"scrapes": self.scrapes, "bytes": self.bytes, "burst": burst, "cpu_per_scrape_s": per,
                "idle_cpu_rate": idle_rate}


class Cell:
    """One configuration to run: format, compression (level 0 = the codec's default),
    performance.workers (None: not set), and extra settings of its own."""

    def __init__(self, fmt: str, compression: str, level: int = 0, workers: int | None = None,
                 sets: tuple[str, ...] = ()) -> None:
        self.fmt, self.compression, self.level, self.workers, self.sets = fmt, compression, level, workers, sets

    def label(self) -> str:
        lv = f" {self.level}" if self.level else (" (default)" if self.compression != "none" else "")
        w = f", workers {self.workers}" if self.workers is not None else ""
        return f"{self.fmt} {self.compression}{lv}{w}"

    def slug(self) -> str:
        return re.sub(r"[^a-z0-9]+", "-", self.label().lower()).strip("-")


# The cells of the throughput targets: raw and json_lines uncompressed, gzip at level 1 and at
# the default, zstd at level 1 and 3.
TARGET_CELLS = "raw:none,json_lines:none,json_lines:gzip:1,json_lines:gzip,json_lines:zstd:1,json_lines:zstd:3"


def parse_cells(spec: str, formats: str, compressions: str) -> list[tuple[str, str, int]]:
    if spec == "targets":
        spec = TARGET_CELLS
    if not spec:
        return [(f, c, 0) for f in formats.split(",") for c in compressions.split(",")]
    out = []
    for item in spec.split(","):
        parts = item.strip().split(":")
        if len(parts) not in (2, 3):
            sys.exit(f"--cells: {item!r} is not FORMAT:COMPRESSION[:LEVEL]")
        out.append((parts[0], parts[1], int(parts[2]) if len(parts) == 3 else 0))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--messages", type=int, default=500_000)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--partitions", type=int, default=3)
    ap.add_argument("--payload", choices=("records", "synthetic"), default="records",
                    help="records: seeded JSON web-request records (default); synthetic: iggy-produce "
                         "--count/--size (a padded constant: gzip finds it unrealistically easy)")
    ap.add_argument("--max-records", type=int, default=10_000, help="rotation.max_records (default 10000)")
    ap.add_argument("--targets", default="discard,rgw",
                    help="discard (discard-s3 over http), discard-https (over TLS: with the defaults the daemon "
                         "then sends UNSIGNED-PAYLOAD and, since discard-s3 checks it, CRC-32C), rgw")
    ap.add_argument("--formats", default="json_lines,raw")
    ap.add_argument("--compressions", default="none,gzip")
    ap.add_argument("--cells", default="", metavar="SPEC",
                    help="FORMAT:COMPRESSION[:LEVEL],... instead of --formats x --compressions; `targets`: "
                         + TARGET_CELLS)
    ap.add_argument("--workers", default="", metavar="LIST",
                    help="performance.workers per cell, e.g. `1,all` (all = the number of cores); "
                         "empty: not set (the daemon's default)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per cell; the table shows the fastest")
    ap.add_argument("--rgw-env", help="use the RGW described by this env file instead of starting one")
    ap.add_argument("--set", action="append", metavar="KEY=VALUE",
                    help="extra daemon config for every cell, e.g. --set s3.checksum=crc32c "
                         "--set format.compression_level=1 (VALUE as JSON, else a string; repeatable)")
    ap.add_argument("--profile", "--perf", dest="profile", metavar="DIR",
                    help="record each cell's daemon with `perf record --call-graph dwarf` into DIR and keep "
                         "`perf report` of it next to the data (DIR/CELL.txt: self time; DIR/CELL.children.txt)")
    ap.add_argument("--profile-hz", type=int, default=299, metavar="HZ",
                    help="samples per second for --profile (default 299; more samples, larger data)")
    ap.add_argument("--scrape-ms", type=int, default=0, metavar="MS",
                    help="scrape the daemon's /metrics every MS ms during each cell and report its CPU share")
    ap.add_argument("--hostile", action="store_true",
                    help="run a hostile admin client during each cell (tests/integration/e2e/hostile_admin.py: "
                         "500 idle connections/s, a 1 MiB header and garbage every 0.5 s, slow headers)")
    ap.add_argument("--iggy-server", default=os.environ.get("IGGY_TEST_SERVER", ""), metavar="HOST:PORT",
                    help="an Iggy server that is already running (default $IGGY_TEST_SERVER) instead of the test "
                         "broker: the bench preloads a stream of its own there (bench-<time>) and deletes it at the end")
    ap.add_argument("--iggy-protocol", default=os.environ.get("IGGY_TEST_PROTOCOL", ""), metavar="LINE",
                    help="the server's protocol line, as iggy.protocol (0.8, 0.9, 0.10, auto; default "
                         "$IGGY_TEST_PROTOCOL, else the clients' default)")
    ap.add_argument("--iggy-user", default=os.environ.get("IGGY_TEST_USER", "iggy"))
    ap.add_argument("--iggy-password", default=os.environ.get("IGGY_TEST_PASSWORD", "iggy"))
    ap.add_argument("--peer-cmd", action="append", default=[], metavar="CMD",
                    help="also run this program on the same input, server and store, after the daemon's cells "
                         "(repeatable; placeholders @NAME@ as in tests/bench/e2e_peers.py)")
    ap.add_argument("--peer-config", action="append", default=[], metavar="TEMPLATE",
                    help="the config template (file or directory) of the --peer-cmd at the same position; - for none")
    ap.add_argument("--peer-name", action="append", default=[], metavar="NAME",
                    help="the name of the --peer-cmd at the same position in the tables")
    ap.add_argument("--kills", type=int, default=0, metavar="N",
                    help="after the throughput cells, per contestant (the daemon with the first cell, then each "
                         "peer): N SIGKILLs during a run over the same input into RGW, restarts, and a count of "
                         "the missing and duplicated messages in the bucket")
    ap.add_argument("--seed", type=int, default=35,
                    help="seed of the --kills targets (messages committed by the group when a kill strikes; default 35)")
    ap.add_argument("--dry-run", action="store_true",
                    help="check the arguments, fill the peers' templates into a temporary directory, print "
                         "their command lines and exit (nothing started)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory (configs, logs)")
    ap.add_argument("--work-dir", metavar="DIR", help="make the work directory under DIR (default: the system's temporary directory)")
    args = ap.parse_args()
    if args.profile and shutil.which("perf") is None:
        sys.exit("--profile needs perf (Debian: apt-get install linux-perf)")

    workers: list[int | None] = [None]
    if args.workers:
        workers = [os.cpu_count() if w.strip() == "all" else int(w) for w in args.workers.split(",")]
    cells = [Cell(f, c, lv, w) for f, c, lv in parse_cells(args.cells, args.formats, args.compressions) for w in workers]
    peers = parse_peers(args.peer_cmd, args.peer_config, args.peer_name)
    if args.kills < 0:
        sys.exit(f"--kills {args.kills}: want 0 or more")
    if args.dry_run:
        return dry_run(args, peers)

    b = Bench(args)
    rows = []
    peer_rows = []
    kill_rows = []
    discard_stats = {}
    try:
        b.start_broker_and_preload()
        targets = [t.strip() for t in args.targets.split(",") if t.strip()]
        for target in targets:
            if target in ("discard", "discard-https"):
                endpoint, bucket = b.start_discard(https=target == "discard-https"), "bench"
            elif target == "rgw":
                b.start_rgw()
                endpoint, bucket = b.rgw["RGW_ENDPOINT"], f"bench-{int(time.time())}"
                r = subprocess.run([AWS, "--endpoint-url", endpoint, "s3api", "create-bucket", "--bucket", bucket],
                                   env=b.aws_env(), capture_output=True, text=True, timeout=120)
                if r.returncode != 0:
                    sys.exit(f"create-bucket failed: {r.stderr}")
            else:
                sys.exit(f"unknown target {target!r} (discard, discard-https, rgw)")
            for c in cells:
                runs = [b.run_cell(target, endpoint, bucket, c, i) for i in range(args.repeat)]
                rows.append(min(runs, key=lambda r: r["seconds"]))
            for peer in peers:
                runs = [run_peer_cell(b, peer, target, endpoint, bucket, cells[0]) for _ in range(args.repeat)]
                peer_rows.append(min(runs, key=lambda r: r["seconds"]))
            if target.startswith("discard"):
                b.discard.send_signal(signal.SIGTERM)
                out, _ = b.discard.communicate(timeout=30)
                if out.strip():
                    discard_stats[target] = out.strip().splitlines()[-1]
        if args.kills:
            kill_rows = kill_runs(b, peers, cells[0])
    finally:
        b.cleanup()

    names = {"discard": "discard-s3", "discard-https": "discard-s3 https", "rgw": "Ceph RGW"}
    extra = "".join(f", {x}" for x in args.set or [])
    print(f"{args.messages} messages x {args.size} B over {args.partitions} partitions, "
          f"rotation.max_records {args.max_records}{extra or ', everything else default'}, "
          f"{os.cpu_count()} cores\n")
    print("| S3 | cell | seconds | messages/s | MB/s | daemon CPU s (user+sys) | CPU s / GB | MB/s per daemon core "
          "| waiting for a CPU s | peak RSS MiB | broker CPU s | S3 server CPU s | load avg |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    gb = args.messages * args.size / 1e9
    for r in rows:
        per_core = args.messages * args.size / 1e6 / r["cpu"] if r["cpu"] > 0 else float("nan")
        print(f"| {names[r['target']]} | {r['cell'].label()} | {r['seconds']:.1f} | "
              f"{r['msgs_per_s']:,.0f} | {r['mb_per_s']:.1f} | {r['cpu']:.1f} ({r['cpu_user']:.1f}+{r['cpu_sys']:.1f}) | "
              f"{r['cpu'] / gb:.2f} | {per_core:.0f} | {r['waited']:.1f} | {r['rss_mib']:.0f} | {'-' if r['broker_cpu'] is None else format(r['broker_cpu'], '.1f')} | "
              f"{'-' if r['s3_cpu'] is None else format(r['s3_cpu'], '.1f')} | {r['load']:.2f} |")
    for target, stats in discard_stats.items():
        print(f"\n{names[target]} counters: `{stats}`")
    print_peer_tables(args, rows, peer_rows, kill_rows, names, b.counts)
    return 0


def placeholder_values(a: argparse.Namespace, address: str, stream: str, cell: str, endpoint: str, bucket: str,
                       access_key: str, secret_key: str) -> dict[str, str]:
    """The peers' placeholders for one run `cell`: the consumer group and the prefix are the
    ones the daemon's config of that cell gets (Bench.config), so `lag` watches the peer."""
    return {"IGGY_ADDRESS": address, "IGGY_USER": a.iggy_user, "IGGY_PASSWORD": a.iggy_password,
            "IGGY_PROTOCOL": a.iggy_protocol or "0.8", "STREAM": stream, "TOPIC": "events",
            "PARTITIONS": str(a.partitions), "MESSAGES": str(a.messages), "CONSUMER_GROUP": f"bench-{cell}",
            "S3_ENDPOINT": endpoint, "S3_BUCKET": bucket, "S3_PREFIX": f"bench/{cell}", "S3_REGION": "us-east-1",
            "AWS_ACCESS_KEY_ID": access_key, "AWS_SECRET_ACCESS_KEY": secret_key,
            "MAX_RECORDS": str(a.max_records), "BENCH_DIR": str(Path(__file__).resolve().parent)}


def dry_run(args: argparse.Namespace, peers: list[Peer]) -> int:
    """--dry-run: each peer's templates filled with placeholder values into a temporary
    directory, its command line printed; exits 1 naming a bad template or command."""
    with tempfile.TemporaryDirectory(prefix="e2e-bench-dry-") as tmp:
        values = placeholder_values(args, args.iggy_server or "127.0.0.1:8090", "bench", "dry-run",
                                    "http://127.0.0.1:9000", "bench", "DRYRUNACCESSKEY", "dry-run-secret")
        for peer in peers:
            run_dir = Path(tmp) / re.sub(r"[^a-z0-9]+", "-", peer.name.lower())
            argv = peer.materialize(run_dir, values)
            print(f"peer {peer.name}: {' '.join(argv)}")
            for f in sorted(run_dir.rglob("*")):
                if f.is_file():
                    print(f"  {f.relative_to(run_dir)} ({len(f.read_bytes())} bytes, no placeholder left)")
    print(f"dry run: {len(peers)} peer(s), {args.kills} kill(s) per contestant")
    return 0


def kill_runs(b: Bench, peers: list[Peer], cell: Cell) -> list[dict]:
    """--kills: the daemon and each peer, in turn, into one fresh RGW bucket (the objects are
    read back and counted)."""
    if b.rgw is None:
        b.start_rgw()
    bucket = f"bench-kills-{int(time.time())}"
    b.aws("s3api", "create-bucket", "--bucket", bucket)
    rng = random.Random(b.args.seed)
    endpoint = b.rgw["RGW_ENDPOINT"]
    out = []
    for name, peer in [("iggy-s3-sink", None)] + [(p.name, p) for p in peers]:
        out.append(kill_run(b, Contestant(b, name, peer), endpoint, bucket, cell, b.args.kills, rng, b.counts))
    return out


def print_peer_tables(args: argparse.Namespace, rows: list[dict], peer_rows: list[dict], kill_rows: list[dict],
                      names: dict[str, str], counts: dict[int, int]) -> None:
    """The contestants side by side (the daemon's first cell per store, then each peer), and the
    counts after the SIGKILLs."""
    gb = args.messages * args.size / 1e9
    if peer_rows:
        print("\n| S3 | contestant | seconds | messages/s | CPU s (user+sys) | CPU s / GB | peak RSS MiB "
              "| Iggy server CPU s | S3 server CPU s | load avg |")
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        firsts = {}
        for r in rows:
            firsts.setdefault(r["target"], r)
        for r in list(firsts.values()) + peer_rows:
            name = r.get("name") or f"iggy-s3-sink ({r['cell'].label()})"
            fmt = lambda v: "-" if v is None else f"{v:.1f}"  # noqa: E731
            print(f"| {names[r['target']]} | {name} | {r['seconds']:.1f} | {r['msgs_per_s']:,.0f} | "
                  f"{r['cpu']:.1f} ({r['cpu_user']:.1f}+{r['cpu_sys']:.1f}) | {r['cpu'] / gb:.2f} | {r['rss_mib']:.0f} | "
                  f"{fmt(r['broker_cpu'])} | {fmt(r['s3_cpu'])} | {r['load']:.2f} |")
    if kill_rows:
        print(f"\n{args.kills} SIGKILLs per contestant during {sum(counts.values())} messages "
              f"({', '.join(f'partition {k}: {v}' for k, v in sorted(counts.items()))}), each when the "
              f"group had committed the next of {args.kills} seeded targets (seed {args.seed}), then a run to lag 0 "
              "and SIGTERM; "
              "every message counted in the bucket (Ceph RGW)\n")
        print("| contestant | kills, s after each start | committed by the group at each kill | records in the bucket | objects "
              "| missing | duplicates | .lost markers | seconds | load avg |")
        print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for r in kill_rows:
            print(f"| {r['name']} | {', '.join(str(m) for m in r['moments'])} | "
                  f"{', '.join(f'{c:,}' for c in r['committed'])} | {r['records']:,} | {r['objects']} | "
                  f"{r['missing']:,} | {r['duplicates']:,} | {r['lost_markers']} | {r['seconds']:.0f} | {r['load']:.2f} |")


if __name__ == "__main__":
    sys.exit(main())
