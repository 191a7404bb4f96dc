#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Reads an Iceberg table through the REST catalog with PyIceberg (test-only reader, from
the venv scripts/install-deps makes: .cache/iceberg-rest/venv) and prints one JSON line:
{"snapshot_id": N or null, "summary": {...}, "snapshots": N, "properties": {...}, "rows": N or null,
 "files": [[path, record_count, [partition values]], ...] or null, "select": [[v, ...], ...] or null}.

usage: read_table.py CATALOG_URI NAMESPACE TABLE [--rows] [--files] [--select=COL,COL...] [--add-again=PATH]
                     [--append-copy=N] [--stats] [--plan=FILTER]...
S3 settings from the environment: RGW_ENDPOINT, RGW_ACCESS_KEY, RGW_SECRET_KEY, RGW_REGION.
--rows also scans the current snapshot's data files (they must exist); --files lists the
current snapshot's data files as PyIceberg's scan planning finds them (it reads the manifest
list and the manifests, not the data files), with each file's partition values as its manifest
entry has them (a day transform's as days since 1970-01-01); --select scans the current
snapshot and lists every row's values of the given columns (timestamps as microseconds since
the epoch). --add-again=PATH first appends the data file PATH (one the table holds) once more,
in a new snapshot (PyIceberg's add_files without its duplicate check): its rows are then twice
in the table, which is what `verify` must find. --append-copy=N first appends a copy of N of the
table's rows as another writer would (PyIceberg's append writes a data file of its own name).
--stats lists, per data file of the current snapshot, its manifest entry's column statistics
(column_sizes, value_counts, null_value_counts, nan_value_counts, lower_bounds, upper_bounds;
bounds decoded by PyIceberg's single-value deserialization, timestamps as microseconds) by
column name, and the same counts, minimum and maximum as pyarrow computes them from the data
file's own rows ("actual"), and the Parquet codecs of its column chunks:
{"stats": [{"path", "manifest": {...}, "actual": {...}, "codecs": ["SNAPPY"]}]}.
--plan=FILTER (repeatable) counts the data files PyIceberg's scan planning keeps for the row
filter FILTER (PyIceberg's expression syntax, e.g. "part == 1"): {"planned": {FILTER: N}}."""
import datetime
import json
import os
import sys

# The AWS SDK inside pyarrow sends checksum trailers with chunked uploads unless told to send
# checksums only when required; RGW 16 answers those with 411 MissingContentLength
# (tests/integration/README.md, RGW facts; the catalog fixture sets the same for its SDK).
os.environ.setdefault("AWS_REQUEST_CHECKSUM_CALCULATION", "WHEN_REQUIRED")
os.environ.setdefault("AWS_RESPONSE_CHECKSUM_VALIDATION", "WHEN_REQUIRED")

from pyiceberg.catalog.rest import RestCatalog  # noqa: E402 (after the environment above)


def partition_values(record) -> list:
    """A manifest entry's partition tuple as plain JSON values (dates as days since the epoch). --add-again=PATH first appends the data file PATH (one the table holds) once more,
in a new snapshot (PyIceberg's add_files without its duplicate check): its rows are then twice
in the table, which is what `verify` must find."""
    out = []
    for i in range(len(record)):
        v = record[i]
        if isinstance(v, datetime.date):
            v = (v - datetime.date(1970, 1, 1)).days
        out.append(v)
    return out


def file_stats(t) -> list:
    """--stats: each data file's manifest statistics and what its rows say."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
    from pyiceberg.conversions import from_bytes
    schema = t.schema()
    out = []
    for task in t.scan().plan_files():
        f = task.file
        by_name = {}
        for key in ("column_sizes", "value_counts", "null_value_counts", "nan_value_counts"):
            by_name[key] = {schema.find_column_name(i): n for i, n in (getattr(f, key) or {}).items()}
        for key in ("lower_bounds", "upper_bounds"):
            by_name[key] = {}
            for i, b in (getattr(f, key) or {}).items():
                v = from_bytes(schema.find_field(i).field_type, b)
                by_name[key][schema.find_column_name(i)] = v if isinstance(v, (int, float, str, bool)) else str(v)
        with t.io.new_input(f.file_path).open() as fh:
            pf = pq.ParquetFile(fh)
            codecs = sorted({pf.metadata.row_group(g).column(c).compression
                             for g in range(pf.metadata.num_row_groups) for c in range(pf.metadata.num_columns)})
            rows = pf.read()
        actual = {}
        for name in rows.column_names:
            col = rows.column(name)
            if pa_is_nested(col.type):
                continue
            if str(col.type).startswith("timestamp"):
                col = col.cast("int64")
            mm = pc.min_max(col).as_py()
            actual[name] = {"values": len(col), "nulls": col.null_count, "min": mm["min"], "max": mm["max"]}
        out.append({"path": f.file_path, "manifest": by_name, "actual": actual, "codecs": codecs})
    return sorted(out, key=lambda e: e["path"])


def pa_is_nested(t) -> bool:
    import pyarrow as pa
    return pa.types.is_map(t) or pa.types.is_list(t) or pa.types.is_struct(t)


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    uri, namespace, table = args
    catalog = RestCatalog(
        "test",
        **{
            "uri": uri,
            "s3.endpoint": os.environ["RGW_ENDPOINT"],
            "s3.access-key-id": os.environ["RGW_ACCESS_KEY"],
            "s3.secret-access-key": os.environ["RGW_SECRET_KEY"],
            "s3.region": os.environ.get("RGW_REGION", "us-east-1"),
            "s3.path-style-access": "true",
        },
    )
    t = catalog.load_table((*namespace.split("."), table))
    again = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--add-again=")]
    if again:
        t.add_files(file_paths=again, check_duplicate_files=False)
        t = catalog.load_table((*namespace.split("."), table))
    copies = [int(a.split("=", 1)[1]) for a in sys.argv if a.startswith("--append-copy=")]
    if copies:
        t.append(t.scan(limit=copies[0]).to_arrow())
        t = catalog.load_table((*namespace.split("."), table))
    snap = t.current_snapshot()
    out = {
        "snapshot_id": snap.snapshot_id if snap else None,
        "summary": dict(snap.summary.additional_properties) | {"operation": snap.summary.operation.value}
        if snap else {},
        "snapshots": len(t.metadata.snapshots),
        "properties": dict(t.properties),
        "rows": None,
        "files": None,
        "select": None,
    }
    if "--files" in sys.argv:
        out["files"] = sorted([task.file.file_path, task.file.record_count, partition_values(task.file.partition)]
                              for task in t.scan().plan_files())
    select = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--select=")]
    if select:
        import pyarrow as pa
        cols = select[0].split(",")
        table = t.scan(selected_fields=tuple(cols)).to_arrow()
        columns = []
        for c in cols:
            col = table.column(c)
            if pa.types.is_timestamp(col.type):
                col = col.cast(pa.int64())
            columns.append(col.to_pylist())
        out["select"] = [list(r) for r in zip(*columns)]
    if "--stats" in sys.argv:
        out["stats"] = file_stats(t)
    plans = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--plan=")]
    if plans:
        out["planned"] = {p: len(list(t.scan(row_filter=p).plan_files())) for p in plans}
    if "--rows" in sys.argv:
        out["rows"] = t.scan().to_arrow().num_rows
    print(json.dumps(out, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
