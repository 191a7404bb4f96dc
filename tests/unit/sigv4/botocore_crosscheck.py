#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Cross-checks `iggy-s3-sink sigv4` against botocore (the AWS SDK for Python) on random S3
requests: keys with every printable ASCII byte and some UTF-8, random query parameters, header
values with whitespace runs, bodies, session tokens; header form and presigned form.

usage: botocore_crosscheck.py BIN [SEED] [COUNT]
Exit 0 all equal, 1 a mismatch, 77 botocore missing (skip; a failure under CI=true).
"""
import datetime
import json
import os
import random
import subprocess
import sys
import tempfile
from urllib.parse import quote

try:
    try:
        import botocore  # noqa: F401  (pip's botocore, or Debian's python3-botocore)
    except ImportError:
        # Debian 12's awscli (v2) vendors botocore inside its own package.
        sys.path.insert(0, "/usr/lib/python3/dist-packages/awscli")
    import botocore.auth
    import botocore.credentials
    from botocore.awsrequest import AWSRequest
except ImportError:
    print("botocore (python3-botocore, pulled in by awscli) is not installed")
    sys.exit(1 if os.environ.get("CI") == "true" else 77)

FIXED = datetime.datetime(2026, 11, 30, 3, 4, 5)


class FixedDatetime(datetime.datetime):
    """botocore reads the clock itself; pin it (older releases call utcnow, newer now)."""

    @classmethod
    def utcnow(cls):
        return FIXED

    @classmethod
    def now(cls, tz=None):
        return FIXED.replace(tzinfo=tz) if tz else FIXED


botocore.auth.datetime.datetime = FixedDatetime

BIN = sys.argv[1]
SEED = int(sys.argv[2]) if len(sys.argv) > 2 else 20261130
COUNT = int(sys.argv[3]) if len(sys.argv) > 3 else 200
print(f"seed {SEED}, {COUNT} requests per form")
rnd = random.Random(SEED)
CHARS = [chr(c) for c in range(0x20, 0x7F) if chr(c) not in "?#"] + ["é", "ሴ", "\u00a0", "😀"]
REGION = "eu-west-1"
HOST = f"s3.{REGION}.amazonaws.com"


def rand_text(lo, hi):
    return "".join(rnd.choice(CHARS) for _ in range(rnd.randint(lo, hi)))


def run(work, query_form, i):
    # Session tokens are base64 (STS); botocore would also collapse non-ASCII whitespace such
    # as U+00A0 in header values (Python's str.split), which HTTP does not treat as whitespace.
    b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="
    token = "".join(rnd.choice(b64) for _ in range(rnd.randint(10, 60))) if rnd.random() < 0.3 else None
    creds = botocore.credentials.Credentials("AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", token)
    path = "/bucket/" + rand_text(1, 30)
    params = [(rand_text(1, 8), rand_text(0, 8)) for _ in range(rnd.randint(0, 3))]
    # Presigned URLs are for bodiless requests here (botocore's query signer parses bodies).
    body = "" if query_form else "".join(rnd.choice("abc\n") for _ in range(rnd.randint(0, 50)))
    method = "GET" if query_form else "PUT"
    extra = {"X-Amz-Meta-A": "  " + "".join(rnd.choice("ab  c\t") for _ in range(10)) + " ", "Range": "bytes=0-9"}
    wire_path = quote(path.encode("utf-8"), safe="/~")
    wire_query = "&".join(quote(n.encode(), safe="-_.~") + "=" + quote(v.encode(), safe="-_.~") for n, v in params)
    url = "https://" + HOST + wire_path + ("?" + wire_query if wire_query else "")
    req = AWSRequest(method=method, url=url, headers={"Host": HOST, **extra}, data=body.encode())
    if query_form:
        botocore.auth.S3SigV4QueryAuth(creds, "s3", REGION, expires=3600).add_auth(req)
        want = req.url.split("X-Amz-Signature=")[1].split("&")[0]
    else:
        botocore.auth.S3SigV4Auth(creds, "s3", REGION).add_auth(req)
        want = req.headers["Authorization"].replace(" ", "")

    lines = [method + " " + path + ("?" + wire_query if wire_query else "") + " HTTP/1.1", "Host:" + HOST]
    lines += [k + ":" + v for k, v in extra.items()]
    req_file = os.path.join(work, "request.txt")
    ctx_file = os.path.join(work, "context.json")
    with open(req_file, "wb") as f:
        f.write(("\n".join(lines) + "\n\n" + body).encode("utf-8"))
    ctx = {
        "credentials": {"access_key_id": creds.access_key, "secret_access_key": creds.secret_key},
        "region": REGION, "service": "s3", "timestamp": FIXED.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "normalize": False, "double_uri_encode": False,
        "payload": "UNSIGNED-PAYLOAD" if query_form else "signed", "expiration_in_seconds": 3600,
    }
    if token:
        ctx["credentials"]["token"] = token
    with open(ctx_file, "w") as f:
        json.dump(ctx, f)
    args = [BIN, "sigv4", "--request", req_file, "--context", ctx_file, "--doc-form"] + (["--query"] if query_form else [])
    out = subprocess.run(args, capture_output=True)
    text = out.stdout.decode("utf-8")
    if query_form:
        got = text.split("X-Amz-Signature=")[1].split(" ")[0] if "X-Amz-Signature=" in text else out.stderr.decode()
    else:
        got = [l for l in text.split("\n") if l.startswith("Authorization:")]
        got = got[0][len("Authorization:"):].replace(" ", "") if got else out.stderr.decode()
    if got != want:
        print(f"MISMATCH ({'query' if query_form else 'header'} form, request {i}): path {path!r} params {params!r} token {bool(token)}")
        print("  ours    ", got)
        print("  botocore", want)
        return False
    return True


fails = 0
with tempfile.TemporaryDirectory() as work:
    for query_form in (False, True):
        for i in range(COUNT):
            fails += 0 if run(work, query_form, i) else 1
print(f"{2 * COUNT} requests, {fails} mismatches (botocore {botocore.__version__})")
sys.exit(1 if fails else 0)
