#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end cases of issue 40, point 2 (docs/operations.md, Faults: the network to the store
and to Iggy): packets dropped without a reset, a store name that stops resolving, a store whose
TLS certificate is rotated, expires or stops naming it. The daemon runs in a network namespace
of the test's own (netns.py); the servers stay outside, reached through proxies.
Usage: net_fault_cases.py CASE   (ISS_BINARY_DIR and RGW_DIR from CTest; root)."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import netns
from fault_cases import FAKETIME_LIB, produce, wait_metric, wait_readyz
from harness import Env, SwitchableProxy, check, log, metric_sum, read_landed, run_case, verify_exactly_once


def add(counts: dict[int, int], more: dict[int, int]) -> None:
    for p, n in more.items():
        counts[p] = counts.get(p, 0) + n


def admin_proxy(env: Env, ns: netns.NetNs) -> str:
    """host:port outside the namespace that reaches the daemon's admin server inside it."""
    host, port = env.admin_address().rsplit(":", 1)
    return f"127.0.0.1:{SwitchableProxy(host, int(port), upstream_ns=ns.path).port}"


def wait_above(env: Env, admin: str, name: str, above: float, seconds: float, **labels: str) -> float:
    end = time.time() + seconds
    v = metric_sum(env.scrape(admin), name, **labels)
    while v <= above and time.time() < end:
        time.sleep(0.2)
        v = metric_sum(env.scrape(admin), name, **labels)
    check(v > above, f"{name}{labels} stayed at {v} for {seconds}s")
    return v


def silent_network(env: Env, rng) -> None:
    """Packets to the store, then to Iggy, dropped without a reset (nft in the daemon's own
    namespace) while a single consumer delivers. The store: the PUT in flight ends by its read
    deadline (s3.timeouts.request, 3 s here), new connections by s3.timeouts.connect (2 s);
    /readyz 503 `store: unreachable: timeout`, store_unreachable 1, s3_connection_errors_total
    {reason="timeout"} grows, nothing is committed meanwhile; once packets pass the object goes
    up on a new connection. Iggy: the request in flight (a poll, or the ping sent every 0.5 s)
    ends by the client's request deadline (10 s); /readyz 503 `iggy: not connected and logged
    in`, iggy_requests_total{code="error"} grows; once packets pass it reconnects and reads on.
    At the end every message is in the bucket exactly once."""
    case = "e2e.faults.silent_network"
    broker = env.start_broker()
    bucket = env.make_bucket(f"e2e-silent-network-{rng.randrange(1 << 30):x}")
    counts = produce(env, broker.address, 2000, "--create", "2")
    ns = netns.NetNs(env, case)
    store = SwitchableProxy("127.0.0.1", int(env.rgw["RGW_PORT"]), listen_sock=ns.listen_socket())
    bhost, bport = broker.address.rsplit(":", 1)
    iggy = SwitchableProxy(bhost, int(bport), listen_sock=ns.listen_socket())
    cfg = env.config(bucket, f"127.0.0.1:{iggy.port}", consumer="sink", endpoint=f"http://127.0.0.1:{store.port}",
                     rotation={"max_records": 500, "idle": "1s"},
                     # s3.retry.deadline well above the 30 s bound below: only s3.timeouts.request
                     # can end the silent PUT's read step in time.
                     retry={"attempts": 3, "base": "200ms", "cap": "1s", "deadline": "60s"},
                     extra_s3={"timeouts": {"connect": "2s", "request": "3s"}})
    outside = env.config(bucket, broker.address, consumer="sink", name="outside")  # lag from outside
    d = env.start_daemon(cfg, prefix=ns.prefix())
    admin = admin_proxy(env, ns)
    env.wait_lag_zero(outside, 120)
    wait_readyz(env, admin, 200, ["ready"], 60)

    # 1. The store: the forwarder's port inside the namespace goes silent.
    m = env.scrape(admin)
    timeouts = metric_sum(m, "iggy_s3_sink_s3_connection_errors_total", reason="timeout")
    check(metric_sum(m, "iggy_s3_sink_store_unreachable") == 0, "store_unreachable before any fault")
    committed = {r["partition"]: r["committed"] for r in env.lag_json(outside)}
    ns.drop(store.port)
    start = time.time()
    add(counts, produce(env, broker.address, 2000))
    # The bound: rotation.idle (1 s) closes the object, its PUT's read step ends by
    # s3.timeouts.request (3 s); 30 s is generous for a loaded machine.
    body = wait_readyz(env, admin, 503, ["store: unreachable: timeout"], 30)
    log(f"store silent: /readyz 503 after {time.time() - start:.1f} s: {body.strip()!r}")
    wait_metric(env, admin, "iggy_s3_sink_store_unreachable", 1, 10)
    wait_above(env, admin, "iggy_s3_sink_s3_connection_errors_total", timeouts, 10, reason="timeout")
    time.sleep(4)  # new connections meanwhile never complete (connect deadline 2 s)
    rows = {r["partition"]: r["committed"] for r in env.lag_json(outside)}
    check(rows == committed, f"offsets moved while the store was silent: {committed} -> {rows}")
    check(d.poll() is None, f"the daemon exited ({d.returncode}) while the store was silent")
    accepted = store.accepted
    ns.allow()
    env.wait_lag_zero(outside, 60)
    wait_readyz(env, admin, 200, ["ready"], 30)
    wait_metric(env, admin, "iggy_s3_sink_store_unreachable", 0, 10)
    check(store.accepted > accepted, "no new connection to the store after the packets passed again")
    m = env.scrape(admin)
    log(f"store back: {store.accepted - accepted} new connections, s3_connection_errors_total timeout "
        f"{metric_sum(m, 'iggy_s3_sink_s3_connection_errors_total', reason='timeout'):.0f}")

    # 2. Iggy: the broker's forwarder goes silent.
    errors = metric_sum(m, "iggy_s3_sink_iggy_requests_total", code="error")
    reconnects = metric_sum(m, "iggy_s3_sink_iggy_reconnects_total")
    ns.drop(iggy.port)
    start = time.time()
    # The bound: the request in flight (a poll, or a ping every 0.5 s) ends by the Iggy client's
    # request deadline, 10 s.
    body = wait_readyz(env, admin, 503, ["iggy: not connected and logged in"], 30)
    log(f"iggy silent: /readyz 503 after {time.time() - start:.1f} s: {body.strip()!r}")
    wait_above(env, admin, "iggy_s3_sink_iggy_requests_total", errors, 10, code="error")
    add(counts, produce(env, broker.address, 2000))  # straight to the broker, outside the namespace
    time.sleep(3)
    check(d.poll() is None, f"the daemon exited ({d.returncode}) while Iggy was silent")
    ns.allow()
    env.wait_lag_zero(outside, 60)
    wait_readyz(env, admin, 200, ["ready"], 30)
    wait_above(env, admin, "iggy_s3_sink_iggy_reconnects_total", reconnects, 10)
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    landed = read_landed(env.download(bucket))
    verify_exactly_once(landed, counts, "app", "events")
    check(landed.records == 6000, f"{landed.records} records in the bucket, wanted 6000")
    log(f"{landed.records} records once through a silent store and a silent Iggy")


HOSTS = "127.0.0.1 localhost\n::1 localhost\n"
# RGW's `rgw dns name` (scripts/rgw): another Host would be taken for a virtual-hosted bucket.
STORE_NAME = "s3.localhost"


def store_by_name(env: Env, rng, tag: str, tls=None):
    """A broker and a bucket outside, a namespace whose /etc/hosts (bind-mounted by `ip netns
    exec`) names the store STORE_NAME, a proxy inside it to RGW, and a daemon (single consumer)
    inside reaching the store at http://STORE_NAME:PORT, or with `tls` (a TlsFront, started
    here in front of the proxy) at https://STORE_NAME:PORT trusting its CA. Returns (ns, store
    proxy, broker, bucket, daemon, admin address, outside config, counts)."""
    broker = env.start_broker()
    bucket = env.make_bucket(f"e2e-{tag.replace('_', '-')}-{rng.randrange(1 << 30):x}")
    counts = produce(env, broker.address, 2000, "--create", "2")
    # resolv.conf: a name server on the namespace's own loopback that is not there, so a name
    # missing from /etc/hosts fails at once instead of reaching the host's resolver.
    ns = netns.NetNs(env, f"e2e.faults.{tag}", etc={"hosts": HOSTS + f"127.0.0.1 {STORE_NAME}\n",
                                                     "resolv.conf": "nameserver 127.0.0.1\noptions attempts:1\n"})
    store = SwitchableProxy("127.0.0.1", int(env.rgw["RGW_PORT"]), listen_sock=ns.listen_socket())
    bhost, bport = broker.address.rsplit(":", 1)
    iggy = SwitchableProxy(bhost, int(bport), listen_sock=ns.listen_socket())
    endpoint = f"http://{STORE_NAME}:{store.port}"
    extra_s3: dict = {"timeouts": {"connect": "2s", "request": "3s"}}
    if tls:
        tls.start(ns, store.port)
        endpoint = f"https://{STORE_NAME}:{tls.port}"
        extra_s3["tls"] = {"ca_file": str(tls.ca)}
    cfg = env.config(bucket, f"127.0.0.1:{iggy.port}", consumer="sink", endpoint=endpoint,
                     rotation={"max_records": 500, "idle": "1s"},
                     retry={"attempts": 3, "base": "200ms", "cap": "1s", "deadline": "8s"}, extra_s3=extra_s3)
    outside = env.config(bucket, broker.address, consumer="sink", name="outside")
    d = env.start_daemon(cfg, prefix=ns.prefix())
    admin = admin_proxy(env, ns)
    env.wait_lag_zero(outside, 120)
    wait_readyz(env, admin, 200, ["ready"], 60)
    return ns, store, broker, bucket, d, admin, outside, counts


def dns_fails(env: Env, rng) -> None:
    """The store's host name stops resolving (removed from the namespace's /etc/hosts, its
    connections closed by the proxy) while a single consumer delivers: every new connection
    fails at its resolve step, /readyz 503 `store: unreachable: resolve`, store_unreachable 1,
    s3_connection_errors_total{reason="resolve"} grows at a backoff (not a loop), nothing is
    committed. Once the name resolves again the backlog goes up by itself; every message
    lands exactly once."""
    ns, store, broker, bucket, d, admin, outside, counts = store_by_name(env, rng, "dns_fails")
    hosts = ns.etc_dir / "hosts"
    committed = {r["partition"]: r["committed"] for r in env.lag_json(outside)}
    hosts.write_text(HOSTS)  # in place: the bind mount in the daemon's namespace shows the new text
    store.set_enabled(False)  # the pooled connections go: the next request needs a new one
    store.set_enabled(True)
    add(counts, produce(env, broker.address, 2000))
    body = wait_readyz(env, admin, 503, ["store: unreachable: resolve", STORE_NAME], 30)
    log(f"name gone: /readyz 503 {body.strip()!r}")
    wait_metric(env, admin, "iggy_s3_sink_store_unreachable", 1, 10)
    first = wait_above(env, admin, "iggy_s3_sink_s3_connection_errors_total", 0, 10, reason="resolve")
    time.sleep(8)
    tries = metric_sum(env.scrape(admin), "iggy_s3_sink_s3_connection_errors_total", reason="resolve") - first
    # Two partitions, each an operation of 3 attempts then the writer's own wait, the waits
    # full-jitter under ceilings of 0.2 s to 1 s (s3.retry): about 4 to 10 lookups a second in
    # all. Without the backoff a lookup refused at once would fail thousands of times in 8 s.
    check(tries <= 200, f"{tries:.0f} failed lookups in 8 s: a tight loop?")
    rows = {r["partition"]: r["committed"] for r in env.lag_json(outside)}
    check(rows == committed, f"offsets moved while the store's name did not resolve: {committed} -> {rows}")
    check(d.poll() is None, f"the daemon exited ({d.returncode}) while the store's name did not resolve")
    log(f"{tries:.0f} failed lookups in 8 s at a backoff, offsets unchanged")
    hosts.write_text(HOSTS + f"127.0.0.1 {STORE_NAME}\n")
    env.wait_lag_zero(outside, 60)
    wait_readyz(env, admin, 200, ["ready"], 30)
    wait_metric(env, admin, "iggy_s3_sink_store_unreachable", 0, 10)
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    landed = read_landed(env.download(bucket))
    verify_exactly_once(landed, counts, "app", "events")
    check(landed.records == 4000, f"{landed.records} records in the bucket, wanted 4000")
    log(f"{landed.records} records once after the name resolved again")


class TlsFront:
    """TLS in front of the store proxy inside the namespace (socat, one process per
    certificate, killed with its connections when the certificate changes), and the
    certificates the test makes with openssl: `ca` (trusted by the daemon), `rotated` and `first`
    (STORE_NAME from `ca`), `expired` (STORE_NAME from `ca`, valid from 3 days ago to 2 days
    ago: libfaketime's FAKETIME moves openssl's clock), `wrong_name` (another name from `ca`),
    `untrusted` (STORE_NAME from a CA the daemon does not know)."""

    def __init__(self, env: Env):
        self.env, self.dir, self.proc = env, env.work / "tls", None
        self.dir.mkdir()
        self.ca = self.make_ca("ca")
        self.make_ca("other-ca")
        self.make_leaf("first", STORE_NAME, "ca")
        self.make_leaf("rotated", STORE_NAME, "ca")
        self.make_leaf("wrong_name", "other.e2e.test", "ca")
        self.make_leaf("untrusted", STORE_NAME, "other-ca")
        lib = FAKETIME_LIB
        check(os.path.exists(lib), f"{lib} missing: install libfaketime (scripts/install-deps)")
        self.make_leaf("expired", STORE_NAME, "ca", {"LD_PRELOAD": lib, "FAKETIME": "-3d"})
        env.cleanups.append(self.stop)

    def openssl(self, *args: str, env: dict | None = None) -> None:
        r = subprocess.run(["openssl", *args], capture_output=True, text=True, timeout=60, cwd=self.dir,
                           env={**os.environ, **(env or {})})
        check(r.returncode == 0, f"openssl {' '.join(args[:2])}: {r.stderr.strip()}")

    def make_ca(self, name: str) -> Path:
        self.openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                     "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "2", "-subj", f"/CN=iss e2e {name}")
        return self.dir / f"{name}.pem"

    def make_leaf(self, name: str, host: str, ca: str, env: dict | None = None) -> None:
        (self.dir / f"{name}.ext").write_text(f"subjectAltName=DNS:{host}\n")
        self.openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                     f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={host}")
        self.openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
                     "-CAcreateserial", "-days", "1", "-extfile", f"{name}.ext", "-out", f"{name}.pem", env=env)

    def start(self, ns: netns.NetNs, upstream_port: int) -> None:
        self.ns, self.upstream = ns, upstream_port
        s = ns.listen_socket()  # a port free inside the namespace (only this test uses it)
        self.port = s.getsockname()[1]
        s.close()
        self.serve("first")

    def serve(self, cert: str) -> None:
        """Serves `cert` from now on; the connections made with the previous one are closed."""
        self.stop()
        self.cert = cert
        c, k = self.dir / f"{cert}.pem", self.dir / f"{cert}.key"
        log_file = open(self.env.work / "tls-front.log", "a")
        self.proc = subprocess.Popen(
            [*self.ns.prefix(), "socat",
             f"OPENSSL-LISTEN:{self.port},bind=127.0.0.1,reuseaddr,fork,cert={c},key={k},verify=0",
             f"TCP:127.0.0.1:{self.upstream}"], stdout=log_file, stderr=log_file, start_new_session=True)
        end = time.time() + 30
        while True:
            with self.ns.entered():
                try:
                    socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                    break
                except OSError:
                    pass
            check(self.proc.poll() is None and time.time() < end, f"socat did not listen on {self.port} ({cert})")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)  # socat and the children serving connections
            self.proc.wait(timeout=30)
        self.proc = None


def tls_certificates(env: Env, rng) -> None:
    """The store's TLS certificate (socat in front of it, certificates from openssl) changes
    under a single consumer. Rotated (new key, same name, same trusted CA): picked up on the
    next connection, nothing refused. Then three that must fail closed, each followed by the
    rotated one again: expired, another name, an unknown CA. Each time no byte of an object is
    sent (the handshake fails first: no new key in the bucket, no offset stored), /readyz 503
    `store: unreachable: tls_certificate` (or `tls_name`) with OpenSSL's reason,
    s3_connection_errors_total{reason} grows; once the good certificate is back the backlog goes
    up by itself. Every message lands exactly once."""
    front = TlsFront(env)
    ns, store, broker, bucket, d, admin, outside, counts = store_by_name(env, rng, "tls_certificates", tls=front)
    tls_errors = ("tls_certificate", "tls_name", "tls_handshake")
    front.serve("rotated")
    add(counts, produce(env, broker.address, 1000))
    env.wait_lag_zero(outside, 60)
    m = env.scrape(admin)
    errors = {r: metric_sum(m, "iggy_s3_sink_s3_connection_errors_total", reason=r) for r in tls_errors}
    check(not any(errors.values()), f"TLS errors after a rotation to a good certificate: {errors}")
    check(env.http_get(admin, "/readyz")[0] == 200, "/readyz not 200 after the rotation")
    log("certificate rotated: picked up on the next connection")
    for cert, reason, why in (("expired", "tls_certificate", "certificate has expired"),
                              ("wrong_name", "tls_name", "hostname mismatch"),
                              ("untrusted", "tls_certificate", "unable to get local issuer certificate")):
        keys = len(env.list_keys(bucket))
        committed = {r["partition"]: r["committed"] for r in env.lag_json(outside)}
        before = metric_sum(env.scrape(admin), "iggy_s3_sink_s3_connection_errors_total", reason=reason)
        front.serve(cert)
        add(counts, produce(env, broker.address, 1000))
        body = wait_readyz(env, admin, 503, [f"store: unreachable: {reason}", why], 30)
        wait_above(env, admin, "iggy_s3_sink_s3_connection_errors_total", before, 10, reason=reason)
        wait_metric(env, admin, "iggy_s3_sink_store_unreachable", 1, 10)
        time.sleep(2)
        check(len(env.list_keys(bucket)) == keys, f"{cert}: objects were written through a bad certificate")
        rows = {r["partition"]: r["committed"] for r in env.lag_json(outside)}
        check(rows == committed, f"{cert}: offsets moved: {committed} -> {rows}")
        log(f"{cert}: /readyz 503 {body.strip()!r}")
        front.serve("rotated")
        env.wait_lag_zero(outside, 60)
        wait_readyz(env, admin, 200, ["ready"], 30)
        wait_metric(env, admin, "iggy_s3_sink_store_unreachable", 0, 10)
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    landed = read_landed(env.download(bucket))
    verify_exactly_once(landed, counts, "app", "events")
    check(landed.records == 6000, f"{landed.records} records in the bucket, wanted 6000")
    log(f"{landed.records} records once; bad certificates refused before any byte was sent")


CASES = {
    "tls_certificates": tls_certificates,
    "silent_network": silent_network,
    "dns_fails": dns_fails,
}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print(f"usage: net_fault_cases.py {{{'|'.join(CASES)}}}", file=sys.stderr)
        sys.exit(2)
    # Before the case: a SKIP here leaves nothing behind.
    netns.require(f"e2e.faults.{sys.argv[1]}", "nft", "socat", "openssl")
    fn = CASES[sys.argv[1]]
    fn.__name__ = sys.argv[1]
    run_case(fn)
