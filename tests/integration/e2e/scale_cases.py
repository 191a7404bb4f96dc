#!/usr/bin/env python3
"""End-to-end cases of scale: the memory budget over a backlog on many partitions.
Usage: scale_cases.py CASE   (ISS_BINARY_DIR and RGW_DIR from CTest; harness.py).
Knobs for a bigger run outside CI: SCALE_PARTITIONS, SCALE_MESSAGES (per partition),
SCALE_BUDGET_MIB, SCALE_PART_MIB."""
from __future__ import annotations

import json
import os

from harness import (Env, RssSampler, check, log, metric_sum, partition_counts, read_landed, run_case,
                     verify_exactly_once)


def memory_backlog(env: Env, rng) -> None:
    """A backlog on many partitions that would need far more than memory.max_buffered when each
    open object held its part: the daemon's RSS (sampled) stays under the budget plus the
    fixed overhead measured before any data arrived, objects are cut early (memory_limit),
    and every offset lands exactly once."""
    partitions = int(os.environ.get("SCALE_PARTITIONS", "200"))
    per_partition = int(os.environ.get("SCALE_MESSAGES", "250"))
    budget_mib = int(os.environ.get("SCALE_BUDGET_MIB", "16"))
    part_mib = int(os.environ.get("SCALE_PART_MIB", "8"))
    size = 1024
    broker = env.start_broker()
    bucket = env.make_bucket(f"e2e-memory-backlog-{rng.randrange(1 << 30):x}")
    n = partitions * per_partition
    # --partition per partition would take 200 produce runs; balanced batches of one
    # partition's share spread them evenly.
    out = env.produce(broker.address, "app", "events", "--create", str(partitions), "--balanced",
                      "--count", str(n), "--size", str(size), "--batch", str(per_partition))
    counts = partition_counts(out)
    check(sum(counts.values()) == n, f"iggy-produce reported {sum(counts.values())} of {n}")
    unbounded_mib = n * size / (1 << 20)
    cfg = env.config(bucket, broker.address, group=None, consumer="sink",
                     rotation={"max_records": 10_000_000, "max_bytes": "1GiB", "max_span": "0", "schedule": "0",
                               "idle": "30s"},
                     extra_s3={"part_size": f"{part_mib}MiB"})
    c = json.loads(cfg.read_text())
    c["memory"] = {"max_buffered": f"{budget_mib}MiB"}
    cfg.write_text(json.dumps(c, indent=2))
    d = env.start_daemon(cfg)
    sampler = RssSampler(d.pid)
    env.admin_address()
    env.wait_lag_zero(cfg, seconds=600)
    sampler.stop()
    metrics = env.scrape(env.admin_address())
    peak_buffered = metric_sum(metrics, "iggy_s3_sink_memory_buffered_peak_bytes")
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    text = (env.work / "sink.log").read_text()
    cuts = text.count("closing the largest open object early")
    landed = read_landed(env.download(bucket))
    verify_exactly_once(landed, counts, "app", "events")
    budget_kib = budget_mib << 10
    # Fixed overhead beyond the budget: the process at rest (code, libraries, TLS contexts, the
    # Iggy and S3 connections, per-partition bookkeeping) plus allocator slack. Stated, not
    # tuned: 40 MiB (the run logs what it measured).
    overhead_kib = 40 << 10
    log(f"{n} messages of {size} B on {partitions} partitions ({unbounded_mib:.0f} MiB of backlog; one part each "
        f"would be {partitions * part_mib} MiB): peak RSS {sampler.peak / 1024:.1f} MiB over {sampler.samples} samples, "
        f"budget {budget_mib} MiB, peak charged {peak_buffered / (1 << 20):.1f} MiB, {cuts} early cuts, "
        f"{landed.objects} objects")
    # Poll batches are sized from the average message seen so far: messages of varying size can
    # pass the estimate by a little (seen: 14 KB). 256 KiB of slack, stated.
    check(peak_buffered <= (budget_mib << 20) + (256 << 10),
          f"the budget's own peak {peak_buffered:.0f} passed memory.max_buffered ({budget_mib} MiB) + 256 KiB")
    check(sampler.peak <= budget_kib + overhead_kib,
          f"peak RSS {sampler.peak} KiB above {budget_mib} MiB + {overhead_kib >> 10} MiB of fixed overhead")
    check(cuts > 0, "no object was cut early: the backlog fit in the budget, the test proves nothing")


CASES = {"memory_backlog": memory_backlog}

if __name__ == "__main__":
    import sys
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print(f"usage: scale_cases.py {{{'|'.join(CASES)}}}", file=sys.stderr)
        sys.exit(2)
    run_case(CASES[sys.argv[1]])
