# SPDX-License-Identifier: Apache-2.0
"""End-to-end harness: the Iggy test broker, a real Ceph RGW (the `rgw` CTest fixture), the
daemon as a process, and Debian's awscli as the independent reader of what landed.

Only the standard library is used. Every server listens on a port the OS picked; every wait
has a generous bound; randomness is seeded and the seed printed.
"""
from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

AWS = "/usr/bin/aws"  # Debian's awscli; a pyenv shim may shadow `aws` (tests/integration/README.md (the RGW facts))


def log(msg: str) -> None:
    print(f"[e2e {time.strftime('%H:%M:%S')}] {msg}", flush=True)


class Failure(Exception):
    pass


def check(cond: bool, msg: str) -> None:
    if not cond:
        raise Failure(msg)


def read_env_file(path: Path) -> dict[str, str]:
    env = {}
    for line in path.read_text().splitlines():
        m = re.match(r"^([A-Z0-9_]+)=(.*)$", line.strip())
        if m:
            env[m.group(1)] = m.group(2).strip("'\"")
    return env


@dataclass
class Env:
    build: Path
    rgw: dict[str, str]
    work: Path
    procs: list[subprocess.Popen] = field(default_factory=list)
    # The Iggy login of iggy-produce and the daemon (a real server's come from IggyServer).
    iggy_user: str = "iggy"
    iggy_password: str = "iggy"
    produce_protocol: str | None = None  # iggy-produce --protocol (None: its default, 0.8)
    daemon_password: bool = True  # IGGY_PASSWORD for the daemon (False: its configs carry a token)
    # Run after the processes are gone (e.g. deleting a stream on a real server); one that
    # raises fails the case.
    cleanups: list = field(default_factory=list)

    @staticmethod
    def from_args(argv: list[str]) -> "Env":
        build = Path(os.environ.get("ISS_BINARY_DIR", "build")).resolve()
        rgw_dir = Path(os.environ.get("RGW_DIR", build / "rgw"))
        env_file = rgw_dir / "env"
        if not env_file.exists():
            print(f"RGW env file {env_file} missing: run through ctest (fixture rgw)", file=sys.stderr)
            sys.exit(1)
        work = Path(tempfile.mkdtemp(prefix="e2e-", dir=os.environ.get("TMPDIR", "/tmp")))
        return Env(build, read_env_file(env_file), work)

    # ---- binaries -------------------------------------------------------------------
    def bin(self, name: str) -> str:
        for cand in (self.build / "daemon" / name, self.build / "tests" / "support" / name):
            if cand.exists():
                return str(cand)
        raise Failure(f"binary {name} not built under {self.build}")

    def aws_env(self) -> dict[str, str]:
        e = dict(os.environ)
        e.update(AWS_ACCESS_KEY_ID=self.rgw["RGW_ACCESS_KEY"], AWS_SECRET_ACCESS_KEY=self.rgw["RGW_SECRET_KEY"],
                 AWS_DEFAULT_REGION=self.rgw.get("RGW_REGION", "us-east-1"), AWS_EC2_METADATA_DISABLED="true",
                 AWS_PAGER="")
        return e

    def aws(self, *args: str, check_rc: bool = True) -> subprocess.CompletedProcess:
        cmd = [AWS, "--endpoint-url", self.rgw["RGW_ENDPOINT"], *args]
        r = subprocess.run(cmd, env=self.aws_env(), capture_output=True, text=True, timeout=300)
        if check_rc and r.returncode != 0:
            raise Failure(f"aws {' '.join(args)} failed: {r.stderr.strip()}")
        return r

    def make_bucket(self, name: str) -> str:
        self.aws("s3api", "create-bucket", "--bucket", name)
        return name

    # ---- broker ---------------------------------------------------------------------
    def start_broker(self, *extra: str, data: Path | None = None, listen: str = "127.0.0.1:0") -> "Broker":
        """The test broker on `listen` (port 0: one the OS picked; a restart passes the address the
        first start reported, with the same `data` directory)."""
        args = [self.bin("iggy-test-broker"), "--listen", listen]
        if data is not None:
            args += ["--data", str(data)]
        args += list(extra)
        log_path = self.work / f"broker-{len(self.procs)}.log"
        out = open(log_path, "w")
        p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=out, text=True)
        self.procs.append(p)
        line = p.stdout.readline().strip()
        m = re.match(r"^listening on (\S+):(\d+)$", line)
        check(m is not None, f"broker's first line was {line!r}")
        threading.Thread(target=lambda: [None for _ in p.stdout], daemon=True).start()
        return Broker(p, f"{m.group(1)}:{m.group(2)}", args, log_path)

    def produce(self, address: str, stream: str, topic: str, *args: str) -> str:
        cmd = [self.bin("iggy-produce"), "--address", address, "--username", self.iggy_user,
               "--password", self.iggy_password, "--stream", stream, "--topic", topic, *args]
        if self.produce_protocol:
            cmd += ["--protocol", self.produce_protocol]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            raise Failure(f"iggy-produce failed ({r.returncode}): {r.stdout} {r.stderr}")
        return r.stdout

    # ---- daemon ---------------------------------------------------------------------
    def config(self, bucket: str, address: str, *, stream: str = "app", topics: list[str] | None = None,
               group: str | None = "s3-sink", consumer: str | None = None, prefix: str = "iggy",
               rotation: dict | None = None, fmt: dict | None = None, endpoint: str | None = None,
               delivery: dict | None = None, retry: dict | None = None, grace: str = "30s",
               extra_s3: dict | None = None, name: str = "sink", admin: str = "127.0.0.1:0",
               extra_iggy: dict | None = None) -> Path:
        iggy: dict = {"address": address, "username": self.iggy_user, "password": "${IGGY_PASSWORD}",
                      "poll": {"messages": 1000, "interval": "50ms"}}
        # issue 9: ISS_E2E_PROTOCOL picks iggy.protocol (auto when unset: G2 against the
        # test broker, which serves both generations on one port).
        if os.environ.get("ISS_E2E_PROTOCOL"):
            iggy["protocol"] = os.environ["ISS_E2E_PROTOCOL"]
        if extra_iggy:
            iggy.update(extra_iggy)
            if "token" in extra_iggy:  # a token instead of username/password
                del iggy["username"], iggy["password"]
        if consumer is not None:
            iggy["consumer"] = consumer
        else:
            iggy["consumer_group"] = group
        s3 = {"bucket": bucket, "region": self.rgw.get("RGW_REGION", "us-east-1"),
              "endpoint": endpoint or self.rgw["RGW_ENDPOINT"], "prefix": prefix,
              "access_key_id": "${AWS_ACCESS_KEY_ID}", "secret_access_key": "${AWS_SECRET_ACCESS_KEY}",
              "part_size": "5MiB",
              "retry": retry or {"attempts": 10, "base": "100ms", "cap": "1s", "deadline": "15s"}}
        if extra_s3:
            s3.update(extra_s3)
        cfg = {"iggy": iggy,
               "sources": [{"stream": stream, "topics": topics or ["events"], "partitions": "all"}],
               "s3": s3,
               "format": fmt or {"type": "json_lines", "compression": "none"},
               "rotation": rotation or {"max_records": 5000, "idle": "2s"},
               "shutdown": {"grace": grace},
               "log": {"level": "info", "format": "text"},
               # Port 0: tests run in parallel; admin_address() reads the bound one from the log.
               "admin": {"listen": admin}}
        if delivery:
            cfg["delivery"] = delivery
        # issue 18: ISS_E2E_WORKERS pins performance.workers (unset: the default, one per core).
        if os.environ.get("ISS_E2E_WORKERS"):
            cfg["performance"] = {"workers": int(os.environ["ISS_E2E_WORKERS"])}
        path = self.work / f"{name}.yaml"
        path.write_text(json.dumps(cfg, indent=2))  # JSON is YAML
        return path

    def daemon_env(self) -> dict[str, str]:
        e = self.aws_env()
        e.pop("IGGY_PASSWORD", None)
        if self.daemon_password:
            e["IGGY_PASSWORD"] = self.iggy_password
        return e

    def start_daemon(self, config: Path, tag: str = "sink", extra_env: dict[str, str] | None = None,
                     prefix: list[str] | None = None) -> subprocess.Popen:
        """`iggy-s3-sink run` on `config`, its output in WORK/TAG.log; `prefix` runs it through a
        command that execs it and keeps the pid the daemon's (`ip netns exec NAME`, valgrind)."""
        logf = open(self.work / f"{tag}.log", "a")
        e = self.daemon_env()
        if extra_env:
            e.update(extra_env)
        p = subprocess.Popen([*(prefix or []), self.bin("iggy-s3-sink"), "run", "--config", str(config)], env=e,
                             stdout=logf, stderr=subprocess.STDOUT)
        self.procs.append(p)
        return p

    def admin_address(self, tag: str = "sink", seconds: float = 60) -> str:
        """host:port of the daemon's admin server, from its log line (admin.listen port 0)."""
        deadline = time.time() + seconds
        path = self.work / f"{tag}.log"
        while time.time() < deadline:
            text = path.read_text(errors="replace") if path.exists() else ""
            m = re.findall(r"admin server listening on http://(\S+?)/", text)
            if m:
                return m[-1]
            time.sleep(0.1)
        raise Failure(f"no 'admin server listening' line in {path} within {seconds}s")

    @staticmethod
    def http_get(address: str, path: str, timeout: float = 10) -> tuple[int, str]:
        """(status, body) of GET http://address/path."""
        import urllib.error
        import urllib.request
        try:
            with urllib.request.urlopen(f"http://{address}{path}", timeout=timeout) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def scrape(self, address: str) -> dict[tuple[str, tuple], float]:
        """/metrics as {(name, sorted label pairs): value}."""
        status, text = self.http_get(address, "/metrics")
        check(status == 200, f"/metrics answered {status}")
        return parse_metrics(text)

    def lag(self, config: Path, *extra: str, timeout: float = 600) -> tuple[int, str, str]:
        """(exit code, stdout, stderr) of `iggy-s3-sink lag`."""
        r = subprocess.run([self.bin("iggy-s3-sink"), "lag", "--config", str(config), *extra],
                           env=self.daemon_env(), capture_output=True, text=True, timeout=timeout)
        return r.returncode, r.stdout, r.stderr

    def lag_json(self, config: Path) -> list[dict]:
        """The rows of `lag --json`: stream, topic, partition, messages, head, committed, lag."""
        rc, out, err = self.lag(config, "--json")
        check(rc == 0, f"lag --json exited {rc}: {out}{err}")
        return json.loads(out)["partitions"]

    def wait_lag_zero(self, config: Path, seconds: int = 240) -> None:
        rc, out, err = self.lag(config, "--wait-zero", f"{seconds}s", timeout=seconds + 60)
        check(rc == 0, f"lag --wait-zero {seconds}s exited {rc}:\n{out}{err[-3000:]}")

    @staticmethod
    def handles_signal(pid: int, sig: int) -> bool:
        """True once the process blocks or catches `sig` (the daemon blocks SIGTERM/SIGINT/SIGHUP
        first thing in main): sent earlier, the default action would kill it mid-start."""
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith(("SigBlk:", "SigCgt:")) and (int(line.split()[1], 16) >> (sig - 1)) & 1:
                    return True
        except (FileNotFoundError, ProcessLookupError):
            return True  # gone: nothing to wait for
        return False

    def stop(self, p: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 120) -> int:
        if p.poll() is None:
            if sig != signal.SIGKILL:
                deadline = time.time() + 30
                while p.poll() is None and not self.handles_signal(p.pid, sig) and time.time() < deadline:
                    time.sleep(0.01)
            p.send_signal(sig)
        try:
            return p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            raise Failure(f"process {p.args[0]} did not exit within {timeout}s of signal {sig}")

    def cleanup(self, ok: bool) -> bool:
        """Stops what is left, runs `cleanups`; returns `ok` and-ed with their success."""
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        for fn in self.cleanups:
            try:
                fn()
            except Failure as e:
                log(f"FAIL in cleanup: {e}")
                ok = False
        if ok and not os.environ.get("ISS_E2E_KEEP"):
            shutil.rmtree(self.work, ignore_errors=True)
        else:
            log(f"kept work dir {self.work}")
            for f in sorted(self.work.glob("*.log")):
                text = f.read_text(errors="replace")
                log(f"---- {f.name} (last 60 lines)\n" + "\n".join(text.splitlines()[-60:]))
        return ok

    # ---- what landed ----------------------------------------------------------------
    def download(self, bucket: str, prefix: str = "") -> Path:
        dest = self.work / f"dl-{bucket}-{time.time_ns()}"
        dest.mkdir()
        self.aws("s3", "cp", "--recursive", "--only-show-errors", f"s3://{bucket}/{prefix}", str(dest))
        return dest

    def list_keys(self, bucket: str, prefix: str = "") -> list[str]:
        r = self.aws("s3api", "list-objects-v2", "--bucket", bucket, "--prefix", prefix, "--output", "json")
        if not r.stdout.strip():
            return []
        return [o["Key"] for o in json.loads(r.stdout).get("Contents", [])]

    def head_metadata(self, bucket: str, key: str) -> dict[str, str]:
        r = self.aws("s3api", "head-object", "--bucket", bucket, "--key", key, "--output", "json")
        return json.loads(r.stdout).get("Metadata", {})


@dataclass
class Broker:
    proc: subprocess.Popen
    address: str
    args: list[str]
    log: Path | None = None  # its stderr

    def membership_changes(self, group: str) -> list[str]:
        """The broker's lines for each join and leave of `group` (each a rebalance its other
        members see), oldest first."""
        text = self.log.read_text(errors="replace") if self.log else ""
        return [line for line in text.splitlines() if f"consumer group {group} of topic " in line]


def monotonic_series(metrics: dict) -> dict[tuple[str, tuple], float]:
    """The samples of `metrics` that must never go down over a process's life: counters
    (`*_total`) and histograms (`_bucket`, `_count`, `_sum`: our durations are never negative)."""
    return {k: v for k, v in metrics.items() if k[0].endswith(("_total", "_bucket", "_count", "_sum"))}


def check_not_lower(before: dict, after: dict, what: str) -> None:
    """Every counter and histogram sample of `before` is in `after`, not lower (a reload must not
    reset them)."""
    lower = [(k, v, after.get(k)) for k, v in monotonic_series(before).items()
             if after.get(k) is None or after[k] < v]
    check(not lower, f"{what}: {len(lower)} counter series went down or vanished, e.g. {lower[:6]}")


@dataclass
class Landed:
    """Every record found in the bucket, by (stream, topic, partition, offset)."""
    count: dict[tuple, int]
    objects: int
    records: int
    per_object: list[tuple[str, list[int]]]

    def duplicates(self) -> int:
        return sum(c - 1 for c in self.count.values() if c > 1)


def read_landed(root: Path) -> Landed:
    count: dict[tuple, int] = {}
    per_object = []
    records = 0
    # The capability probe's objects live under {prefix}/.iggy-s3-sink/ (a hidden folder for
    # Spark/Hive readers); a daemon killed during its start-up probe leaves one behind.
    files = sorted(p for p in root.rglob("*") if p.is_file() and ".iggy-s3-sink" not in p.parts)
    for f in files:
        offsets = []
        for line in f.read_text().splitlines():
            if not line:
                continue
            rec = json.loads(line)
            k = (rec["stream"], rec["topic"], rec["partition_id"], rec["offset"])
            count[k] = count.get(k, 0) + 1
            offsets.append(rec["offset"])
            records += 1
        per_object.append((str(f.relative_to(root)), offsets))
    return Landed(count, len(files), records, per_object)


def verify_exactly_once(landed: Landed, expected: dict[int, int], stream: str, topic: str) -> None:
    """expected: partition id -> message count (offsets 0..n-1) of `stream`/`topic`. Records of
    other streams and topics are left to their own call."""
    missing, dups = [], []
    for pid, n in expected.items():
        for off in range(n):
            c = landed.count.get((stream, topic, pid, off), 0)
            if c == 0:
                missing.append((pid, off))
            elif c > 1:
                dups.append((pid, off, c))
    extra = [k for k in landed.count
             if k[:2] == (stream, topic) and (k[2] not in expected or k[3] >= expected[k[2]])]
    check(not missing, f"{len(missing)} messages missing from the bucket, e.g. {missing[:5]}")
    check(not dups, f"{len(dups)} messages duplicated in the bucket, e.g. {dups[:5]}")
    check(not extra, f"{len(extra)} unexpected records, e.g. {extra[:5]}")
    for key, offs in landed.per_object:
        check(offs == sorted(offs) and len(set(offs)) == len(offs), f"object {key}: offsets not in order")
        check(offs == list(range(offs[0], offs[0] + len(offs))) if offs else True,
              f"object {key}: offsets not contiguous")
        m = re.search(r"partition=(\d+)/.*\+(\d+)\+(\d{20})\.", key)
        check(m is not None, f"object {key}: key does not carry partition and zero-padded start offset")
        check(int(m.group(3)) == offs[0], f"object {key}: key start offset {m.group(3)} != first record {offs[0]}")


def partition_counts(produce_output: str) -> dict[int, int]:
    """Parses iggy-produce's summary: '... partition 0: 1000, partition 1: 990'."""
    counts = {}
    for m in re.finditer(r"partition (\d+): (\d+)", produce_output):
        counts[int(m.group(1))] = counts.get(int(m.group(1)), 0) + int(m.group(2))
    return counts


def parse_metrics(text: str) -> dict[tuple[str, tuple], float]:
    """Prometheus text format -> {(name, ((label, value), ...)): value} (no escapes in our labels)."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)', line)
        if not m:
            raise Failure(f"unparsable metrics line {line!r}")
        labels = tuple(sorted(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"', m.group(2) or "")))
        out[(m.group(1), labels)] = float(m.group(3))
    return out


def metric_sum(metrics: dict, name: str, **match: str) -> float:
    """Sum of `name` over the samples whose labels include `match`."""
    return sum(v for (n, labels), v in metrics.items()
               if n == name and all((k, val) in labels for k, val in match.items()))


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class RssSampler:
    """Samples a process's resident set (KiB) every `interval` seconds until stopped or the
    process is gone."""

    def __init__(self, pid: int, interval: float = 0.05):
        self.pid, self.interval, self.peak, self.samples, self._stop = pid, interval, 0, 0, threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.peak = max(self.peak, rss_kib(self.pid))
                self.samples += 1
            except (FileNotFoundError, ProcessLookupError):
                return
            self._stop.wait(self.interval)

    def stop(self) -> None:
        self._stop.set()
        self._t.join()


class FaultFront:
    """tests/support/s3/main.cpp (s3-fault-front) as a process in front of `upstream`: rules are
    added and cleared while it runs (`add`, `clear`), `finish()` returns its counters
    {"requests": N, "faults": {action: N}}."""

    def __init__(self, env: "Env", upstream: str):
        self.stderr = open(env.work / "fault-front.log", "w")
        self.proc = subprocess.Popen([env.bin("s3-fault-front"), "--upstream", upstream], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr, text=True, bufsize=1)
        env.procs.append(self.proc)
        line = self.proc.stdout.readline().strip()
        m = re.match(r"^listening on (\S+):(\d+)$", line)
        check(m is not None, f"s3-fault-front's first line was {line!r}")
        self.url = f"http://{m.group(1)}:{m.group(2)}"
        self.lock = threading.Lock()

    def command(self, line: str) -> str:
        with self.lock:
            check(self.proc.poll() is None, f"s3-fault-front exited ({self.proc.returncode})")
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
            answer = self.proc.stdout.readline().strip()
        check(not answer.startswith("error") and answer != "", f"s3-fault-front: {line!r} -> {answer!r}")
        return answer

    def add(self, action: str, **keys) -> None:
        self.command(" ".join(["add", action, *(f"{k}={v}" for k, v in keys.items())]))

    def clear(self) -> None:
        self.command("clear")

    def stats(self) -> dict:
        return json.loads(self.command("stats"))

    def finish(self) -> dict:
        with self.lock:
            self.proc.stdin.close()  # end of stdin: it prints its counters and exits 0
            out = self.proc.stdout.read()
            rc = self.proc.wait(timeout=30)
        check(rc == 0, f"s3-fault-front exited {rc}")
        return json.loads(out.strip().splitlines()[-1])


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class SwitchableProxy:
    """A TCP proxy to an upstream that can be switched off (connections refused/reset) and on:
    stands in for an S3 store that is unreachable for a while.

    Across network namespaces (netns.py): `listen_sock`, a listening socket made in another
    namespace (a socket keeps the namespace it was made in), and `upstream_ns`, the path of the
    namespace the upstream connections are made in (the accept thread enters it). Such a proxy
    keeps idle connections open (no upstream read timeout)."""

    def __init__(self, upstream_host: str, upstream_port: int, listen_sock: socket.socket | None = None,
                 upstream_ns: str | None = None):
        self.up = (upstream_host, upstream_port)
        self.enabled = True
        self.upstream_ns = upstream_ns
        self.keep_idle = listen_sock is not None or upstream_ns is not None
        if listen_sock is None:
            listen_sock = socket.socket()
            listen_sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listen_sock.bind(("127.0.0.1", 0))
            listen_sock.listen(64)
        self.sock = listen_sock
        self.port = self.sock.getsockname()[1]
        self.conns: list[socket.socket] = []
        self.accepted = 0  # connections accepted and passed on
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def set_enabled(self, on: bool) -> None:
        self.enabled = on
        if not on:
            with self.lock:
                for c in self.conns:
                    try:
                        c.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    c.close()
                self.conns.clear()

    def _accept(self) -> None:
        if self.upstream_ns is not None:
            import netns
            netns.enter_thread(self.upstream_ns)  # this thread only: upstream sockets are made there
        while True:
            c, _ = self.sock.accept()
            if not self.enabled:
                c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                c.close()  # reset
                continue
            try:
                u = socket.create_connection(self.up, timeout=5)
                if self.keep_idle:
                    u.settimeout(None)
            except OSError:
                c.close()
                continue
            with self.lock:
                self.conns += [c, u]
                self.accepted += 1
            for a, b in ((c, u), (u, c)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(a: socket.socket, b: socket.socket) -> None:
        try:
            while True:
                d = a.recv(65536)
                if not d:
                    break
                b.sendall(d)
        except OSError:
            pass
        finally:
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


def run_case(fn) -> None:
    env = Env.from_args(sys.argv)
    seed = int(os.environ.get("E2E_SEED", str(random.SystemRandom().randrange(1 << 30))))
    log(f"case {fn.__name__}, seed {seed} (rerun with E2E_SEED={seed}), work dir {env.work}")
    rng = random.Random(seed)
    ok = False
    try:
        fn(env, rng)
        ok = True
        log("PASS")
    except Failure as e:
        log(f"FAIL: {e}")
    finally:
        ok = env.cleanup(ok)
    sys.exit(0 if ok else 1)
