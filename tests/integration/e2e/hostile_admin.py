#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Hostile clients of the daemon's admin port (docs/operations.md, "The admin port under
hostile clients"), for e2e.faults.admin_hostile and tests/bench/e2e_bench.py --hostile.
Only the standard library."""
from __future__ import annotations

import resource
import socket
import threading
import time


def raise_nofile(want: int) -> int:
    """Raises this process's RLIMIT_NOFILE soft limit towards `want` (at most the hard
    limit); returns the soft limit in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def split(address: str) -> tuple[str, int]:
    host, port = address.rsplit(":", 1)
    return host.strip("[]"), int(port)


def idle_connections(address: str, n: int, keep: int, stop: threading.Event | None = None,
                     per_second: float = 0) -> int:
    """Opens `n` TCP connections to `address` that send nothing, keeping at most `keep` open
    at once (the oldest closed first: fd use stays bounded); `per_second` > 0 paces them.
    Returns the number of connects that succeeded."""
    host, port = split(address)
    held: list[socket.socket] = []
    made = 0
    start = time.monotonic()
    for i in range(n):
        if stop is not None and stop.is_set():
            break
        if per_second > 0:
            ahead = start + i / per_second - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)
        s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(10)
        try:
            s.connect((host, port))
            made += 1
        except OSError:
            s.close()
            continue
        held.append(s)
        if len(held) > keep:
            held.pop(0).close()
    for s in held:
        s.close()
    return made


def exchange(address: str, data: bytes, timeout: float = 30) -> tuple[bytes, bool]:
    """Sends `data`, then reads until the server closes: (what came back, whether the server
    closed within `timeout`)."""
    host, port = split(address)
    got = b""
    with socket.create_connection((host, port), timeout=timeout) as s:
        try:
            s.sendall(data)
        except OSError:
            pass  # the server answered and closed before taking everything: read what it said
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                return got, False
            except OSError:
                return got, True
            if not chunk:
                return got, True
            got += chunk
    return got, False


def slow_headers(address: str, every: float = 1.0, limit: float = 60) -> float | None:
    """Sends a request line, then one header line every `every` seconds and never the end of
    the header: seconds until the server closed the connection, or None within `limit`."""
    host, port = split(address)
    start = time.monotonic()
    with socket.create_connection((host, port), timeout=10) as s:
        s.sendall(b"GET /metrics HTTP/1.1\r\n")
        s.settimeout(every)
        i = 0
        while time.monotonic() - start < limit:
            try:
                if s.recv(1) == b"":
                    return time.monotonic() - start
            except socket.timeout:
                pass
            except OSError:
                return time.monotonic() - start
            try:
                s.sendall(f"X-Slow-{i}: a\r\n".encode())
            except OSError:
                return time.monotonic() - start
            i += 1
    return None


BIG_HEADER = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (1 << 20) + b"\r\n\r\n"
GARBAGE = b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\x00garbage\xff\xfe\r\n\r\n"


class Hostile:
    """A hostile client running in threads until halt(): idle connections at `idle_rate` per
    second (at most `keep` held), and every `every` seconds a 1 MiB header and garbage, plus
    one slow-headers connection at a time."""

    def __init__(self, address: str, idle_rate: float = 500, keep: int = 500, every: float = 0.5) -> None:
        self.address, self.stop = address, threading.Event()
        self.counts = {"idle": 0, "big": 0, "garbage": 0, "slow": 0}
        self.threads = [threading.Thread(target=self._idle, args=(idle_rate, keep), daemon=True),
                        threading.Thread(target=self._requests, args=(every,), daemon=True),
                        threading.Thread(target=self._slow, daemon=True)]
        for t in self.threads:
            t.start()

    def _idle(self, rate: float, keep: int) -> None:
        while not self.stop.is_set():
            self.counts["idle"] += idle_connections(self.address, int(rate), keep, self.stop, rate)

    def _requests(self, every: float) -> None:
        while not self.stop.wait(every):
            for key, data in (("big", BIG_HEADER), ("garbage", GARBAGE)):
                try:
                    exchange(self.address, data, timeout=5)
                    self.counts[key] += 1
                except OSError:
                    pass

    def _slow(self) -> None:
        while not self.stop.is_set():
            try:
                slow_headers(self.address, every=1.0, limit=30)
                self.counts["slow"] += 1
            except OSError:
                self.stop.wait(1)

    def halt(self) -> dict[str, int]:
        self.stop.set()
        for t in self.threads:
            t.join(timeout=60)
        return dict(self.counts)
