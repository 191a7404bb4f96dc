#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The official Apache Iggy Python SDK (PyPI `apache-iggy`, a wheel of the Rust SDK; version
pinned in scripts/install-deps) against the test broker in 0.9 mode (G2, protocol 0.11.0).

Usage: python_sdk_test.py BROKER_BINARY   (any python3: it continues under tests/sdk/.venv)

Starts `BROKER_BINARY --protocol 0.9 --listen 127.0.0.1:0`, then runs each case below with the
SDK; every answer is checked against what the SDK gives back to its user (ids, names, counts,
offsets, payloads, the error it raises). Prints `ok NAME` / `FAIL NAME: why` per case; exit 0
only when every case passed, 1 otherwise, 2 when the SDK or the broker is missing.
"""
import asyncio
import datetime
import os
import subprocess
import sys
import tempfile
import time
import traceback

VENV_PYTHON = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".venv", "bin", "python")
try:
    import apache_iggy as iggy
except ImportError as e:
    # Run by another interpreter: continue under the venv that scripts/install-deps makes. (Not
    # by the executables' real paths: a venv's python is a symlink to the system's /usr/bin/python3,
    # the very interpreter CMake finds on a fresh Debian; the venv is told by sys.prefix.)
    venv = os.path.dirname(os.path.dirname(VENV_PYTHON))
    if os.path.exists(VENV_PYTHON) and os.path.realpath(sys.prefix) != os.path.realpath(venv):
        os.execv(VENV_PYTHON, [VENV_PYTHON, *sys.argv])
    print(f"python_sdk_test: cannot import apache_iggy ({e}), also not in the SDK venv at {VENV_PYTHON}; "
          "run scripts/install-deps", file=sys.stderr)
    sys.exit(2)

STREAM, TOPIC = "py-sdk-stream", "py-sdk-topic"
CASE_TIMEOUT_S = 60  # generous: a failing case must end, not hang the suite


def check(cond, what):
    if not cond:
        raise AssertionError(what)  # the case's line is reported by error_text


def error_text(exc):
    """The error and the line of this file it came from."""
    here = [f for f in traceback.extract_tb(exc.__traceback__) if f.name.startswith("case_")]
    where = f" (line {here[-1].lineno}: {here[-1].line})" if here else ""
    return f"{type(exc).__name__}: {exc}{where}"


async def expect_error(coro, word, what):
    """The awaited call must raise an error whose text names `word` (the SDK's IggyError)."""
    try:
        await coro
    except (RuntimeError, ValueError) as e:
        check(word.lower() in str(e).lower(), f"{what}: expected an error naming {word!r}, got {error_text(e)}")
        return
    raise AssertionError(f"{what}: expected an error naming {word!r}, the call succeeded")


async def root_client(addr):
    c = iggy.IggyClient(addr)
    await c.connect()
    await c.login_user("iggy", "iggy")
    return c


async def case_stream_and_topic(addr, ctx):
    c = await root_client(addr)
    await c.create_stream(STREAM)
    s = await c.get_stream(STREAM)
    check(s is not None and s.name == STREAM, f"get_stream: {s!r}")
    check(s.topics_count == 0, f"a new stream has no topics, got {s.topics_count}")
    await c.create_topic(STREAM, TOPIC, partitions_count=2)
    t = await c.get_topic(STREAM, TOPIC)
    check(t is not None and t.name == TOPIC, f"get_topic: {t!r}")
    check(t.partitions_count == 2, f"partitions_count {t.partitions_count}")
    check([p.id for p in t.partitions] == [0, 1], f"partition ids {[p.id for p in t.partitions]}")
    check(await c.get_topic(STREAM, "no-such-topic") is None, "an unknown topic is None")
    check(await c.get_stream("no-such-stream") is None, "an unknown stream is None")
    await expect_error(c.create_stream(STREAM), "already exists", "a second stream of the same name")
    ctx["stream_id"], ctx["topic_id"] = s.id, t.id


async def case_send(addr, ctx):
    c = await root_client(addr)
    for part in (0, 1):
        msgs = [iggy.SendMessage(f"p{part}-m{i}") for i in range(10)]
        r = await c.send_messages(STREAM, TOPIC, iggy.Partitioning.partition_id(part), msgs)
        got = [(x.stream_id, x.topic_id, x.partition_id, x.base_offset) for x in r.confirmations]
        check(got == [(ctx["stream_id"], ctx["topic_id"], part, 0)], f"confirmation of partition {part}: {got}")
    r = await c.send_messages(STREAM, TOPIC, 0, [iggy.SendMessage(b"tail", user_headers={"k": "v"})])
    check([x.base_offset for x in r.confirmations] == [10], f"second batch's base offset {r.confirmations}")
    t = await c.get_topic(STREAM, TOPIC)
    check(t.messages_count == 21, f"topic messages_count {t.messages_count}")


async def case_poll(addr, ctx):
    c = await root_client(addr)
    one = iggy.Consumer.Single(1)
    ms = await c.poll_messages(STREAM, TOPIC, consumer=one, polling_strategy=iggy.PollingStrategy.Offset(0),
                               count=100, auto_commit=False, partition_id=0)
    check([m.offset() for m in ms] == list(range(11)), f"offsets {[m.offset() for m in ms]}")
    check([m.payload() for m in ms[:10]] == [f"p0-m{i}".encode() for i in range(10)], "payloads of partition 0")
    check(ms[10].payload() == b"tail", f"last payload {ms[10].payload()!r}")
    hdrs = ms[10].user_headers()
    check(hdrs is not None and len(hdrs) == 1, f"user headers {hdrs!r}")
    check(all(m.partition_id() == 0 for m in ms), "partition ids of polled messages")
    # Auto-commit on: the next poll (Next) continues after what was returned.
    first = await c.poll_messages(STREAM, TOPIC, consumer=one, polling_strategy=iggy.PollingStrategy.First(),
                                  count=4, auto_commit=True, partition_id=1)
    check([m.offset() for m in first] == [0, 1, 2, 3], f"first 4 of partition 1 {[m.offset() for m in first]}")
    nxt = await c.poll_messages(STREAM, TOPIC, consumer=one, polling_strategy=iggy.PollingStrategy.Next(),
                                count=100, auto_commit=False, partition_id=1)
    check([m.offset() for m in nxt] == list(range(4, 10)), f"next after commit {[m.offset() for m in nxt]}")
    last = await c.poll_messages(STREAM, TOPIC, consumer=one, polling_strategy=iggy.PollingStrategy.Last(),
                                 count=1, auto_commit=False, partition_id=1)
    check([m.offset() for m in last] == [9], f"last {[m.offset() for m in last]}")


async def case_consumer_group(addr, ctx):
    c = await root_client(addr)
    await c.create_consumer_group(STREAM, TOPIC, "py-group")
    g = await c.get_consumer_group(STREAM, TOPIC, "py-group")
    check(g is not None and g.name == "py-group", f"get_consumer_group {g!r}")
    check((g.partitions_count, g.members_count) == (2, 0), f"before join {g.partitions_count}, {g.members_count}")
    await c.join_consumer_group(STREAM, TOPIC, "py-group")
    g = await c.get_consumer_group(STREAM, TOPIC, "py-group")
    check(g.members_count == 1, f"members after join {g.members_count}")
    check(sorted(g.members[0].partitions) == [0, 1], f"the only member owns both {g.members[0].partitions}")
    check([x.name for x in await c.get_consumer_groups(STREAM, TOPIC)] == ["py-group"], "get_consumer_groups")
    grp = iggy.Consumer.Group("py-group")
    # Auto-commit off: polling twice from Next reads the same messages.
    for attempt in (1, 2):
        ms = await c.poll_messages(STREAM, TOPIC, consumer=grp, polling_strategy=iggy.PollingStrategy.Next(),
                                   count=5, auto_commit=False, partition_id=0)
        check([m.offset() for m in ms] == [0, 1, 2, 3, 4], f"group poll {attempt}: {[m.offset() for m in ms]}")
    await c.leave_consumer_group(STREAM, TOPIC, "py-group")
    g = await c.get_consumer_group(STREAM, TOPIC, "py-group")
    check(g.members_count == 0, f"members after leave {g.members_count}")

    # The high-level group consumer: auto-join, auto-commit off, offsets stored by hand.
    hl = await root_client(addr)
    cons = await hl.consumer_group("py-hl", STREAM, TOPIC, polling_strategy=iggy.PollingStrategy.Next(),
                                   batch_length=100, auto_commit=iggy.AutoCommit.Disabled(),
                                   poll_interval=datetime.timedelta(milliseconds=10))
    seen = {}
    async for m in cons.iter_messages():
        seen.setdefault(m.partition_id(), []).append(m.offset())
        if sum(len(v) for v in seen.values()) == 21:
            break
    check(sorted(seen.get(0, [])) == list(range(11)) and sorted(seen.get(1, [])) == list(range(10)),
          f"the member read every message once {seen}")
    check(cons.get_last_stored_offset(0) in (None, 0), f"nothing stored with auto-commit off: {cons.get_last_stored_offset(0)}")
    await cons.store_offset(6, 0)
    check(cons.get_last_stored_offset(0) == 6, f"stored offset {cons.get_last_stored_offset(0)}")
    # The stored offset is the group's: a member polling Next continues at 7.
    again = iggy.Consumer.Group("py-hl")
    ms = await hl.poll_messages(STREAM, TOPIC, consumer=again, polling_strategy=iggy.PollingStrategy.Next(),
                                count=100, auto_commit=False, partition_id=0)
    check([m.offset() for m in ms] == [7, 8, 9, 10], f"after store_offset(6): {[m.offset() for m in ms]}")
    await cons.delete_offset(0)
    ms = await hl.poll_messages(STREAM, TOPIC, consumer=again, polling_strategy=iggy.PollingStrategy.Next(),
                                count=2, auto_commit=False, partition_id=0)
    check([m.offset() for m in ms] == [0, 1], f"after delete_offset: {[m.offset() for m in ms]}")


async def case_limited_user(addr, ctx):
    c = await root_client(addr)
    sid, tid = ctx["stream_id"], ctx["topic_id"]
    perms = iggy.Permissions(streams={sid: iggy.StreamPermissions(
        topics={tid: iggy.TopicPermissions(poll_messages=True)})})
    u = await c.create_user("py-reader", "reader-pass", iggy.UserStatus.Active, perms)
    check(u.username == "py-reader" and u.status == iggy.UserStatus.Active, f"create_user {u.username} {u.status}")
    r = iggy.IggyClient(addr)
    await r.connect()
    await expect_error(r.login_user("py-reader", "wrong"), "invalid", "a wrong password")
    r = iggy.IggyClient(addr)
    await r.connect()
    await r.login_user("py-reader", "reader-pass")
    # What the user may do: poll the one topic.
    ms = await r.poll_messages(STREAM, TOPIC, consumer=iggy.Consumer.Single(7),
                               polling_strategy=iggy.PollingStrategy.Offset(0), count=3, auto_commit=False,
                               partition_id=0)
    check([m.offset() for m in ms] == [0, 1, 2], f"the reader polls {[m.offset() for m in ms]}")
    # What it may not: the server answers 41 Unauthorized.
    await expect_error(r.get_topic(STREAM, TOPIC), "unauthorized", "get_topic without read_topic")
    await expect_error(r.get_stream(STREAM), "unauthorized", "get_stream without read_stream")
    await expect_error(r.send_messages(STREAM, TOPIC, 0, [iggy.SendMessage("no")]), "unauthorized",
                       "send_messages without send_messages")
    await expect_error(r.create_stream("py-not-mine"), "unauthorized", "create_stream without manage_streams")
    await expect_error(r.create_topic(STREAM, "py-not-mine", 1), "unauthorized", "create_topic without manage_topics")
    check(await c.get_stream("py-not-mine") is None, "the refused stream was not created")
    t = await c.get_topic(STREAM, TOPIC)
    check(t.messages_count == 21, f"the refused send stored nothing ({t.messages_count})")


async def case_cleanup(addr, ctx):
    c = await root_client(addr)
    await c.delete_consumer_group(STREAM, TOPIC, "py-group")
    check(await c.get_consumer_group(STREAM, TOPIC, "py-group") is None, "deleted group is gone")
    await c.delete_topic(STREAM, TOPIC)
    check(await c.get_topic(STREAM, TOPIC) is None, "deleted topic is gone")
    await c.delete_stream(STREAM)
    check(await c.get_stream(STREAM) is None, "deleted stream is gone")
    await c.logout_user()
    await expect_error(c.get_streams(), "unauthenticated", "a request after logout")


CASES = [case_stream_and_topic, case_send, case_poll, case_consumer_group, case_limited_user, case_cleanup]


def start_broker(binary, work):
    out = open(os.path.join(work, "broker.out"), "w")
    err = open(os.path.join(work, "broker.err"), "w")
    p = subprocess.Popen([binary, "--protocol", "0.9", "--listen", "127.0.0.1:0"], stdout=out, stderr=err)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with open(os.path.join(work, "broker.out")) as f:
            for line in f:
                if line.startswith("listening on "):
                    return p, line.split()[-1]
        if p.poll() is not None:
            break
        time.sleep(0.05)
    p.kill()
    with open(os.path.join(work, "broker.err")) as f:
        sys.exit(f"python_sdk_test: the broker did not report its address:\n{f.read()}")


async def run(addr):
    ctx, failed = {}, []
    for case in CASES:
        name = case.__name__[len("case_"):]
        try:
            await asyncio.wait_for(case(addr, ctx), CASE_TIMEOUT_S)
            print(f"ok {name}", flush=True)
        except Exception as e:  # noqa: BLE001 - every failure is reported by case
            failed.append(name)
            print(f"FAIL {name}: {error_text(e)}", flush=True)
    return failed


def main():
    if len(sys.argv) != 2 or not os.access(sys.argv[1], os.X_OK):
        print("usage: python_sdk_test.py BROKER_BINARY (an executable iggy-test-broker)", file=sys.stderr)
        return 2
    from importlib.metadata import version
    print(f"python_sdk_test: apache-iggy {version('apache-iggy')}", flush=True)
    with tempfile.TemporaryDirectory() as work:
        broker, addr = start_broker(sys.argv[1], work)
        failed = []
        try:
            failed = asyncio.run(run(addr))
        finally:
            broker.terminate()
            broker.wait(timeout=10)
            if failed:
                with open(os.path.join(work, "broker.err")) as f:
                    print("python_sdk_test: broker stderr (last 40 lines):\n" + "".join(f.readlines()[-40:]), flush=True)
    print(f"python_sdk_test: {len(CASES) - len(failed)} of {len(CASES)} cases passed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    # No interpreter finalization: the SDK's Tokio runtime and its connections are not torn
    # down under a finalizing interpreter (an abort there would hide the verdict).
    os._exit(code)
