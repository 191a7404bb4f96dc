#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""python3-avro (Debian) as the independent reader of the Avro objects the sink writes.

  check_avro.py types DIR   DIR/types.avro holds the rows of DIR/types.expected.json
  check_avro.py count FILE... prints the record count of each file and the total
  check_avro.py iceberg DIR   DIR's Iceberg manifest and manifest list match the spec's
                              schemas and DIR/expected.json (check_iceberg.py)
  check_avro.py iceberg-foreign DIR SAMPLE   a manifest list python3-avro writes into DIR
                              is read back by SAMPLE --read-list (lib/iceberg's reader)

Exit status 0 when every check holds; 1 with a message per failed check."""
import datetime
import json
import sys
from pathlib import Path

from avro.datafile import DataFileReader
from avro.io import DatumReader

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def norm(kind, v):
    if v is None:
        return None
    if kind == "text" or kind == "int":
        return str(v).lower() if isinstance(v, bool) else str(v)
    if kind == "bool":
        return "true" if v else "false"
    if kind == "real":
        return float(v)
    if kind == "hex":
        return v.hex().upper()
    if kind in ("ts_ms", "ts_us"):
        d = v - EPOCH
        us = (d.days * 86400 + d.seconds) * 1_000_000 + d.microseconds
        return str(us // 1000 if kind == "ts_ms" else us)
    if kind == "days":
        return str((v - datetime.date(1970, 1, 1)).days)
    raise ValueError(kind)


def read(path):
    with open(path, "rb") as f:
        reader = DataFileReader(f, DatumReader())
        codec = reader.get_meta("avro.codec").decode()
        return codec, list(reader)


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    failures = []
    if mode == "types":
        d = Path(args[0])
        exp = json.loads((d / "types.expected.json").read_text())
        codec, recs = read(d / "types.avro")
        if codec != "deflate":
            failures.append(f"types.avro: codec {codec}, want deflate")
        recs.sort(key=lambda r: r[exp["order"]])
        if len(recs) != len(exp["rows"]):
            failures.append(f"types.avro: {len(recs)} records, want {len(exp['rows'])}")
        for r, (rec, want) in enumerate(zip(recs, exp["rows"])):
            for c, kind, w in zip(exp["columns"], exp["kinds"], want):
                got = norm(kind, rec.get(c))
                if got != w and not (kind == "real" and w is not None and got is not None and got == w):
                    failures.append(f"types.avro row {r} {c}: got {got!r}, want {w!r}")
    elif mode == "count":
        total = 0
        for p in args:
            _, recs = read(p)
            print(f"{p}: {len(recs)}")
            total += len(recs)
        print(f"total: {total}")
    elif mode == "iceberg":
        from check_iceberg import check
        failures += check(Path(args[0]))
    elif mode == "iceberg-foreign":
        from check_iceberg import check_foreign
        failures += check_foreign(Path(args[0]), args[1])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for f in failures:
        print(f"FAIL: {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
