# SPDX-License-Identifier: Apache-2.0
"""Iceberg manifests and manifest lists read by python3-avro (check_avro.py iceberg DIR).

DIR holds manifest.avro, manifest-list.avro and expected.json (tests/unit/iceberg/
manifest_sample.cpp). Checks the Avro schemas against the Iceberg spec's v2 tables
("Manifest Entry Fields", "Data File Fields", "Manifest Lists": name, field id, required or
optional; map key/value and list element ids), the file metadata the spec requires, and
every value against expected.json. Returns a list of failures."""
import datetime
import json
from pathlib import Path

from avro.datafile import DataFileReader
from avro.io import DatumReader

# (name, field id, required in v2[, (key id, value id) of a map | element id of a list])
MANIFEST_ENTRY = [("status", 0, True), ("snapshot_id", 1, False), ("sequence_number", 3, False),
                  ("file_sequence_number", 4, False), ("data_file", 2, True)]
DATA_FILE = [("content", 134, True), ("file_path", 100, True), ("file_format", 101, True),
             ("partition", 102, True), ("record_count", 103, True), ("file_size_in_bytes", 104, True),
             ("column_sizes", 108, False, (117, 118)), ("value_counts", 109, False, (119, 120)),
             ("null_value_counts", 110, False, (121, 122)), ("nan_value_counts", 137, False, (138, 139)),
             ("lower_bounds", 125, False, (126, 127)), ("upper_bounds", 128, False, (129, 130)),
             ("key_metadata", 131, False), ("split_offsets", 132, False, 133), ("equality_ids", 135, False, 136),
             ("sort_order_id", 140, False)]
MANIFEST_FILE = [("manifest_path", 500, True), ("manifest_length", 501, True), ("partition_spec_id", 502, True),
                 ("content", 517, True), ("sequence_number", 515, True), ("min_sequence_number", 516, True),
                 ("added_snapshot_id", 503, True), ("added_files_count", 504, True),
                 ("existing_files_count", 505, True), ("deleted_files_count", 506, True),
                 ("added_rows_count", 512, True), ("existing_rows_count", 513, True),
                 ("deleted_rows_count", 514, True), ("partitions", 507, False, 508), ("key_metadata", 519, False)]
FIELD_SUMMARY = [("contains_null", 509, True), ("contains_nan", 518, False), ("lower_bound", 510, False),
                 ("upper_bound", 511, False)]
EPOCH = datetime.date(1970, 1, 1)


def read(path):
    with open(path, "rb") as f:
        r = DataFileReader(f, DatumReader())
        meta = {k: v.decode() for k, v in r.meta.items()}
        return meta, list(r)


def inner(t):
    """The non-null branch of an optional field's type; (type, optional)."""
    if isinstance(t, list):
        rest = [b for b in t if b != "null"]
        return rest[0], "null" in t
    return t, False


def check_fields(where, fields, table, fail):
    by_name = {f["name"]: f for f in fields}
    names = [f["name"] for f in fields]
    want = [row[0] for row in table]
    if names != want:
        fail(f"{where}: fields {names}, want {want}")
    for row in table:
        name, fid, required = row[0], row[1], row[2]
        f = by_name.get(name)
        if f is None:
            continue
        if f.get("field-id") != fid:
            fail(f"{where}.{name}: field-id {f.get('field-id')}, want {fid}")
        t, optional = inner(f["type"])
        if optional == required:
            fail(f"{where}.{name}: {'optional' if optional else 'required'}, the spec says "
                 f"{'required' if required else 'optional'}")
        if optional and "default" not in f:
            fail(f"{where}.{name}: optional without a null default")
        if len(row) > 3 and isinstance(row[3], tuple):
            if not (isinstance(t, dict) and t.get("type") == "array" and t.get("logicalType") == "map"):
                fail(f"{where}.{name}: not an array with logicalType map")
            else:
                kv = [x.get("field-id") for x in t["items"]["fields"]]
                if kv != list(row[3]):
                    fail(f"{where}.{name}: key/value ids {kv}, want {list(row[3])}")
        elif len(row) > 3 and (not isinstance(t, dict) or t.get("element-id") != row[3]):
            fail(f"{where}.{name}: element-id {t.get('element-id') if isinstance(t, dict) else None}, want {row[3]}")


def kv(arr):
    return {str(e["key"]): e["value"] for e in (arr or [])}


def check(d):
    failures = []
    fail = failures.append
    exp = json.loads((d / "expected.json").read_text())

    meta, entries = read(d / "manifest.avro")
    schema = json.loads(meta["avro.schema"])
    check_fields("manifest_entry", schema["fields"], MANIFEST_ENTRY, fail)
    df = next(f for f in schema["fields"] if f["name"] == "data_file")["type"]
    check_fields("data_file", df["fields"], DATA_FILE, fail)
    part = next(f for f in df["fields"] if f["name"] == "partition")["type"]
    want_part = [(p["name"], p["field-id"]) for p in exp["partition_spec"]]
    got_part = [(p["name"], p.get("field-id")) for p in part["fields"]]
    if got_part != want_part:
        fail(f"partition struct {got_part}, want the spec's {want_part}")
    for key, want in [("format-version", "2"), ("content", "data"), ("partition-spec-id", "0"), ("schema-id", "0")]:
        if meta.get(key) != want:
            fail(f"manifest metadata {key}: {meta.get(key)!r}, want {want!r}")
    if json.loads(meta.get("schema", "null")) != exp["schema"]:
        fail("manifest metadata schema differs from the table schema")
    if json.loads(meta.get("partition-spec", "null")) != exp["partition_spec"]:
        fail("manifest metadata partition-spec differs")
    if len(entries) != len(exp["files"]):
        fail(f"{len(entries)} manifest entries, want {len(exp['files'])}")
    for e, w in zip(entries, exp["files"]):
        f = e["data_file"]
        where = w["file_path"]
        if e["status"] != 1 or e["snapshot_id"] is not None or e["sequence_number"] is not None:
            fail(f"{where}: status {e['status']}, snapshot_id {e['snapshot_id']}: want ADDED, inherited (null)")
        if f["content"] != 0 or f["file_format"].lower() != "parquet":
            fail(f"{where}: content {f['content']}, format {f['file_format']}")
        for k in ("file_path", "record_count", "file_size_in_bytes"):
            if f[k] != w[k]:
                fail(f"{where}: {k} {f[k]!r}, want {w[k]!r}")
        day = f["partition"]["ts_day"]
        day = (day - EPOCH).days if isinstance(day, datetime.date) else day
        if day != w["ts_day"] or f["partition"]["tenant"] != w["tenant"]:
            fail(f"{where}: partition {f['partition']}, want day {w['ts_day']} tenant {w['tenant']}")
        for k in ("value_counts", "null_value_counts"):
            if kv(f[k]) != w[k]:
                fail(f"{where}: {k} {kv(f[k])}, want {w[k]}")
        for k in ("lower_bounds", "upper_bounds"):
            got = {i: v.hex() for i, v in kv(f[k]).items()}
            if got != w[k]:
                fail(f"{where}: {k} {got}, want {w[k]}")

    meta, lists = read(d / "manifest-list.avro")
    schema = json.loads(meta["avro.schema"])
    check_fields("manifest_file", schema["fields"], MANIFEST_FILE, fail)
    parts = next(f for f in schema["fields"] if f["name"] == "partitions")
    check_fields("field_summary", inner(parts["type"])[0]["items"]["fields"], FIELD_SUMMARY, fail)
    for key, want in [("format-version", "2"), ("snapshot-id", "77"), ("parent-snapshot-id", "66"),
                      ("sequence-number", "4")]:
        if meta.get(key) != want:
            fail(f"manifest list metadata {key}: {meta.get(key)!r}, want {want!r}")
    if len(lists) != len(exp["manifests"]):
        fail(f"{len(lists)} manifest list entries, want {len(exp['manifests'])}")
    for m, w in zip(lists, exp["manifests"]):
        for k, v in w.items():
            got = m[k]
            if k == "partitions" and got is not None:
                got = [{"contains_null": s["contains_null"],
                        "lower_bound": None if s["lower_bound"] is None else s["lower_bound"].hex(),
                        "upper_bound": None if s["upper_bound"] is None else s["upper_bound"].hex()} for s in got]
            if got != v:
                fail(f"manifest list {w['manifest_path']}: {k} {got!r}, want {v!r}")
    return failures


def check_foreign(d, sample):
    """A manifest list written by another writer (python3-avro here: the spec's names in
    another field order, record names of its own, deflate, a v1-style added_data_files_count)
    is read by our reader (`sample --read-list FILE` prints what it read as JSON)."""
    import subprocess
    from avro.datafile import DataFileWriter
    from avro.io import DatumWriter
    import avro.schema

    schema = {"type": "record", "name": "ml", "fields": [
        {"name": "added_snapshot_id", "type": "long", "field-id": 503},
        {"name": "manifest_path", "type": "string", "field-id": 500},
        {"name": "manifest_length", "type": "long", "field-id": 501},
        {"name": "partition_spec_id", "type": "int", "field-id": 502},
        {"name": "content", "type": "int", "field-id": 517},
        {"name": "sequence_number", "type": "long", "field-id": 515},
        {"name": "min_sequence_number", "type": "long", "field-id": 516},
        {"name": "added_data_files_count", "type": ["null", "int"], "default": None, "field-id": 504},
        {"name": "existing_files_count", "type": "int", "field-id": 505},
        {"name": "deleted_files_count", "type": "int", "field-id": 506},
        {"name": "added_rows_count", "type": "long", "field-id": 512},
        {"name": "existing_rows_count", "type": "long", "field-id": 513},
        {"name": "deleted_rows_count", "type": "long", "field-id": 514},
        {"name": "partitions", "type": ["null", {"type": "array", "element-id": 508, "items": {
            "type": "record", "name": "summary", "fields": [
                {"name": "contains_null", "type": "boolean", "field-id": 509},
                {"name": "contains_nan", "type": ["null", "boolean"], "default": None, "field-id": 518},
                {"name": "lower_bound", "type": ["null", "bytes"], "default": None, "field-id": 510},
                {"name": "upper_bound", "type": ["null", "bytes"], "default": None, "field-id": 511}]}}],
         "default": None, "field-id": 507}]}
    rows = [
        {"added_snapshot_id": 9001, "manifest_path": "s3://lake/t/metadata/a-m0.avro", "manifest_length": 7000,
         "partition_spec_id": 0, "content": 0, "sequence_number": 3, "min_sequence_number": 2,
         "added_data_files_count": 4, "existing_files_count": 1, "deleted_files_count": 0,
         "added_rows_count": 1000, "existing_rows_count": 10, "deleted_rows_count": 0,
         "partitions": [{"contains_null": False, "contains_nan": None, "lower_bound": b"\x1a\x51\x00\x00",
                         "upper_bound": b"\x1b\x51\x00\x00"},
                        {"contains_null": True, "contains_nan": False, "lower_bound": b"a", "upper_bound": b"zz"}]},
        {"added_snapshot_id": 9000, "manifest_path": "s3://lake/t/metadata/b-m0.avro", "manifest_length": 1,
         "partition_spec_id": 0, "content": 0, "sequence_number": 1, "min_sequence_number": 1,
         "added_data_files_count": 1, "existing_files_count": 0, "deleted_files_count": 0,
         "added_rows_count": 5, "existing_rows_count": 0, "deleted_rows_count": 0, "partitions": None}]
    path = d / "foreign-list.avro"
    with open(path, "wb") as f:
        w = DataFileWriter(f, DatumWriter(), avro.schema.parse(json.dumps(schema)), codec="deflate")
        for r in rows:
            w.append(r)
        w.close()
    p = subprocess.run([sample, "--read-list", str(path)], capture_output=True, text=True)
    if p.returncode != 0:
        return [f"our reader refused the foreign manifest list: {p.stderr.strip()}"]
    got = json.loads(p.stdout)
    failures = []
    if len(got) != len(rows):
        return [f"read {len(got)} entries, want {len(rows)}"]
    for g, r in zip(got, rows):
        want = dict(r)
        want["added_files_count"] = want.pop("added_data_files_count")
        if want["partitions"] is not None:
            want["partitions"] = [{"contains_null": s["contains_null"], "contains_nan": s["contains_nan"],
                                   "lower_bound": s["lower_bound"].hex(), "upper_bound": s["upper_bound"].hex()}
                                  for s in want["partitions"]]
        for k, v in want.items():
            if g.get(k) != v:
                failures.append(f"{r['manifest_path']}: {k} read as {g.get(k)!r}, written {v!r}")
    return failures
