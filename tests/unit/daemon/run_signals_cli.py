# SPDX-License-Identifier: Apache-2.0
"""CLI test of `iggy-s3-sink run` and stop signals, with nothing listening anywhere.

1. A SIGTERM that is already pending when main() starts (the process is stopped there with a
   ptrace breakpoint, the signal sent, the process let go): it must not die of the signal
   (status -15); the signal is blocked before main and becomes a clean stop (exit 0). This is
   the deterministic form of "SIGTERM in the first milliseconds after exec": a loop that
   signals right after spawning cannot pass for any program, since a signal that is pending
   when the kernel first returns to the new program kills it before its first instruction.
2. SIGTERM while Iggy is unreachable (the daemon retrying its connect) with nothing buffered:
   exit 0 at once, not after shutdown.grace.
3. SIGHUP in that state: an invalid file is refused (its problem logged at error, the daemon
   runs on); a valid one restarts the pipeline at once (nothing to drain); SIGTERM after it
   still exits 0 at once.

usage: run_signals_cli.py BINARY [ROUNDS]
"""
from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def fail(msg: str) -> None:
    print(f"FAIL: {msg}", flush=True)
    sys.exit(1)

PTRACE_TRACEME, PTRACE_PEEKTEXT, PTRACE_POKETEXT, PTRACE_CONT = 0, 1, 4, 7
PTRACE_GETREGS, PTRACE_SETREGS, PTRACE_DETACH = 12, 13, 17
RIP = 16  # index of rip in x86-64 struct user_regs_struct (27 unsigned longs)

libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
libc.ptrace.restype = ctypes.c_long


def ptrace(req: int, pid: int, addr: int = 0, data=0) -> int:
    ctypes.set_errno(0)
    r = libc.ptrace(req, pid, ctypes.c_void_p(addr), data if isinstance(data, ctypes.c_void_p) else ctypes.c_void_p(data))
    if r == -1 and ctypes.get_errno() != 0:
        raise OSError(ctypes.get_errno(), f"ptrace({req})")
    return r


def symbol_offset(binary: str, name: str) -> int:
    """The link-time address of a function (PIE: an offset from the load base)."""
    out = subprocess.run(["nm", "--defined-only", binary], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in ("T", "t") and parts[2] == name:
            return int(parts[0], 16)
    fail(f"no symbol {name} in {binary}")
    return 0


def load_base(pid: int, binary: str) -> int:
    real = os.path.realpath(binary)
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        f = line.split()
        if len(f) >= 6 and os.path.realpath(f[5]) == real and int(f[2], 16) == 0:
            return int(f[0].split("-")[0], 16)
    fail("the executable is not mapped")
    return 0


def wait_exit(pid: int, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r, st = os.waitpid(pid, os.WNOHANG)
        if r == pid:
            return -os.WTERMSIG(st) if os.WIFSIGNALED(st) else os.WEXITSTATUS(st)
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    fail(f"no exit within {timeout} s")
    return 0


def run_signalled_at(binary: str, offset: int, args: list[str], err_path: Path) -> tuple[int, str]:
    """Starts BINARY ARGS stopped at exec, runs it to the breakpoint at `offset`, sends SIGTERM
    while it is stopped there, lets it go; returns (status, stderr). Status < 0: killed."""
    pid = os.fork()
    if pid == 0:
        try:
            fd = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(fd, 2)
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
            libc.ptrace(PTRACE_TRACEME, 0, None, None)
            os.execv(binary, [binary] + args)
        finally:
            os._exit(127)
    _, st = os.waitpid(pid, 0)  # stopped at exec (SIGTRAP), before any instruction of the program
    if not (os.WIFSTOPPED(st) and os.WSTOPSIG(st) == signal.SIGTRAP):
        fail(f"the child did not stop at exec: {st}")
    addr = load_base(pid, binary) + offset
    word = ptrace(PTRACE_PEEKTEXT, pid, addr) & 0xFFFFFFFFFFFFFFFF
    ptrace(PTRACE_POKETEXT, pid, addr, (word & ~0xFF) | 0xCC)  # int3
    ptrace(PTRACE_CONT, pid, 0, 0)
    _, st = os.waitpid(pid, 0)
    if not (os.WIFSTOPPED(st) and os.WSTOPSIG(st) == signal.SIGTRAP):
        fail(f"the child did not reach the breakpoint: {st}")
    regs = (ctypes.c_ulong * 27)()
    ptrace(PTRACE_GETREGS, pid, 0, ctypes.c_void_p(ctypes.addressof(regs)))
    if regs[RIP] != addr + 1:
        fail(f"stopped at {regs[RIP]:#x}, not at the breakpoint {addr:#x}")
    ptrace(PTRACE_POKETEXT, pid, addr, word)
    regs[RIP] = addr
    ptrace(PTRACE_SETREGS, pid, 0, ctypes.c_void_p(ctypes.addressof(regs)))
    os.kill(pid, signal.SIGTERM)  # pending while stopped at the first instruction of main()
    ptrace(PTRACE_DETACH, pid, 0, 0)
    rc = wait_exit(pid, 30)
    return rc, err_path.read_text()


def closed_port() -> socket.socket:
    """A bound, non-listening socket: connecting to its port is refused (kept open meanwhile)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    return s


def write_config(d: Path, iggy_port: int, s3_port: int, grace: str) -> Path:
    cfg = d / "run.yaml"
    cfg.write_text(
        f"""iggy: {{address: "127.0.0.1:{iggy_port}", username: iggy, password: pw, consumer: sig-test}}
sources: [{{stream: app, topics: [events]}}]
s3:
  endpoint: "http://127.0.0.1:{s3_port}"
  bucket: sig-test
  access_key_id: AK
  secret_access_key: SK
  conditional_writes: "off"
shutdown: {{grace: {grace}}}
log: {{level: info}}
"""
    )
    return cfg


def main() -> None:
    binary = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    iggy = closed_port()
    s3 = closed_port()
    with tempfile.TemporaryDirectory() as tmp:
        cfg = write_config(Path(tmp), iggy.getsockname()[1], s3.getsockname()[1], "20s")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        # A scripts/sanitize run's options go through (docs/testing.md, Sanitizers).
        env.update({k: v for k, v in os.environ.items() if k.endswith("SAN_OPTIONS")})

        # 1. SIGTERM pending when main() starts, several times.
        main_offset = symbol_offset(binary, "main")
        codes: dict[int, int] = {}
        for i in range(rounds):
            rc, err = run_signalled_at(binary, main_offset, ["run", "--config", str(cfg)], Path(tmp) / "err.log")
            codes[rc] = codes.get(rc, 0) + 1
            if rc != 0:
                fail(f"round {i}: SIGTERM pending at main(): status {rc} (want 0; -15 is death by the signal): {err}")
            if "signal 15: stopping" not in err:
                fail(f"round {i}: the signal was not handled as a stop by the daemon: {err}")
        print(f"SIGTERM pending at main(): {rounds} rounds, exit codes {codes}", flush=True)

        # 2. SIGTERM while the Iggy connect is being retried, nothing buffered.
        p = subprocess.Popen([binary, "run", "--config", str(cfg)], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True, env=env)
        seen = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = p.stderr.readline()
            if not line:
                break
            seen.append(line)
            if "connect" in line and "retrying" in line:
                break
        else:
            p.kill()
            fail("no Iggy connect retry logged within 30 s: " + "".join(seen))
        if p.poll() is not None:
            fail(f"daemon exited {p.returncode} before the signal: " + "".join(seen))
        t0 = time.monotonic()
        p.send_signal(signal.SIGTERM)
        try:
            out, _ = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            fail("no exit within 30 s of SIGTERM (shutdown.grace is 20 s)")
        took = time.monotonic() - t0
        print(f"SIGTERM while Iggy is unreachable: exit {p.returncode} after {took:.2f} s", flush=True)
        if p.returncode != 0:
            fail(f"exit {p.returncode}, want 0: " + "".join(seen) + out)
        if took > 5:
            fail(f"took {took:.1f} s to stop with nothing buffered (want < 5 s; shutdown.grace is 20 s)")

        # 3. SIGHUP while the Iggy connect is being retried: an invalid file is refused (logged
        #    at error, the daemon goes on); a valid one restarts at once (nothing buffered, so
        #    nothing to drain), and SIGTERM still stops it at once afterwards.
        p = subprocess.Popen([binary, "run", "--config", str(cfg)], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True, env=env)
        seen = []

        def wait_for(pattern: str, seconds: float = 30) -> None:
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                line = p.stderr.readline()
                if not line:
                    break
                seen.append(line)
                if pattern in line:
                    return
            p.kill()
            fail(f"no '{pattern}' logged within {seconds} s: " + "".join(seen))

        wait_for("retrying")
        good = cfg.read_text()
        cfg.write_text(good.replace("consumer: sig-test", "consumer: sig-test, bogus_key: 1"))
        p.send_signal(signal.SIGHUP)
        wait_for("iggy.bogus_key: unknown key")
        if not any(" error " in line and "invalid configuration" in line for line in seen):
            fail("the refused reload is not logged at error: " + "".join(seen))
        if p.poll() is not None:
            fail(f"daemon exited {p.returncode} on an invalid reload: " + "".join(seen))
        cfg.write_text(good.replace("consumer: sig-test", "consumer: sig-test-2"))
        p.send_signal(signal.SIGHUP)
        wait_for("restarting with the reloaded configuration")
        wait_for("retrying")
        if p.poll() is not None:
            fail(f"daemon exited {p.returncode} on a valid reload: " + "".join(seen))
        t0 = time.monotonic()
        p.send_signal(signal.SIGTERM)
        try:
            out, _ = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            fail("no exit within 30 s of SIGTERM after a reload")
        took = time.monotonic() - t0
        print(f"SIGHUP (invalid, then valid) while Iggy is unreachable, then SIGTERM: exit {p.returncode} "
              f"after {took:.2f} s", flush=True)
        if p.returncode != 0 or took > 5:
            fail(f"exit {p.returncode} after {took:.1f} s, want 0 within 5 s: " + "".join(seen) + out)
    iggy.close()
    s3.close()
    print("run signals CLI: all checks passed")


if __name__ == "__main__":
    main()
