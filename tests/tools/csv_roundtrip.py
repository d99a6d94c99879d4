#!/usr/bin/env python3
"""Independent check of gpusel's CSV writer: parse CSV_FILE with Python's csv module and
compare every field with EXPECTED_JSON (a list of rows, each a list of strings).

usage: csv_roundtrip.py CSV_FILE EXPECTED_JSON
Exit 0 when they are equal and every record ends with CRLF; 1 otherwise, naming the first difference."""
import csv
import json
import sys

csv_path, expected_path = sys.argv[1], sys.argv[2]
with open(expected_path, encoding="utf-8") as f:
    expected = json.load(f)
with open(csv_path, "rb") as f:
    raw = f.read()
if not raw.endswith(b"\r\n"):
    print("the file does not end with CRLF")
    sys.exit(1)
# utf-8-sig drops a byte order mark when there is one; newline="" leaves CR and LF to csv.
with open(csv_path, encoding="utf-8-sig", newline="") as f:
    rows = list(csv.reader(f, strict=True))
if len(rows) != len(expected):
    print(f"{len(rows)} rows, expected {len(expected)}")
    sys.exit(1)
for number, (row, want) in enumerate(zip(rows, expected), start=1):
    if row != want:
        print(f"row {number}: {row!r} != {want!r}")
        sys.exit(1)
print(f"csv roundtrip: {len(rows)} rows equal")
