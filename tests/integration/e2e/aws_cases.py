#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end runs of the daemon with short-lived AWS credentials: the Iggy test broker, the
daemon as a process, and Ceph RGW behind aws-test-server (tests/support/aws/main.cpp), which
hands out credentials valid a few seconds (container endpoint, or web identity + STS
AssumeRole), verifies every S3 request's signature against them (an expired key gets 400
ExpiredToken), and forwards it to RGW re-signed with RGW's own keys.

Each run must renew the credentials several times with every offset exactly once in the
bucket, no failed upload, no request signed with expired credentials, and no secret or
session token (nor the proxy password) in anything the daemon printed or served, also when
its start fails.

Usage: aws_cases.py CASE   (ISS_BINARY_DIR and RGW_DIR from CTest)."""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from harness import Env, check, free_port, log, metric_sum, parse_metrics, read_landed, run_case, \
    verify_exactly_once

LIFETIME_MS = 6000   # every credential lives 6 s: renewed after 4.5 s (three quarters)
PRODUCE_SECONDS = 30  # messages keep arriving for five lifetimes
STREAM, TOPIC = "app", "events"


class AwsServer:
    """aws-test-server as a process: start() reads its port, finish() its counters."""

    def __init__(self, env: Env, *args: str):
        e = dict(os.environ)
        e.update(UPSTREAM_ACCESS_KEY_ID=env.rgw["RGW_ACCESS_KEY"], UPSTREAM_SECRET_ACCESS_KEY=env.rgw["RGW_SECRET_KEY"])
        self.stderr = open(env.work / "aws-test-server.log", "w")
        self.proc = subprocess.Popen([env.bin("aws-test-server"), "--lifetime-ms", str(LIFETIME_MS),
                                      "--upstream", env.rgw["RGW_ENDPOINT"],
                                      "--upstream-region", env.rgw.get("RGW_REGION", "us-east-1"), *args],
                                     env=e, stdout=subprocess.PIPE, stderr=self.stderr, text=True)
        env.procs.append(self.proc)
        line = self.proc.stdout.readline().strip()
        m = re.match(r"^listening on (\S+):(\d+)$", line)
        check(m is not None, f"aws-test-server's first line was {line!r}")
        self.url = f"http://{m.group(1)}:{m.group(2)}"

    def finish(self) -> dict:
        """SIGTERM; the counters, violations and issued secrets it prints."""
        self.proc.send_signal(signal.SIGTERM)
        out, _ = self.proc.communicate(timeout=30)
        check(self.proc.returncode == 0, f"aws-test-server exited {self.proc.returncode}")
        return json.loads(out.strip().splitlines()[-1])


class TinyProxy:
    """Debian's tinyproxy on a free port with Basic proxy credentials (as integration.s3.proxy_cli)."""

    def __init__(self, env: Env, user: str, password: str):
        self.dir = env.work / "tinyproxy"
        self.dir.mkdir()
        self.port = free_port()
        self.log = self.dir / "tinyproxy.log"
        conf = self.dir / "tinyproxy.conf"
        conf.write_text(f"Port {self.port}\nListen 127.0.0.1\nTimeout 60\nLogFile \"{self.log}\"\nLogLevel Connect\n"
                        f"PidFile \"{self.dir}/tinyproxy.pid\"\nMaxClients 50\nAllow 127.0.0.1\n"
                        f"BasicAuth {user} {password}\n")
        # In the foreground (-d), so the harness's cleanup kills it when a check fails.
        self.proc = subprocess.Popen(["tinyproxy", "-d", "-c", str(conf)], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        env.procs.append(self.proc)
        deadline = time.time() + 10
        while time.time() < deadline and self.proc.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        check(self.proc.poll() is None, f"tinyproxy exited {self.proc.returncode} at start")
        self.url = f"http://{user}:{password}@127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


def clean_daemon_env(env: Env, extra: dict[str, str]) -> dict[str, str]:
    """The daemon's environment without any long-lived keys: only the chain finds credentials."""
    e = env.daemon_env()
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
              "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
              "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_AUTHORIZATION_TOKEN", "HTTP_PROXY",
              "HTTPS_PROXY", "http_proxy", "https_proxy", "NO_PROXY", "no_proxy", "AWS_ENDPOINT_URL_STS"):
        e.pop(k, None)
    # No shared files of whoever runs the tests.
    e["AWS_SHARED_CREDENTIALS_FILE"] = str(env.work / "no-credentials")
    e["AWS_CONFIG_FILE"] = str(env.work / "no-config")
    e["AWS_EC2_METADATA_DISABLED"] = "true"
    e.update(extra)
    return e


def write_config(env: Env, bucket: str, address: str, s3_extra: dict, name: str = "sink") -> Path:
    cfg = env.config(bucket, address, name=name, rotation={"max_records": 600, "idle": "1s", "schedule": "0"},
                     endpoint="http://127.0.0.1:1",  # replaced below
                     retry={"attempts": 10, "base": "100ms", "cap": "1s", "deadline": "15s"})
    doc = json.loads(cfg.read_text())
    for k in ("access_key_id", "secret_access_key"):
        doc["s3"].pop(k, None)
    doc["s3"].update(s3_extra)
    cfg.write_text(json.dumps(doc, indent=2))
    return cfg


def produce_for(env: Env, address: str, seconds: float, partitions: int) -> dict[int, int]:
    """Creates the topic, then produces 150 messages every 0.5 s for `seconds`; per-partition counts."""
    counts: dict[int, int] = {}
    first = True
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        args = ["--balanced", "--header", "source=e2e-aws", "--count", "150", "--size", "200", "--batch", "150"]
        if first:
            args = ["--create", str(partitions), *args]
            first = False
        out = env.produce(address, STREAM, TOPIC, *args)
        for m in re.finditer(r"partition (\d+): (\d+)", out):
            counts[int(m.group(1))] = counts.get(int(m.group(1)), 0) + int(m.group(2))
        time.sleep(0.5)
    return counts


def refused_start(env: Env, address: str, bucket: str, daemon_env: dict[str, str], s3_extra: dict,
                  secrets: list[str]) -> None:
    """An error path: the container endpoint refuses the pod token. The daemon exits 1 at start
    naming the container endpoint; neither the wrong token nor the proxy password appears in
    what it printed."""
    other = AwsServer(env, "--container-token", "the-right-token")
    wrong = env.work / "wrong-pod-token"
    wrong_token = "wrong-pod-token-" + secrets[0][-12:]
    wrong.write_text(wrong_token)
    e = dict(daemon_env, AWS_CONTAINER_CREDENTIALS_FULL_URI=other.url + "/container/creds",
             AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE=str(wrong))
    cfg = write_config(env, bucket, address, dict(s3_extra, endpoint=other.url), name="refused")
    r = subprocess.run([env.bin("iggy-s3-sink"), "run", "--config", str(cfg)], env=e, capture_output=True, text=True,
                       timeout=120)
    out = r.stdout + r.stderr
    (env.work / "refused-start.log").write_text(out)
    other.finish()
    check(r.returncode == 1, f"daemon with a refused pod token exited {r.returncode}, expected 1:\n{out[-2000:]}")
    check("container" in out, f"the start error does not name the container endpoint:\n{out[-2000:]}")
    leaked = [s for s in [wrong_token, *secrets] if s in out]
    check(not leaked, f"the refused start printed {len(leaked)} secrets")
    log(f"refused pod token: exit 1, error: {next((l for l in out.splitlines() if 'container' in l), '')[:200]}")


def refresh_run(env: Env, rng, source: str) -> None:
    broker = env.start_broker()
    bucket = env.make_bucket(f"e2e-aws-{source.replace('_', '-')}-{rng.randrange(1 << 30):x}")
    secrets_known: list[str] = []  # besides what the server issued: tokens and passwords given to the daemon
    proxy = None
    if source == "container":
        # EKS Pod Identity: a full URI on loopback and the authorization token in a file; every
        # request (S3 and the credential fetches) through a proxy with a password.
        pod_token = f"pod-token-{rng.randrange(1 << 60):x}"
        server = AwsServer(env, "--container-token", pod_token)
        token_file = env.work / "pod-token"
        token_file.write_text(pod_token)
        proxy_password = f"proxy-pass-{rng.randrange(1 << 40):x}"
        proxy = TinyProxy(env, "sink", proxy_password)
        secrets_known += [pod_token, proxy_password]
        daemon_env = clean_daemon_env(env, {"AWS_CONTAINER_CREDENTIALS_FULL_URI": server.url + "/container/creds",
                                            "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE": str(token_file)})
        s3_extra = {"endpoint": server.url, "credentials": {"source": "auto"}, "proxy": proxy.url}
    else:
        # IRSA: a web identity token file and a role (AssumeRoleWithWebIdentity), then a
        # cross-account role on top (AssumeRole signed with the web identity's session keys).
        web_token = f"eyJ-web-identity-{rng.randrange(1 << 60):x}"
        server = AwsServer(env, "--web-identity-token", web_token)
        token_file = env.work / "web-identity-token"
        token_file.write_text(web_token)
        secrets_known += [web_token]
        daemon_env = clean_daemon_env(env, {"AWS_WEB_IDENTITY_TOKEN_FILE": str(token_file),
                                            "AWS_ROLE_ARN": "arn:aws:iam::123456789012:role/sink-irsa",
                                            "AWS_ROLE_SESSION_NAME": "e2e-irsa"})
        s3_extra = {"endpoint": server.url, "credentials": {"source": "web_identity"}, "sts_endpoint": server.url,
                    "assume_role": {"role_arn": "arn:aws:iam::210987654321:role/sink-writer",
                                    "session_name": "e2e-writer", "duration": "15m"}}
    if source == "container":
        refused_start(env, broker.address, bucket, daemon_env, s3_extra, secrets_known)
    cfg = write_config(env, bucket, broker.address, s3_extra)

    logf = open(env.work / "sink.log", "a")
    d = subprocess.Popen([env.bin("iggy-s3-sink"), "run", "--config", str(cfg)], env=daemon_env,
                         stdout=logf, stderr=subprocess.STDOUT)
    env.procs.append(d)
    admin = env.admin_address()
    t0 = time.monotonic()
    counts = produce_for(env, broker.address, PRODUCE_SECONDS, 2)
    n = sum(counts.values())
    log(f"produced {n} messages over {time.monotonic() - t0:.0f}s: {counts}")
    env.wait_lag_zero(cfg, 120)
    metrics_text = env.http_get(admin, "/metrics")[1]
    m = parse_metrics(metrics_text)
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")
    stats = server.finish()
    if proxy is not None:
        proxy.stop()
    log(f"aws-test-server: {json.dumps({k: v for k, v in stats.items() if k != 'secrets'})}")

    # Every offset exactly once.
    landed = read_landed(env.download(bucket))
    verify_exactly_once(landed, counts, STREAM, TOPIC)
    keys = [k for k in env.list_keys(bucket) if ".iggy-s3-sink" not in k]
    log(f"{landed.records} records in {landed.objects} objects, 0 duplicates")

    # Renewed several times, before expiry, with nothing a correct client never does.
    renewals = (stats["container"] if source == "container" else stats["assume_role"]) - 1
    check(not stats["violations"], f"aws-test-server saw violations: {stats['violations'][:5]}")
    check(renewals >= 3, f"credentials renewed {renewals} times in a {PRODUCE_SECONDS}s run of "
                         f"{LIFETIME_MS} ms credentials (want >= 3)")
    if source != "container":
        check(stats["web_identity"] >= 4, f"AssumeRoleWithWebIdentity answered {stats['web_identity']} times (want >= 4)")
    check(stats["s3_bad_signature"] == 0, f"{stats['s3_bad_signature']} S3 requests with a wrong signature")
    # Renewal ahead of expiry: a request signed with expired keys means the daemon used them
    # past their end (one is tolerated: a request the slow machine took long to deliver).
    check(stats["s3_expired"] <= 1, f"{stats['s3_expired']} S3 requests signed with expired credentials "
                                    f"(renewal did not happen ahead of expiry)")
    check(stats["s3_ok"] >= len(keys), f"only {stats['s3_ok']} S3 requests forwarded for {len(keys)} objects")

    # No failed upload: every S3 answer is a success, a 404 of the start-up probe's reads, or
    # the probe's own 412; the only 400s are the ExpiredToken answers counted above. Through
    # tinyproxy (1.11 closes each client connection after one response without saying so, as
    # curl also finds: "Connection died, retrying a fresh connect"), a request on a reused
    # connection fails to send and is retried on a new one: those attempts, and only those,
    # are allowed as `error`.
    allowed = {"200", "204", "206", "404", "412", "400"} | ({"error"} if proxy is not None else set())
    bad = sorted((labels, v) for (name, labels), v in m.items()
                 if name == "iggy_s3_sink_s3_requests_total" and v > 0 and dict(labels).get("code") not in allowed)
    check(not bad, f"failed S3 requests: {bad}")
    sink_log = (env.work / "sink.log").read_text(errors="replace")
    retried = re.findall(r"warn +s3: retrying in \d+ ms: (.*)", sink_log)
    unexplained = [r for r in retried if "ExpiredToken" not in r
                   and (proxy is None or not re.search(r"Broken pipe( \(attempt \d+/\d+\))?: sending the request failed", r))]
    check(not unexplained, f"S3 requests retried: {unexplained[:3]}")
    check(metric_sum(m, "iggy_s3_sink_s3_requests_total", code="400") == stats["s3_expired"],
          "400 answers other than ExpiredToken")
    check(metric_sum(m, "iggy_s3_sink_objects_total") == len(keys),
          f"objects_total {metric_sum(m, 'iggy_s3_sink_objects_total')} != {len(keys)} objects in the bucket")
    check(metric_sum(m, "iggy_s3_sink_messages_total") == n, "messages_total != produced")
    check(metric_sum(m, "iggy_s3_sink_adopted_objects_total") == 0, "objects adopted in a run without restarts")
    failed_uploads = re.findall(r"upload of \S+ failed.*", sink_log)
    check(not failed_uploads, f"the log reports failed uploads: {failed_uploads[:3]}")
    renewed_lines = sink_log.count("s3 credentials renewed")
    check(renewed_lines >= 3, f"{renewed_lines} 's3 credentials renewed' lines in the log (want >= 3)")
    check("s3 credentials renewal failed" not in sink_log, "a renewal failed")

    if proxy is not None:
        plog = proxy.log.read_text(errors="replace")
        through = len(re.findall(r"Request \(file descriptor \d+\): (?:PUT|POST) http://127\.0\.0\.1", plog))
        check(through >= len(keys), f"only {through} uploads went through the proxy for {len(keys)} objects")
        container_via_proxy = len(re.findall(r"Request \(file descriptor \d+\): GET http://\S+/container/creds", plog))
        log(f"proxy: {through} PUT/POST requests, {container_via_proxy} container credential fetches")

    # No secret in anything the daemon printed or served.
    secrets = stats["secrets"] + secrets_known
    check(len(stats["secrets"]) == 2 * stats["issued"], "aws-test-server's secret list is incomplete")
    texts = {"sink.log": sink_log, "/metrics": metrics_text}
    for name in ("lag", "lag --json"):
        rc, out, err = env.lag(cfg, *(["--json"] if "json" in name else []))
        check(rc == 0, f"{name} exited {rc}: {out}{err}")
        texts[name] = out + err
    for where, text in texts.items():
        leaked = [s for s in secrets if s and s in text]
        check(not leaked, f"{where} shows {len(leaked)} secrets, e.g. one starting {leaked[0][:12]!r}" if leaked else "")
    log(f"{renewals} renewals ({renewed_lines} logged), {stats['s3_ok']} S3 requests ok, "
        f"{stats['s3_expired']} ExpiredToken; none of {len(secrets)} secrets in the log, /metrics or lag")


def web_identity_exit(env: Env, rng) -> None:
    """Issue 41: every command ends cleanly with web identity credentials (AWS_ENDPOINT_URL_STS to
    aws-test-server's STS) while the container endpoint and IMDS answer too: `probe` exits 0
    naming the web identity, `run` exits 0 on SIGTERM after delivering everything, `lag` and
    `verify` exit 0; a refused web identity token is a failed start (exit 1) for `probe` and
    `run`; an invalid configuration exits 78 for each command. The chain stops at web identity
    (nothing asks the container endpoint or IMDS). Under scripts/sanitize (ASan + UBSan) each of
    these processes must also exit without a report: the old `probe` destroyed its STS
    connection after its event loop (heap-use-after-free at exit, then SIGSEGV in OpenSSL's
    exit handler)."""
    broker = env.start_broker()
    bucket = env.make_bucket(f"e2e-aws-exit-{rng.randrange(1 << 30):x}")
    web_token = f"eyJ-web-identity-{rng.randrange(1 << 60):x}"
    pod_token = f"pod-token-{rng.randrange(1 << 60):x}"
    server = AwsServer(env, "--web-identity-token", web_token, "--container-token", pod_token)
    token_file = env.work / "web-identity-token"
    token_file.write_text(web_token)
    daemon_env = clean_daemon_env(env, {
        "AWS_WEB_IDENTITY_TOKEN_FILE": str(token_file), "AWS_ROLE_ARN": "arn:aws:iam::123456789012:role/sink-irsa",
        "AWS_ROLE_SESSION_NAME": "e2e-exit", "AWS_ENDPOINT_URL_STS": server.url,
        "AWS_CONTAINER_CREDENTIALS_FULL_URI": server.url + "/container/creds",
        "AWS_CONTAINER_AUTHORIZATION_TOKEN": pod_token, "AWS_EC2_METADATA_SERVICE_ENDPOINT": server.url})
    daemon_env.pop("AWS_EC2_METADATA_DISABLED")  # IMDS reachable too
    out = env.produce(broker.address, STREAM, TOPIC, "--create", "2", "--balanced", "--count", "400", "--size", "100")
    counts = {int(m.group(1)): int(m.group(2)) for m in re.finditer(r"partition (\d+): (\d+)", out)}
    cfg = write_config(env, bucket, broker.address, {"endpoint": server.url})
    sink = env.bin("iggy-s3-sink")

    def cmd(*args: str, e: dict[str, str] | None = None, timeout: float = 120) -> tuple[int, str]:
        r = subprocess.run([sink, *args], env=e or daemon_env, capture_output=True, text=True, timeout=timeout)
        log(f"{' '.join(args[:1])} -> {r.returncode}")
        return r.returncode, r.stdout + r.stderr

    rc, out = cmd("probe", "--config", str(cfg))
    check(rc == 0, f"probe with web identity exited {rc}, expected 0:\n{out[-3000:]}")
    check(re.search(r"^s3 credentials: web identity, role arn:aws:iam::123456789012:role/sink-irsa", out, re.M),
          f"probe does not name the web identity:\n{out[-2000:]}")

    logf = open(env.work / "sink.log", "a")
    d = subprocess.Popen([sink, "run", "--config", str(cfg)], env=daemon_env, stdout=logf, stderr=subprocess.STDOUT)
    env.procs.append(d)
    env.wait_lag_zero(cfg, 120)
    rc = env.stop(d)
    check(rc == 0, f"run with web identity exited {rc} on SIGTERM, expected 0")
    verify_exactly_once(read_landed(env.download(bucket)), counts, STREAM, TOPIC)
    for args in (("lag", "--config", str(cfg)), ("verify", "--config", str(cfg))):
        rc, out = cmd(*args)
        check(rc == 0, f"{args[0]} with web identity exited {rc}, expected 0:\n{out[-2000:]}")

    # A failed start: STS refuses the token (400 InvalidIdentityToken is not transient): exit 1
    # at once. The source is pinned: the chain would go on to the container endpoint.
    wrong = env.work / "wrong-token"
    wrong.write_text("eyJ-not-the-token")
    refused = dict(daemon_env, AWS_WEB_IDENTITY_TOKEN_FILE=str(wrong))
    pinned = write_config(env, bucket, broker.address, {"endpoint": server.url,
                                                        "credentials": {"source": "web_identity"}}, name="pinned")
    for args in (("probe", "--config", str(pinned)), ("run", "--config", str(pinned))):
        rc, out = cmd(*args, e=refused)
        check(rc == 1, f"{args[0]} with a refused web identity token exited {rc}, expected 1:\n{out[-2000:]}")
        check("AssumeRoleWithWebIdentity" in out, f"{args[0]}'s error does not name the STS call:\n{out[-2000:]}")

    # Invalid configuration: 78 from every command that reads one, before any connection.
    bad = env.work / "bad.yaml"
    bad.write_text(cfg.read_text().replace('"max_records": 600', '"max_records": 0'))
    for command in ("run", "probe", "lag", "verify", "check-config"):
        rc, out = cmd(command, "--config", str(bad))
        check(rc == 78, f"{command} with an invalid config exited {rc}, expected 78:\n{out[-2000:]}")
        check("rotation.max_records" in out, f"{command} does not name rotation.max_records:\n{out[-2000:]}")

    stats = server.finish()
    check(not stats["violations"], f"aws-test-server saw violations: {stats['violations'][:5]}")
    check(stats["web_identity"] >= 3, f"AssumeRoleWithWebIdentity answered {stats['web_identity']} times (want >= 3)")
    check(stats["container"] == 0 and stats["imds"] == 0,
          f"the chain went past web identity: container {stats['container']}, imds {stats['imds']}")
    log(f"probe, run (SIGTERM), lag, verify: 0; refused token: 1; invalid config: 78; "
        f"{stats['web_identity']} AssumeRoleWithWebIdentity")


CASES = {
    "aws_container_refresh": lambda e, r: refresh_run(e, r, "container"),
    "aws_web_identity_refresh": lambda e, r: refresh_run(e, r, "web_identity"),
    "aws_web_identity_exit": web_identity_exit,
}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print(f"usage: aws_cases.py {{{'|'.join(CASES)}}}", file=sys.stderr)
        sys.exit(2)
    fn = CASES[sys.argv[1]]
    fn.__name__ = sys.argv[1]
    run_case(fn)
