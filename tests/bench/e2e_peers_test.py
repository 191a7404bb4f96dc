#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The plumbing of the end-to-end benchmark's peers (CTest bench.peers; nothing is started):
  - `e2e_bench.py --dry-run` fills the shipped peer templates (Iggy's connector runtime with its
    s3_sink, the Node SDK consumer) with the run's values and leaves no placeholder;
  - an unknown placeholder, an unset @ENV:NAME@ and mismatched --peer-config counts fail,
    naming the template, the variable or the flag;
  - the crash runs' count (e2e_peers.count_landed) finds missing messages, extra copies,
    records never produced and `.lost` markers in a bucket's objects.
Prints `ok NAME` per case; exit 0 only when all pass.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from e2e_peers import count_landed  # noqa: E402

BENCH = [sys.executable, str(HERE / "e2e_bench.py")]
S3_SINK = ["--peer-name", "Iggy s3_sink", "--peer-cmd",
           "env IGGY_CONNECTORS_CONFIG_PATH=@DIR@/runtime.toml @ENV:ISS_BENCH_CONNECTORS_RUNTIME@",
           "--peer-config", str(HERE / "peers" / "iggy-s3-sink-connector")]
NODE = ["--peer-name", "Node SDK consumer", "--peer-cmd",
        "env -C @ENV:ISS_BENCH_NODE_SDK@ node --import=@swc-node/register/esm-register "
        "@BENCH_DIR@/peers/node-sdk-consumer.mjs @IGGY_ADDRESS@ @IGGY_USER@ @IGGY_PASSWORD@ @STREAM@ @TOPIC@ "
        "@CONSUMER_GROUP@ @S3_ENDPOINT@ @S3_BUCKET@ @S3_PREFIX@ @S3_REGION@ @MAX_RECORDS@", "--peer-config", "-"]
ENV = dict(os.environ, ISS_BENCH_CONNECTORS_RUNTIME="/opt/runtime/iggy-connectors",
           ISS_BENCH_S3_SINK_PLUGIN="/opt/runtime/libiggy_connector_s3_sink.so", ISS_BENCH_NODE_SDK="/opt/node-sdk")


def run(args: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(BENCH + args, capture_output=True, text=True, timeout=60, env=env or ENV)


def check(cond: bool, what: str) -> None:
    if not cond:
        raise AssertionError(what)


def case_dry_run_fills_templates() -> None:
    with tempfile.TemporaryDirectory() as keep:
        r = run(["--dry-run", "--iggy-server", "127.0.0.1:18090", "--iggy-protocol", "0.9", "--max-records", "7000",
                 "--kills", "5", *S3_SINK, *NODE], env=dict(ENV, TMPDIR=keep))
        check(r.returncode == 0, f"--dry-run exited {r.returncode}: {r.stdout}{r.stderr}")
        out = r.stdout
        check("peer Iggy s3_sink: env IGGY_CONNECTORS_CONFIG_PATH=" in out and "/opt/runtime/iggy-connectors" in out,
              f"the s3_sink command line is not filled in:\n{out}")
        check("connectors/s3.toml" in out and "runtime.toml" in out, f"the s3_sink templates are not listed:\n{out}")
        node = next((ln for ln in out.splitlines() if ln.startswith("peer Node SDK consumer:")), "")
        check("env -C /opt/node-sdk node" in node and "127.0.0.1:18090 iggy iggy bench events bench-dry-run" in node
              and node.endswith(" us-east-1 7000") and "@" not in node.replace("@swc-node", ""),
              f"the Node consumer's command line is not filled in: {node!r}")
        check(str(HERE / "peers" / "node-sdk-consumer.mjs") in node, f"@BENCH_DIR@ is not this checkout: {node!r}")
        check("5 kill(s) per contestant" in out, f"the kill count is not reported:\n{out}")


def case_templates_hold_the_values() -> None:
    # The filled files themselves, through the module (what the bench writes before a run).
    from e2e_peers import Peer
    values = {"IGGY_ADDRESS": "10.0.0.1:8090", "IGGY_USER": "u", "IGGY_PASSWORD": "p", "IGGY_PROTOCOL": "0.9",
              "STREAM": "s1", "TOPIC": "t1", "PARTITIONS": "3", "MESSAGES": "9", "CONSUMER_GROUP": "g1",
              "S3_ENDPOINT": "http://127.0.0.1:1", "S3_BUCKET": "b1", "S3_PREFIX": "bench/x", "S3_REGION": "r1",
              "AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK", "MAX_RECORDS": "123", "BENCH_DIR": str(HERE)}
    os.environ.update(ISS_BENCH_S3_SINK_PLUGIN="/opt/x/libiggy_connector_s3_sink.so",
                      ISS_BENCH_CONNECTORS_RUNTIME="/opt/x/iggy-connectors")
    with tempfile.TemporaryDirectory() as tmp:
        peer = Peer("s3_sink", S3_SINK[3], HERE / "peers" / "iggy-s3-sink-connector")
        argv = peer.materialize(Path(tmp), values)
        check(argv == ["env", f"IGGY_CONNECTORS_CONFIG_PATH={tmp}/runtime.toml", "/opt/x/iggy-connectors"], f"argv {argv}")
        runtime = (Path(tmp) / "runtime.toml").read_text()
        sink = (Path(tmp) / "connectors" / "s3.toml").read_text()
        for text, want in ((runtime, 'address = "10.0.0.1:8090"'), (runtime, f'config_dir = "{tmp}/connectors"'),
                           (sink, 'path = "/opt/x/libiggy_connector_s3_sink.so"'), (sink, 'stream = "s1"'),
                           (sink, 'consumer_group = "g1"'), (sink, 'bucket = "b1"'), (sink, 'prefix = "bench/x"'),
                           (sink, "max_messages_per_file = 123"), (sink, 'endpoint = "http://127.0.0.1:1"')):
            check(want in text, f"{want!r} not in the filled template:\n{text}")
        check("@" not in runtime + sink.replace("path_template", ""), "a placeholder is left in the filled templates")


def case_bad_templates_fail_loudly() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        bad = Path(tmp) / "bad.toml"
        bad.write_text('bucket = "@S3_BUKET@"\n')
        r = run(["--dry-run", "--peer-cmd", "true", "--peer-config", str(bad)])
        check(r.returncode != 0 and "unknown placeholder @S3_BUKET@" in r.stderr and str(bad) in r.stderr,
              f"an unknown placeholder: exit {r.returncode}, {r.stderr!r}")
        env = dict(ENV)
        del env["ISS_BENCH_S3_SINK_PLUGIN"]
        r = run(["--dry-run", *S3_SINK], env=env)
        check(r.returncode != 0 and "ISS_BENCH_S3_SINK_PLUGIN, which is not set" in r.stderr,
              f"an unset @ENV:...@: exit {r.returncode}, {r.stderr!r}")
        r = run(["--dry-run", "--peer-cmd", "true", "--peer-cmd", "false", "--peer-config", "-"])
        check(r.returncode != 0 and "--peer-config given 1 times for 2 --peer-cmd" in r.stderr,
              f"mismatched --peer-config: exit {r.returncode}, {r.stderr!r}")
        r = run(["--dry-run", "--kills", "-1"])
        check(r.returncode != 0 and "--kills -1" in r.stderr, f"a negative --kills: {r.stderr!r}")


def case_kill_targets() -> None:
    import random
    from e2e_peers import kill_targets
    for seed in range(50):
        t = kill_targets(200_000, 5, random.Random(seed))
        check(len(t) == 5 and all(0 < a < b < 200_000 for a, b in zip(t, t[1:])),
              f"seed {seed}: targets {t} not strictly increasing inside the run")
        check(all(abs(x - 200_000 * (i + 1) / 6) <= 200_000 / 24 + 1 for i, x in enumerate(t)),
              f"seed {seed}: targets {t} not spread over the run")
    check(kill_targets(200_000, 5, random.Random(35)) == kill_targets(200_000, 5, random.Random(35)), "not seeded")


def case_count_landed() -> None:
    def line(part: int, off: int, stream: str = "s", topic: str = "events") -> str:
        return json.dumps({"offset": off, "stream": stream, "topic": topic, "partition_id": part, "payload": {}}) + "\n"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "a").mkdir()
        # partition 0: offsets 0-4 then 3-6 again (an object re-sent after a kill): 2 extra copies;
        # partition 1: 0-1 and 4 (2-3 lost in a buffer); one record of another stream.
        (root / "a" / "00000-0-4.jsonl").write_text("".join(line(0, o) for o in range(5)))
        (root / "a" / "00000-3-6.jsonl").write_text("".join(line(0, o) for o in range(3, 7)))
        (root / "a" / "00001-0-1.jsonl").write_text(line(1, 0) + line(1, 1))
        (root / "a" / "00001-4-4.jsonl").write_text(line(1, 4) + line(1, 9) + line(2, 0, stream="other"))
        (root / "a" / "00001-2-3.jsonl.lost").write_text("offset_range: 2-3\nmessage_count: 2\n")
        got = count_landed(root, {0: 7, 1: 5}, "s", "events")
        want = {"objects": 4, "records": 14, "missing": 2, "duplicates": 2, "unexpected": 2, "lost_markers": 1}
        check(got == want, f"count_landed: {got}, want {want}")
        clean = root / "clean"
        clean.mkdir()
        (clean / "o.jsonl").write_text("".join(line(0, o) for o in range(3)))
        got = count_landed(clean, {0: 3}, "s", "events")
        check(got["missing"] == 0 and got["duplicates"] == 0 and got["unexpected"] == 0, f"a clean bucket: {got}")


def main() -> int:
    failed = 0
    for name, fn in list(globals().items()):
        if name.startswith("case_"):
            try:
                fn()
                print(f"ok {name[5:]}")
            except AssertionError as e:
                failed += 1
                print(f"FAIL {name[5:]}: {e}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
