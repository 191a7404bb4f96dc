#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The RSS verdict of soak.long.rss (soak.py --rss-every) on made-up samples: the least-squares
slope is right, a flat but noisy series passes, a series that grows over the second half fails
and names the daemon, growth only in the first half (warm-up) passes."""
from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from soak import RssTrend, slope_per_hour  # noqa: E402
from harness import Failure  # noqa: E402  (soak put the harness on the path)

HOUR = 3600.0


def trend(series: dict[str, list[tuple[float, int]]]) -> RssTrend:
    t = RssTrend.__new__(RssTrend)  # no daemons, no sampling thread: only the verdict
    t.points = series
    return t


def samples(kib_at) -> list[tuple[float, int]]:
    return [(s, int(kib_at(s))) for s in range(10, 7201, 10)]


def expect(cond: bool, what: str) -> None:
    if not cond:
        raise Failure(what)


def main() -> None:
    line = [(0.0, 20480), (HOUR, 20480 + 1024), (2 * HOUR, 20480 + 2048)]
    expect(abs(slope_per_hour(line) - 1.0) < 1e-9, f"slope of 1 MiB/h computed as {slope_per_hour(line)}")

    rng = random.Random(7)
    flat = samples(lambda s: 20480 + rng.uniform(-3072, 3072))
    warm = samples(lambda s: 16384 + min(s, HOUR) / HOUR * 8192 + rng.uniform(-512, 512))
    leak = samples(lambda s: 20480 + s / HOUR * 5 * 1024 + rng.uniform(-512, 512))
    expect(trend({"a": flat, "b": warm}).verdict(7200, 4.0) is None, "flat and warm-up-only series failed")
    why = trend({"a": flat, "c": leak}).verdict(7200, 4.0)
    expect(why is not None and "daemon c" in why and "daemon a" not in why, f"5 MiB/h leak not caught: {why!r}")
    print("PASS")


if __name__ == "__main__":
    try:
        main()
    except Failure as e:
        print(f"FAIL: {e}")
        sys.exit(1)
