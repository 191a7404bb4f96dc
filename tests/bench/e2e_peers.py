# SPDX-License-Identifier: Apache-2.0
"""Peers of the end-to-end benchmark (tests/bench/e2e_bench.py --peer-cmd): other programs that
move the same Iggy topic to the same S3 store, measured like the daemon, and the crash runs
(--kills) that count what each contestant leaves in the bucket after SIGKILLs.

A peer is a command (--peer-cmd, split like a shell would, no shell run) and an optional config
template (--peer-config: a file, or a directory whose files are all filled in, keeping their
relative paths). Before each run the bench replaces these placeholders in the templates and in
the command's arguments, and writes the templates under the run's directory (@DIR@):

  @IGGY_ADDRESS@ @IGGY_USER@ @IGGY_PASSWORD@ @IGGY_PROTOCOL@   the Iggy server and login
  @STREAM@ @TOPIC@ @PARTITIONS@ @MESSAGES@   the input (the topic preloaded by the bench)
  @CONSUMER_GROUP@   a fresh consumer group per run: the peer must consume with it, the bench
                     waits for its committed offsets to reach the end (`iggy-s3-sink lag`)
  @S3_ENDPOINT@ @S3_BUCKET@ @S3_PREFIX@ @S3_REGION@ @AWS_ACCESS_KEY_ID@ @AWS_SECRET_ACCESS_KEY@
  @MAX_RECORDS@      records per object (the daemon's rotation.max_records)
  @DIR@              the run's directory (configs, state, logs)
  @BENCH_DIR@        tests/bench of this checkout (e.g. @BENCH_DIR@/peers/node-sdk-consumer.mjs)
  @ENV:NAME@         the environment variable NAME (an error when unset)

The command must exec the peer itself (no shell or wrapper left as the parent): its CPU time
and peak RSS are read from wait4() when it exits, so they cover the peer's whole run, including
the flush it does on SIGTERM. Its objects must be JSON lines with `stream`, `topic`,
`partition_id` and `offset` in each line (Iggy's s3_sink with output_format json_lines and
include_metadata, the daemon's json_lines): the crash runs count them per message.
Only the standard library is used.
"""
from __future__ import annotations

import json
import os
import random
import re
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration" / "e2e"))
from harness import read_landed  # noqa: E402  (the e2e tests' reader of json_lines objects)

PLACEHOLDER = re.compile(r"@(ENV:[A-Za-z_][A-Za-z0-9_]*|[A-Z][A-Z0-9_]*)@")


def fill(text: str, values: dict[str, str], where: str) -> str:
    """`text` with every @NAME@ replaced; an unknown name or an unset @ENV:NAME@ exits naming
    `where` (the template or the command)."""
    def one(m: re.Match) -> str:
        name = m.group(1)
        if name.startswith("ENV:"):
            var = name[4:]
            if var not in os.environ:
                sys.exit(f"{where}: @{name}@ needs the environment variable {var}, which is not set")
            return os.environ[var]
        if name not in values:
            sys.exit(f"{where}: unknown placeholder @{name}@ (known: {', '.join(sorted(values))}, @ENV:NAME@)")
        return values[name]
    return PLACEHOLDER.sub(one, text)


@dataclass
class Peer:
    name: str
    cmd: str
    config: Path | None

    def materialize(self, run_dir: Path, values: dict[str, str]) -> list[str]:
        """Writes the filled templates under `run_dir`; returns the filled command line."""
        run_dir.mkdir(parents=True, exist_ok=True)
        values = dict(values, DIR=str(run_dir))
        if self.config is not None:
            files = [self.config] if self.config.is_file() else sorted(p for p in self.config.rglob("*") if p.is_file())
            for f in files:
                rel = f.name if self.config.is_file() else f.relative_to(self.config)
                dest = run_dir / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_text(fill(f.read_text(), values, str(f)))
        argv = [fill(a, values, f"--peer-cmd of {self.name}") for a in shlex.split(self.cmd)]
        if not argv:
            sys.exit(f"--peer-cmd of {self.name} is empty")
        return argv


def parse_peers(cmds: list[str], configs: list[str], names: list[str]) -> list[Peer]:
    """--peer-cmd, --peer-config and --peer-name, paired in order (config `-`: none)."""
    if configs and len(configs) != len(cmds):
        sys.exit(f"--peer-config given {len(configs)} times for {len(cmds)} --peer-cmd (use - for none)")
    if names and len(names) != len(cmds):
        sys.exit(f"--peer-name given {len(names)} times for {len(cmds)} --peer-cmd")
    peers = []
    for i, cmd in enumerate(cmds):
        cfg = configs[i] if configs else "-"
        path = None if cfg == "-" else Path(cfg).resolve()
        if path is not None and not path.exists():
            sys.exit(f"--peer-config {cfg}: no such file or directory")
        name = names[i] if names else Path(shlex.split(cmd)[0]).name if cmd.strip() else f"peer{i + 1}"
        peers.append(Peer(name, cmd, path))
    return peers


def wait_rusage(p: subprocess.Popen, timeout: float) -> tuple[int, float, float, int]:
    """Waits for `p` (SIGKILL after `timeout` s); (exit status as Popen gives it, user s, sys s,
    peak RSS KiB) from wait4()."""
    deadline = time.monotonic() + timeout
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid == p.pid:
            break
        if time.monotonic() > deadline:
            p.kill()
            pid, status, ru = os.wait4(p.pid, 0)
            break
        time.sleep(0.02)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, ru.ru_utime, ru.ru_stime, ru.ru_maxrss


def wait_lag_zero(bench, lag_cfg: Path, p: subprocess.Popen, who: str, log_path: Path) -> None:
    """`iggy-s3-sink lag --wait-zero 900s` on the contestant's consumer group while `p` runs;
    exits naming `who` and its log when the lag does not reach 0 or `p` exits first."""
    lag = subprocess.Popen([bench.bin("iggy-s3-sink"), "lag", "--config", str(lag_cfg), "--wait-zero", "900s"],
                           env=bench.aws_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    while lag.poll() is None and p.poll() is None:
        time.sleep(0.05)
    if lag.poll() is None:  # the contestant exited first
        lag.kill()
    out = lag.communicate()[0]
    if lag.returncode != 0 or p.poll() is not None:
        if p.poll() is None:
            p.kill()
        tail = log_path.read_text(errors="replace")[-3000:] if log_path.exists() else ""
        sys.exit(f"{who}: lag --wait-zero exited {lag.returncode}, the contestant "
                 f"{'exited ' + str(p.returncode) if p.poll() is not None else 'was alive'}:\n{out}\n"
                 f"{log_path}:\n{tail}")


class Contestant:
    """The daemon or a peer, started on one consumer group and prefix (`cell`)."""

    def __init__(self, bench, name: str, peer: Peer | None) -> None:
        self.bench, self.name, self.peer = bench, name, peer

    def start(self, cell: str, endpoint: str, bucket: str, lag_cfg: Path, log_name: str) -> subprocess.Popen:
        b = self.bench
        logf = open(b.work / log_name, "a")
        if self.peer is None:
            argv = [b.bin("iggy-s3-sink"), "run", "--config", str(lag_cfg)]
        else:
            argv = self.peer.materialize(b.work / cell, b.peer_values(cell, endpoint, bucket))
        p = subprocess.Popen(argv, env=b.aws_env(), stdout=logf, stderr=subprocess.STDOUT, cwd=b.work / cell
                             if self.peer else None)
        b.procs.append(p)
        return p


def run_peer_cell(bench, peer: Peer, target: str, endpoint: str, bucket: str, cell_spec) -> dict:
    """One throughput run of `peer`: from its start until its consumer group's offsets reach the
    end (lag --wait-zero), then SIGTERM and its exit (a peer that buffers flushes then); its
    CPU and peak RSS from wait4()."""
    from e2e_bench import cpu_seconds, loadavg, log  # the bench's measures
    cell = f"{target}-{re.sub(r'[^a-z0-9]+', '-', peer.name.lower())}-{int(time.time())}"
    lag_cfg = bench.config(cell, endpoint, bucket, cell_spec)
    load = loadavg()
    others = bench.other_pids(target)
    before = {k: bench.cpu_of(pids) for k, pids in others.items()}
    (bench.work / cell).mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    p = Contestant(bench, peer.name, peer).start(cell, endpoint, bucket, lag_cfg, f"{cell}.log")
    wait_lag_zero(bench, lag_cfg, p, f"peer {peer.name}", bench.work / f"{cell}.log")
    t_lag = time.monotonic()
    cpu_lag0 = sum(cpu_seconds(p.pid))  # CPU until lag 0 (before the flush on SIGTERM)
    p.send_signal(signal.SIGTERM)
    rc, user, sys_s, hwm = wait_rusage(p, 300)
    t1 = time.monotonic()
    other_cpu = {k: bench.cpu_of(pids) - before[k] for k, pids in others.items()}
    secs = t1 - t0
    n, size = bench.args.messages, bench.args.size
    res = {"target": target, "name": peer.name, "seconds": secs, "lag_seconds": t_lag - t0,
           "msgs_per_s": n / secs, "mb_per_s": n * size / 1e6 / secs, "cpu_user": user, "cpu_sys": sys_s,
           "cpu": user + sys_s, "cpu_at_lag0": cpu_lag0, "rss_mib": hwm / 1024, "load": load, "exit": rc,
           "broker_cpu": other_cpu.get("broker"), "s3_cpu": other_cpu.get("s3")}
    log(f"peer {peer.name} on {target}: lag 0 after {t_lag - t0:.1f} s, exited {rc} after {secs:.1f} s, "
        f"{res['msgs_per_s']:.0f} msg/s, cpu {user:.1f}+{sys_s:.1f} s ({cpu_lag0:.1f} s at lag 0), "
        f"max RSS {hwm / 1024:.0f} MiB, load {load:.2f}")
    return res


def kill_targets(total: int, kills: int, rng: random.Random) -> list[int]:
    """Where the kills strike, in messages committed by the group: kill i when the group has
    committed at least target i, the targets spread over the run (i+1)/(kills+1) of `total`,
    each moved by up to a quarter of that step (seeded); strictly increasing, in (0, total)."""
    step = total / (kills + 1)
    return [max(1, min(total - 1, round(step * (i + 1) + rng.uniform(-step / 4, step / 4)))) for i in range(kills)]


def kill_run(bench, contestant: Contestant, endpoint: str, bucket: str, cell_spec, kills: int,
             rng: random.Random, expected: dict[int, int]) -> dict:
    """`kills` SIGKILLs of `contestant`, each when its consumer group has committed at least the
    next of `kill_targets` (checked every 0.1 s with `lag --json`; so every kill falls inside the
    run whatever the contestant's speed), restarted each time, then a last run to lag 0 and
    SIGTERM; then every message counted in the bucket under its prefix: missing, duplicated
    (extra copies), `.lost` markers."""
    from e2e_bench import loadavg, log
    cell = f"kills-{re.sub(r'[^a-z0-9]+', '-', contestant.name.lower())}-{int(time.time())}"
    lag_cfg = bench.config(cell, endpoint, bucket, cell_spec)
    (bench.work / cell).mkdir(parents=True, exist_ok=True)
    load = loadavg()
    t0 = time.monotonic()
    moments: list[float] = []
    committed: list[int] = []
    targets = kill_targets(sum(expected.values()), kills, rng)
    for i, target in enumerate(targets):
        p = contestant.start(cell, endpoint, bucket, lag_cfg, f"{cell}.log")
        started = time.monotonic()
        while p.poll() is None and time.monotonic() - started < 300 and committed_messages(bench, lag_cfg) < target:
            time.sleep(0.1)
        alive = p.poll() is None
        p.kill()
        p.wait()
        moments.append(round(time.monotonic() - started, 2))
        committed.append(committed_messages(bench, lag_cfg))
        if not alive:
            sys.exit(f"{contestant.name} exited ({p.returncode}) before kill {i + 1}: {bench.work / (cell + '.log')}")
        log(f"{contestant.name}: SIGKILL {i + 1}/{kills} {moments[-1]:.2f} s after its start, target {target}, "
            f"{committed[-1]} messages committed by the group")
    p = contestant.start(cell, endpoint, bucket, lag_cfg, f"{cell}.log")
    wait_lag_zero(bench, lag_cfg, p, f"{contestant.name} after the kills", bench.work / f"{cell}.log")
    p.send_signal(signal.SIGTERM)
    rc, *_ = wait_rusage(p, 300)
    secs = time.monotonic() - t0
    dest = bench.work / f"dl-{cell}"
    dest.mkdir()
    bench.aws("s3", "cp", "--recursive", "--only-show-errors", f"s3://{bucket}/bench/{cell}", str(dest))
    res = dict(count_landed(dest, expected, bench.stream, "events"), name=contestant.name, kills=kills,
               moments=moments, committed=committed, seconds=secs, load=load, final_exit=rc)
    log(f"{contestant.name} after {kills} SIGKILLs: {res['records']} records in {res['objects']} objects, "
        f"{res['missing']} missing, {res['duplicates']} duplicates, {res['unexpected']} unexpected, "
        f"{res['lost_markers']} .lost markers")
    return res


def committed_messages(bench, lag_cfg: Path) -> int:
    """Messages the consumer group has committed over all partitions (`lag --json`: messages
    minus lag); 0 before the group exists. The daemon commits what is in S3; a peer that
    commits on poll, what it has read."""
    r = subprocess.run([bench.bin("iggy-s3-sink"), "lag", "--config", str(lag_cfg), "--json"], env=bench.aws_env(),
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        sys.exit(f"lag --json exited {r.returncode}: {r.stdout}{r.stderr}")
    return sum(int(row["messages"]) - int(row["lag"]) for row in json.loads(r.stdout)["partitions"])


def count_landed(root: Path, expected: dict[int, int], stream: str, topic: str) -> dict:
    """Counts the JSON-lines objects downloaded under `root` against `expected` (partition id ->
    message count, offsets 0..n-1 of `stream`/`topic`): messages missing, extra copies
    (duplicates), records that were never produced (unexpected), and the s3_sink's `.lost`
    markers (removed before reading: they are not JSON lines)."""
    lost_markers = list(root.rglob("*.lost"))
    for f in lost_markers:
        f.unlink()
    landed = read_landed(root)
    missing = sum(1 for pid, n in expected.items() for off in range(n)
                  if landed.count.get((stream, topic, pid, off), 0) == 0)
    dups = sum(c - 1 for c in landed.count.values() if c > 1)
    extra = sum(1 for k in landed.count if k[:2] != (stream, topic) or k[2] not in expected or k[3] >= expected[k[2]])
    return {"objects": landed.objects, "records": landed.records, "missing": missing, "duplicates": dups,
            "unexpected": extra, "lost_markers": len(lost_markers)}
