#!/usr/bin/env python3
"""Benchmark (issue 8): end-to-end throughput iggy-test-broker -> iggy-s3-sink -> S3.

1 KiB JSON messages, formats json_lines and raw, compression none and gzip, against
  - `discard`: an S3 endpoint of our own that keeps object NAMES and metadata but throws the
    bodies away (so the daemon is what is measured; it still answers 412 on a conditional
    write to an existing key and HEAD with the metadata, so the daemon runs its normal
    exactly-once path), and
  - `rgw`: Ceph RGW (scripts/rgw; --rgw-dir DIR to reuse a running one).
Per run: messages/s and MB/s of payload from the daemon's start to `lag` 0 (S3 probe and
startup included), the daemon's CPU seconds (user + sys) and peak RSS (from wait4).

  tests/bench/pipeline_e2e.py --build build [--messages 200000] [--rgw-dir DIR] [--no-rgw | --no-discard]

Single-consumer mode, 4 partitions, rotation max_records 10000 / max_bytes 64MiB / idle 200ms,
part_size 8MiB. Never run by the test command.
"""
import argparse
import http.server
import json
import os
import re
import signal
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class DiscardS3(http.server.BaseHTTPRequestHandler):
    """Keys-only S3: bodies are read and dropped; probe objects (.iggy-s3-sink/) are kept so
    the capability probe can read them back."""
    protocol_version = "HTTP/1.1"
    objects: dict = {}
    uploads: dict = {}
    lock = threading.Lock()
    bytes_in = 0

    def log_message(self, *a):  # quiet
        pass

    def _body(self) -> bytes:
        n = int(self.headers.get("Content-Length", "0") or 0)
        data = b""
        left = n
        keep = ".iggy-s3-sink/" in self.path or "uploads" in self.path or "uploadId" in self.path and self.command == "POST"
        while left > 0:
            chunk = self.rfile.read(min(left, 1 << 20))
            if not chunk:
                break
            left -= len(chunk)
            if keep:
                data += chunk
        with DiscardS3.lock:
            DiscardS3.bytes_in += n
        return data

    def _send(self, code: int, body: bytes = b"", headers: dict | None = None):
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body and self.command != "HEAD":
            self.wfile.write(body)

    def _key(self):
        u = urllib.parse.urlsplit(self.path)
        parts = u.path.lstrip("/").split("/", 1)
        return parts[0], urllib.parse.unquote(parts[1]) if len(parts) > 1 else "", urllib.parse.parse_qs(u.query, keep_blank_values=True)

    def _meta(self):
        return {k.lower(): v for k, v in self.headers.items() if k.lower().startswith("x-amz-meta-")}

    def do_PUT(self):
        bucket, key, q = self._key()
        body = self._body()
        if not key:
            return self._send(200)
        if "uploadId" in q:
            return self._send(200, headers={"ETag": f'"p{q["partNumber"][0]}"'})
        with DiscardS3.lock:
            if self.headers.get("If-None-Match") == "*" and key in DiscardS3.objects:
                return self._send(412, b"<Error><Code>PreconditionFailed</Code></Error>")
            DiscardS3.objects[key] = (self._meta(), body if ".iggy-s3-sink/" in key else b"")
        self._send(200, headers={"ETag": '"d41d8cd98f00b204e9800998ecf8427e"'})

    def do_POST(self):
        bucket, key, q = self._key()
        self._body()
        with DiscardS3.lock:
            if "uploads" in q:
                uid = f"u{len(DiscardS3.uploads) + 1}"
                DiscardS3.uploads[uid] = (key, self._meta())
                return self._send(200, f"<InitiateMultipartUploadResult><Bucket>{bucket}</Bucket><Key>{key}</Key>"
                                       f"<UploadId>{uid}</UploadId></InitiateMultipartUploadResult>".encode())
            if "uploadId" in q:
                uid = q["uploadId"][0]
                if self.headers.get("If-None-Match") == "*" and key in DiscardS3.objects:
                    return self._send(412, b"<Error><Code>PreconditionFailed</Code></Error>")
                k, meta = DiscardS3.uploads.pop(uid, (key, {}))
                DiscardS3.objects[k] = (meta, b"")
                return self._send(200, f"<CompleteMultipartUploadResult><Key>{key}</Key><ETag>\"x-1\"</ETag>"
                                       f"</CompleteMultipartUploadResult>".encode())
        self._send(400)

    def do_HEAD(self):
        bucket, key, q = self._key()
        if not key:
            return self._send(200)
        with DiscardS3.lock:
            o = DiscardS3.objects.get(key)
        if o is None:
            return self._send(404)
        self._send(200, headers={**o[0], "ETag": '"x"', "Content-Type": "application/octet-stream"})

    def do_GET(self):
        bucket, key, q = self._key()
        if not key:
            return self._send(200, b'<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>' + bucket.encode()
                              + b"</Name><KeyCount>0</KeyCount><IsTruncated>false</IsTruncated></ListBucketResult>")
        with DiscardS3.lock:
            o = DiscardS3.objects.get(key)
        if o is None:
            return self._send(404, b"<Error><Code>NoSuchKey</Code></Error>")
        self._send(200, o[1], headers={**o[0], "ETag": '"x"'})

    def do_DELETE(self):
        bucket, key, q = self._key()
        with DiscardS3.lock:
            DiscardS3.objects.pop(key, None)
            if "uploadId" in q:
                DiscardS3.uploads.pop(q["uploadId"][0], None)
        self._send(204)


class ThreadingServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def start_broker(build: Path) -> tuple[subprocess.Popen, str]:
    p = subprocess.Popen([str(build / "tests/support/iggy-test-broker"), "--listen", "127.0.0.1:0"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    m = re.match(r"^listening on (\S+)$", p.stdout.readline().strip())
    threading.Thread(target=lambda: [None for _ in p.stdout], daemon=True).start()
    return p, m.group(1)


def run_case(build: Path, work: Path, address: str, endpoint: str, keys: tuple[str, str], bucket: str,
             fmt: str, comp: str, n: int, name: str) -> dict:
    cfg = {
        "iggy": {"address": address, "username": "iggy", "password": "iggy", "consumer": name,
                 "poll": {"messages": 1000, "interval": "20ms"}},
        "sources": [{"stream": "bench", "topics": ["events"], "partitions": "all"}],
        "s3": {"bucket": bucket, "endpoint": endpoint, "region": "us-east-1", "prefix": name,
               "access_key_id": keys[0], "secret_access_key": keys[1], "part_size": "8MiB"},
        "format": {"type": fmt, "compression": comp},
        "rotation": {"max_records": 10000, "max_bytes": "64MiB", "idle": "200ms"},
        "log": {"level": "warn"},
    }
    path = work / f"{name}.yaml"
    path.write_text(json.dumps(cfg))
    sink = str(build / "daemon/iggy-s3-sink")
    t0 = time.monotonic()
    d = subprocess.Popen([sink, "run", "--config", str(path)], stdout=subprocess.DEVNULL,
                         stderr=open(work / f"{name}.log", "w"))
    r = subprocess.run([sink, "lag", "--config", str(path), "--wait-zero", "600s"], capture_output=True, text=True)
    elapsed = time.monotonic() - t0
    d.send_signal(signal.SIGTERM)
    _, status, ru = os.wait4(d.pid, 0)
    if r.returncode != 0 or status != 0:
        raise SystemExit(f"{name}: lag rc {r.returncode}, daemon status {status}; see {work}/{name}.log")
    return {"case": name, "messages": n, "seconds": round(elapsed, 2), "msg_per_s": round(n / elapsed),
            "mb_per_s": round(n * 1024 / elapsed / 1e6, 1), "cpu_s": round(ru.ru_utime + ru.ru_stime, 2),
            "peak_rss_mib": round(ru.ru_maxrss / 1024, 1)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--messages", type=int, default=200_000)
    ap.add_argument("--rgw-dir")
    ap.add_argument("--no-rgw", action="store_true")
    ap.add_argument("--no-discard", action="store_true")
    a = ap.parse_args()
    build = Path(a.build).resolve()
    work = Path(tempfile.mkdtemp(prefix="bench-pipeline-"))
    broker, address = start_broker(build)
    srv = ThreadingServer(("127.0.0.1", 0), DiscardS3)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    discard = f"http://127.0.0.1:{srv.server_address[1]}"
    try:
        subprocess.run([str(build / "tests/support/iggy-produce"), "--address", address, "--stream", "bench",
                        "--topic", "events", "--create", "4", "--balanced", "--count", str(a.messages),
                        "--size", "1024"], check=True, capture_output=True)
        rows = []
        targets = [] if a.no_discard else [("discard", discard, ("bench", "bench"))]
        rgw_started = None
        if not a.no_rgw:
            rgw_dir = a.rgw_dir
            if not rgw_dir:
                rgw_dir = str(work / "rgw")
                subprocess.run([str(ROOT / "scripts/rgw"), "start", rgw_dir], check=True)
                rgw_started = rgw_dir
            env = dict(l.split("=", 1) for l in Path(rgw_dir, "env").read_text().split() if "=" in l)
            targets.append(("rgw", env["RGW_ENDPOINT"], (env["RGW_ACCESS_KEY"], env["RGW_SECRET_KEY"])))
        for target, endpoint, keys in targets:
            for fmt in ("json_lines", "raw"):
                for comp in ("none", "gzip"):
                    name = f"{target}-{fmt}-{comp}".replace("_", "-")
                    bucket = f"bench-{name}-{os.getpid()}"
                    if target == "rgw":
                        subprocess.run(["/usr/bin/aws", "--endpoint-url", endpoint, "s3", "mb", f"s3://{bucket}"],
                                       check=True, capture_output=True,
                                       env={**os.environ, "AWS_ACCESS_KEY_ID": keys[0],
                                            "AWS_SECRET_ACCESS_KEY": keys[1], "AWS_DEFAULT_REGION": "us-east-1"})
                    row = run_case(build, work, address, endpoint, keys, bucket, fmt, comp, a.messages, name)
                    print(json.dumps(row), flush=True)
                    rows.append(row)
        print("\n| case | messages | s | msg/s | MB/s (payload) | daemon CPU s | peak RSS MiB |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for r in rows:
            print(f"| {r['case']} | {r['messages']} | {r['seconds']} | {r['msg_per_s']} | {r['mb_per_s']} | "
                  f"{r['cpu_s']} | {r['peak_rss_mib']} |")
        if rgw_started:
            subprocess.run([str(ROOT / "scripts/rgw"), "stop", rgw_started])
    finally:
        broker.kill()
        srv.shutdown()


if __name__ == "__main__":
    sys.exit(main())
