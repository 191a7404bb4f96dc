#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Issue 40, point 4: `iggy.on_offset_reset: earliest` (docs/operations.md, Faults). A source
stream deleted under a running single consumer and created again (offsets from 0): the daemon
reads the new topic from its first message without a restart, under keys carrying the new
topic's creation time (`{topic_created}`), so the old objects stay as they are. The `fail`
policy's cases are in fault_cases.py."""
from __future__ import annotations

import json
import re
import signal
import subprocess
import sys

from fault_cases import produce, wait_metric, wait_readyz
from harness import Env, check, log, read_landed, run_case, verify_exactly_once

KEY = "{prefix}/{stream}/{topic}/created={topic_created}/partition={partition}/{stream}+{topic}+{partition}+{start_offset:020}.{ext}"


def etags(env: Env, bucket: str) -> dict[str, str]:
    r = env.aws("s3api", "list-objects-v2", "--bucket", bucket, "--prefix", "iggy/app/", "--output", "json")
    return {o["Key"]: o["ETag"] for o in json.loads(r.stdout or "{}").get("Contents", [])}


def generations(keys) -> set[str]:
    return {m.group(1) for k in keys if (m := re.search(r"/created=(\d+)/", k))}


def stream_recreated_earliest(env: Env, rng) -> None:
    """The stream deleted and created again with 300 new messages under
    `on_offset_reset: earliest`: offset_restarts_total 2 (both partitions, and still 2 after a
    reload that restarts the pipeline), /readyz 200 again and offset_reset_partitions 0
    (nothing stopped); the old objects keep their keys and ETags;
    the new topic's messages are in the bucket once, under its own creation time; `verify`
    passes (it judges the current topic's objects against its committed offsets)."""
    broker = env.start_broker()
    bucket = env.make_bucket(f"e2e-stream-earliest-{rng.randrange(1 << 30):x}")
    counts = produce(env, broker.address, 2000, "--create", "2")
    cfg = env.config(bucket, broker.address, consumer="sink", rotation={"max_records": 500, "idle": "1s"},
                     extra_iggy={"on_offset_reset": "earliest"})
    doc = json.loads(cfg.read_text())
    doc["naming"] = {"key": KEY}
    cfg.write_text(json.dumps(doc, indent=2))
    d = env.start_daemon(cfg)
    admin = env.admin_address()
    env.wait_lag_zero(cfg, 120)
    wait_readyz(env, admin, 200, ["ready"], 60)
    old = etags(env, bucket)
    old_gen = generations(old)
    check(len(old) >= 4 and len(old_gen) == 1, f"before the reset: {len(old)} objects, generations {old_gen}")

    r = subprocess.run([env.bin("iggy-produce"), "--address", broker.address, "--username", env.iggy_user,
                        "--password", env.iggy_password, "--stream", "app", "--delete-stream"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, f"iggy-produce --delete-stream: {r.stdout} {r.stderr}")
    wait_readyz(env, admin, 503, ["iggy: source unavailable: app/events"], 60)
    new = produce(env, broker.address, 300, "--create", "2")
    wait_metric(env, admin, "iggy_s3_sink_offset_restarts_total", 2, 60, stream="app", topic="events")
    body = wait_readyz(env, admin, 200, ["ready"], 60)
    wait_metric(env, admin, "iggy_s3_sink_offset_reset_partitions", 0, 5, stream="app", topic="events")
    env.wait_lag_zero(cfg, 120)
    log(f"stream created again with {new}: 2 partitions restarted at 0, /readyz {body.strip()!r}")
    # A reload that restarts the pipeline keeps the counter (the replaced consumer's count is
    # carried: a counter that went back to 0 reads as a process restart to rate()).
    cfg.write_text(json.dumps(dict(doc, rotation={"max_records": 400, "idle": "1s"}), indent=2))
    d.send_signal(signal.SIGHUP)
    wait_metric(env, admin, "iggy_s3_sink_config_reloads_total", 1, 60, result="success")
    wait_readyz(env, admin, 200, ["ready"], 60)
    wait_metric(env, admin, "iggy_s3_sink_offset_restarts_total", 2, 5, stream="app", topic="events")
    check(env.stop(d) == 0, "daemon did not exit 0 on SIGTERM")

    after = etags(env, bucket)
    changed = [k for k, e in old.items() if after.get(k) != e]
    check(not changed, f"old objects changed or gone: {changed[:5]}")
    new_gen = generations(after) - old_gen
    check(len(new_gen) == 1 and generations(after) == old_gen | new_gen,
          f"generations before {old_gen}, after {generations(after)}: wanted one new one")
    (og,), (ng,) = old_gen, new_gen
    landed_old = read_landed(env.download(bucket, f"iggy/app/events/created={og}/"))
    verify_exactly_once(landed_old, counts, "app", "events")
    check(landed_old.records == 2000, f"{landed_old.records} old records, wanted 2000")
    landed_new = read_landed(env.download(bucket, f"iggy/app/events/created={ng}/"))
    verify_exactly_once(landed_new, new, "app", "events")
    check(landed_new.records == 300, f"{landed_new.records} records of the new topic, wanted 300")
    check(len(after) == landed_old.objects + landed_new.objects, f"{len(after)} objects, not all of either topic")
    v = subprocess.run([env.bin("iggy-s3-sink"), "verify", "--config", str(cfg)], env=env.daemon_env(),
                       capture_output=True, text=True, timeout=120)
    check(v.returncode == 0, f"verify exited {v.returncode}:\n{v.stdout}{v.stderr[-2000:]}")
    log(f"{len(old)} old objects unchanged (keys and ETags); {landed_new.records} new records once under "
        f"created={ng}; verify 0")


CASES = {"stream_recreated_earliest": stream_recreated_earliest}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print(f"usage: reset_cases.py {{{'|'.join(CASES)}}}", file=sys.stderr)
        sys.exit(2)
    fn = CASES[sys.argv[1]]
    fn.__name__ = sys.argv[1]
    run_case(fn)
