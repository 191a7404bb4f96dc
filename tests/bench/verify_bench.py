#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How long `iggy-s3-sink verify` takes on a large bucket (a benchmark, not a test).

    tests/bench/verify_bench.py --build build [--objects 10000] [--partitions 4] [--repeat 3]

Starts the Iggy test broker and discard-s3 (keys and metadata only), produces OBJECTS messages
over PARTITIONS partitions, and lets `iggy-s3-sink run` write one object per message
(rotation.max_records 1) until `lag --wait-zero` says everything is committed. Then it times
`verify` (one listing, a HEAD per object with at most 32 in flight) REPEAT times and prints
the objects, the seconds and HEADs per second, with the load average (the machine is shared).
Only the standard library is used.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e_bench import Bench, log, loadavg  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--objects", type=int, default=10_000)
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    bargs = argparse.Namespace(build=args.build, messages=args.objects, size=100, partitions=args.partitions,
                               payload="synthetic", max_records=1, set=None, perf=None, scrape_ms=0, keep=False)
    b = Bench(bargs)
    try:
        b.start_broker_and_preload()
        endpoint = b.start_discard()
        env = b.aws_env()
        cfg = b.config("verify", endpoint, "bench", "json_lines", "none")
        data = json.loads(cfg.read_text())
        data["rotation"] = {"max_records": 1, "idle": "1s"}
        data["admin"] = {"listen": ""}
        cfg.write_text(json.dumps(data, indent=2))
        t0 = time.monotonic()
        d = subprocess.Popen([b.bin("iggy-s3-sink"), "run", "--config", str(cfg)], env=env,
                             stdout=open(b.work / "daemon.log", "w"), stderr=subprocess.STDOUT)
        b.procs.append(d)
        r = subprocess.run([b.bin("iggy-s3-sink"), "lag", "--config", str(cfg), "--wait-zero", "1800s"], env=env,
                           capture_output=True, text=True, timeout=2000)
        if r.returncode != 0:
            sys.exit(f"lag --wait-zero exited {r.returncode}: {r.stdout}{r.stderr}")
        log(f"{args.objects} objects written in {time.monotonic() - t0:.1f} s")
        d.terminate()
        d.wait(timeout=120)
        print(f"| objects | partitions | verify seconds | HEADs/s | exit | load |\n| --- | --- | --- | --- | --- | --- |")
        for _ in range(args.repeat):
            load = loadavg()
            t1 = time.monotonic()
            v = subprocess.run([b.bin("iggy-s3-sink"), "verify", "--config", str(cfg), "--json"], env=env,
                               capture_output=True, text=True, timeout=1800)
            secs = time.monotonic() - t1
            doc = json.loads(v.stdout.splitlines()[0]) if v.stdout else {}
            n = sum(p["objects"] for p in doc.get("partitions", []))
            print(f"| {n} | {args.partitions} | {secs:.2f} | {n / secs:,.0f} | {v.returncode} | {load:.2f} |", flush=True)
            if v.returncode != 0:
                log(f"verify exited {v.returncode}: {v.stdout[:2000]}{v.stderr[-2000:]}")
    finally:
        b.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
