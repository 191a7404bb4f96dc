# SPDX-License-Identifier: Apache-2.0
"""A network namespace of the test's own (`ip netns`), for the network faults of issue 40
(docs/operations.md, Faults): the daemon runs inside it (`prefix()`), its only interface is a
loopback of its own, and nft rules there drop packets without a reset (`drop`/`allow`) without
touching the host's firewall. The servers (Iggy, RGW) stay outside; proxies bridge them
(harness.SwitchableProxy with a listening socket made inside, `listen_socket`).

Needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN), `ip` (iproute2) and `nft` (nftables, installed by
scripts/install-deps). `require()` says what is missing: outside CI the case is skipped with
a SKIP line and exit 77 (CTest shows it skipped); with CI=true it fails.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

from harness import Env, check, log

CLONE_NEWNET = 0x40000000
SKIP = 77
_libc = ctypes.CDLL(None, use_errno=True)


def _setns(fd: int) -> None:
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"setns: {os.strerror(err)}")


def enter_thread(path: str) -> None:
    """Moves the calling thread (only it) into the network namespace at `path`; sockets it
    makes from now on, and processes it starts, live there."""
    fd = os.open(path, os.O_RDONLY)
    try:
        _setns(fd)
    finally:
        os.close(fd)


def skip_or_fail(case: str, why: str) -> None:
    """A case that cannot run here: SKIP (exit 77) outside CI, a failure with CI=true."""
    if os.environ.get("CI") == "true":
        print(f"FAIL {case}: {why} (CI=true: a skipped fault test is a failure)", flush=True)
        sys.exit(1)
    print(f"SKIP {case}: {why}", flush=True)
    sys.exit(SKIP)


def _root_is_mount() -> bool:
    """Whether / is a mount point (field 5 of /proc/self/mountinfo; os.path.ismount("/") is
    always true)."""
    try:
        return any(line.split()[4] == "/" for line in Path("/proc/self/mountinfo").read_text().splitlines())
    except OSError:
        return True  # nothing to tell: let `ip netns exec` say


def require(case: str, *tools: str) -> None:
    """Root, `ip` and the named tools (e.g. "nft"), or skip_or_fail."""
    if os.geteuid() != 0:
        skip_or_fail(case, "needs root (it makes a network namespace and firewall rules in it)")
    for t in ("ip", *tools):
        if shutil.which(t) is None:
            skip_or_fail(case, f"`{t}` not found: run scripts/install-deps (iproute2, nftables, socat, openssl)")
    if not _root_is_mount():
        # `ip netns exec` makes / a slave mount in a mount namespace of its own; in a chroot
        # whose root is a plain directory that fails ("mount --make-rslave /": Invalid argument).
        skip_or_fail(case, "/ is not a mount point (a chroot?): `ip netns exec` cannot run here; run the "
                           "suite on a machine, VM or container, or chroot from `unshare -m` after "
                           "`mount --rbind ROOT ROOT`")


class NetNs:
    """A named network namespace with its loopback up, deleted by env.cleanup; `etc` files go
    to /etc/netns/NAME/, which `ip netns exec` bind-mounts over /etc (hosts, resolv.conf)."""

    def __init__(self, env: Env, case: str, etc: dict[str, str] | None = None):
        self.name = f"iss-e2e-{os.getpid()}"
        self.path = f"/run/netns/{self.name}"
        self.etc_dir = Path("/etc/netns") / self.name
        r = subprocess.run(["ip", "netns", "add", self.name], capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            skip_or_fail(case, f"ip netns add failed: {r.stderr.strip()} (needs CAP_SYS_ADMIN)")
        env.cleanups.append(self.delete)
        self.ip("link", "set", "lo", "up")
        if etc:
            self.etc_dir.mkdir(parents=True, exist_ok=True)
            for name, text in etc.items():
                (self.etc_dir / name).write_text(text)
        log(f"network namespace {self.name}")

    def prefix(self) -> list[str]:
        return ["ip", "netns", "exec", self.name]

    def run(self, *cmd: str) -> None:
        r = subprocess.run([*self.prefix(), *cmd], capture_output=True, text=True, timeout=30)
        check(r.returncode == 0, f"in {self.name}: {' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()}")

    def ip(self, *args: str) -> None:
        self.run("ip", *args)

    @contextlib.contextmanager
    def entered(self):
        """The calling thread inside the namespace for the block."""
        back = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        try:
            enter_thread(self.path)
            yield
        finally:
            _setns(back)
            os.close(back)

    def listen_socket(self) -> socket.socket:
        """A TCP socket listening on 127.0.0.1 (a port the OS picked) inside the namespace."""
        with self.entered():
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", 0))
            s.listen(64)
        return s

    def drop(self, port: int) -> None:
        """Drops every TCP packet to and from `port` inside the namespace, silently (no reset,
        no ICMP): connections to it hang, new ones never complete their handshake."""
        rules = ("table inet iss_e2e {\n chain out {\n  type filter hook output priority 0; policy accept;\n"
                 f"  tcp dport {port} drop\n  tcp sport {port} drop\n }}\n}}\n")
        r = subprocess.run([*self.prefix(), "nft", "-f", "-"], input=rules, capture_output=True, text=True,
                           timeout=30)
        check(r.returncode == 0, f"nft in {self.name}: {r.stderr.strip()}")

    def allow(self) -> None:
        """Removes the drop rules."""
        self.run("nft", "delete", "table", "inet", "iss_e2e")

    def delete(self) -> None:
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True, timeout=30)
        shutil.rmtree(self.etc_dir, ignore_errors=True)
