#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Reads an Iceberg table through the REST catalog with PyIceberg (test-only reader, from
the venv scripts/install-deps makes: .cache/iceberg-rest/venv) and prints one JSON line:
{"snapshot_id": N or null, "summary": {...}, "snapshots": N, "rows": N or null,
 "files": [[path, record_count], ...] or null}.

usage: read_table.py CATALOG_URI NAMESPACE TABLE [--rows] [--files]
S3 settings from the environment: RGW_ENDPOINT, RGW_ACCESS_KEY, RGW_SECRET_KEY, RGW_REGION.
--rows also scans the current snapshot's data files (they must exist); --files lists the
current snapshot's data files as PyIceberg's scan planning finds them (it reads the manifest
list and the manifests, not the data files)."""
import json
import os
import sys

from pyiceberg.catalog.rest import RestCatalog


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
    snap = t.current_snapshot()
    out = {
        "snapshot_id": snap.snapshot_id if snap else None,
        "summary": dict(snap.summary.additional_properties) | {"operation": snap.summary.operation.value}
        if snap else {},
        "snapshots": len(t.metadata.snapshots),
        "rows": None,
        "files": None,
    }
    if "--files" in sys.argv:
        out["files"] = sorted([task.file.file_path, task.file.record_count] for task in t.scan().plan_files())
    if "--rows" in sys.argv:
        out["rows"] = t.scan().to_arrow().num_rows
    print(json.dumps(out, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
