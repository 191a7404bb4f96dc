#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Benchmark: lib/s3 (signed and unsigned payload) vs Debian's awscli (/usr/bin/aws) and
rclone, uploading the same files to the same Ceph RGW in one run.

Datasets: 100 x 8 MiB and 1000 x 4 KiB random files (generated in a temp dir). Each tool
uploads each dataset to its own bucket with 8 requests in flight and single PUTs (awscli's
multipart threshold raised to 64 MB; rclone's upload cutoff is 200 MiB by default). Wall time
and CPU seconds (user + sys of the tool's process tree) per run; the table gives MiB/s,
objects/s and CPU seconds per GiB.

  tests/bench/s3_compare.py --build build [--rgw-dir DIR] [--repeat N]

Without --rgw-dir it starts its own RGW (scripts/rgw, memstore sized for the runs) and
stops it at the end. Never run by the test command.
"""
import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AWS = "/usr/bin/aws"  # Debian's awscli; a pyenv shim may shadow `aws`
RCLONE = shutil.which("rclone") or "/usr/bin/rclone"
CONCURRENCY = 8


def read_env(path):
    env = {}
    for line in Path(path).read_text().splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            env[k] = v
    return env


def make_dataset(root, name, count, size):
    d = Path(root) / name
    d.mkdir()
    for i in range(count):
        (d / f"f{i:05d}.bin").write_bytes(os.urandom(size))
    return d


def timed(cmd, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    secs = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.stderr.write(f"FAILED ({p.returncode}): {' '.join(map(str, cmd))}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}\n")
        raise SystemExit(1)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return secs, cpu, p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--rgw-dir")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    bench = Path(args.build).resolve() / "tests/bench/bench_s3"
    work = Path(tempfile.mkdtemp(prefix="s3bench-"))
    own_rgw = args.rgw_dir is None
    rgw_dir = Path(args.rgw_dir) if args.rgw_dir else work / "rgw"
    try:
        if own_rgw:
            e = dict(os.environ, RGW_MEMSTORE_BYTES=str(12 << 30))
            subprocess.run([ROOT / "scripts/rgw", "start", rgw_dir], env=e, check=True, stdout=subprocess.DEVNULL)
        rgw = read_env(rgw_dir / "env")
        data = work / "data"
        data.mkdir()
        sets = [("100 x 8 MiB", make_dataset(data, "big", 100, 8 << 20), 100, 100 * (8 << 20)),
                ("1000 x 4 KiB", make_dataset(data, "small", 1000, 4 << 10), 1000, 1000 * (4 << 10))]

        inherited = {k: v for k, v in os.environ.items() if k not in ("AWS_CA_BUNDLE", "AWS_PROFILE", "AWS_CONFIG_FILE")}
        base = dict(inherited, AWS_ACCESS_KEY_ID=rgw["RGW_ACCESS_KEY"], AWS_SECRET_ACCESS_KEY=rgw["RGW_SECRET_KEY"],
                    AWS_DEFAULT_REGION=rgw["RGW_REGION"], AWS_EC2_METADATA_DISABLED="true")
        aws_cfg = work / "aws-config"
        aws_cfg.write_text(f"[default]\nregion = {rgw['RGW_REGION']}\ns3 =\n  max_concurrent_requests = {CONCURRENCY}\n"
                           "  multipart_threshold = 64MB\n  multipart_chunksize = 64MB\n")
        aws_env = dict(base, AWS_CONFIG_FILE=str(aws_cfg))
        rc_env = dict(base, RCLONE_CONFIG_RGW_TYPE="s3", RCLONE_CONFIG_RGW_PROVIDER="Ceph",
                      RCLONE_CONFIG_RGW_ENDPOINT=rgw["RGW_ENDPOINT"], RCLONE_CONFIG_RGW_ACCESS_KEY_ID=rgw["RGW_ACCESS_KEY"],
                      RCLONE_CONFIG_RGW_SECRET_ACCESS_KEY=rgw["RGW_SECRET_KEY"], RCLONE_CONFIG_RGW_REGION=rgw["RGW_REGION"])
        env_file = str(rgw_dir / "env")

        tools = [
            ("iggy-s3-sink lib/s3, signed payload",
             lambda d, b: [bench, "--env", env_file, "--dir", d, "--bucket", b, "--payload", "signed", "--concurrency", str(CONCURRENCY)], base),
            ("iggy-s3-sink lib/s3, UNSIGNED-PAYLOAD",
             lambda d, b: [bench, "--env", env_file, "--dir", d, "--bucket", b, "--payload", "unsigned", "--concurrency", str(CONCURRENCY)], base),
            (f"awscli {subprocess.run([AWS, '--version'], capture_output=True, text=True).stdout.split()[0]}",
             lambda d, b: [AWS, "--endpoint-url", rgw["RGW_ENDPOINT"], "s3", "cp", "--recursive", "--only-show-errors", d, f"s3://{b}/bench/"], aws_env),
            (f"rclone {subprocess.run([RCLONE, 'version'], capture_output=True, text=True).stdout.split()[1]}",
             lambda d, b: [RCLONE, "copy", d, f"rgw:{b}/bench", "--transfers", str(CONCURRENCY), "--checkers", str(CONCURRENCY),
                           "--no-check-dest", "--s3-no-check-bucket"], rc_env),
        ]
        rows = []
        n = 0
        for set_name, d, count, nbytes in sets:
            for tool, cmd, env in tools:
                best = None
                for _ in range(args.repeat):
                    n += 1
                    bucket = f"bench-{n:03d}"
                    if "awscli" in tool or "rclone" in tool:
                        subprocess.run([AWS, "--endpoint-url", rgw["RGW_ENDPOINT"], "s3", "mb", f"s3://{bucket}"],
                                       env=aws_env, check=True, capture_output=True)
                    secs, cpu, out = timed(cmd(str(d), bucket), env)
                    if best is None or secs < best[0]:
                        best = (secs, cpu)
                    # Free the space (memstore keeps data until GC; shortened in scripts/rgw).
                    subprocess.run([AWS, "--endpoint-url", rgw["RGW_ENDPOINT"], "s3", "rb", "--force", f"s3://{bucket}"],
                                   env=aws_env, capture_output=True)
                secs, cpu = best
                rows.append((set_name, tool, secs, nbytes / (1 << 20) / secs, count / secs, cpu, cpu / (nbytes / (1 << 30))))
                print(f"{set_name:14} {tool:40} {secs:7.2f} s  {nbytes / (1 << 20) / secs:7.1f} MiB/s  "
                      f"{count / secs:7.1f} obj/s  CPU {cpu:6.2f} s  {cpu / (nbytes / (1 << 30)):7.2f} CPU s/GiB", flush=True)
        print()
        print(f"RGW 16 memstore on 127.0.0.1, {os.cpu_count()} cores (shared), {CONCURRENCY} requests in flight, single PUTs, "
              f"best of {args.repeat}")
        print()
        print("| dataset | client | wall s | MiB/s | objects/s | CPU s | CPU s per GiB |")
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
        for r in rows:
            print(f"| {r[0]} | {r[1]} | {r[2]:.2f} | {r[3]:.1f} | {r[4]:.1f} | {r[5]:.2f} | {r[6]:.2f} |")
    finally:
        if own_rgw:
            subprocess.run([ROOT / "scripts/rgw", "stop", rgw_dir], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
