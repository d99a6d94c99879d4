#!/usr/bin/env python3
"""The finance CSV adds up (docs/cost-model.md, "The procurement CSV").

usage: csv_adds_up.py GPUSEL   (run from the repository root)

Every example workload and project is planned as CSV and read back with Python's csv module:
on every purchase row quantity × unit_price_usd + host_usd = total_usd to the cent, a rental
row buys nothing, and the final row, whose role is `total`, carries the column sums of
total_usd, monthly_opex_usd, tco_usd, host_usd and resale_usd."""
import csv
import glob
import io
import subprocess
import sys
from decimal import Decimal

binary = sys.argv[1]
failures = []
checked_rows = 0
files = sorted(glob.glob("examples/*.yaml") + glob.glob("examples/*/project.yaml") +
               glob.glob("examples/scale/*.yaml"))
summed = ["total_usd", "monthly_opex_usd", "tco_usd", "host_usd", "resale_usd"]
for path in files:
    result = subprocess.run([binary, "plan", path, "--format", "csv"], capture_output=True, stdin=subprocess.DEVNULL)
    if result.returncode != 0:
        failures.append(f"{path}: exit {result.returncode}: {result.stderr.decode()[:200]}")
        continue
    rows = list(csv.DictReader(io.StringIO(result.stdout.decode("utf-8"), newline="")))
    if not rows:
        failures.append(f"{path}: no rows")
        continue
    lines, total = rows[:-1], rows[-1]
    if total["role"] != "total" or any(row["role"] == "total" for row in lines):
        failures.append(f"{path}: the last row, and only it, must be the totals row")
        continue
    for row in lines:
        checked_rows += 1
        quantity = Decimal(row["quantity"])
        unit = Decimal(row["unit_price_usd"])
        host = Decimal(row["host_usd"])
        if row["acquisition"].startswith("buy-"):
            if quantity * unit + host != Decimal(row["total_usd"]):
                failures.append(f"{path}: {row['role']}: {quantity} × {unit} + {host} != {row['total_usd']}")
            if row["price_per"] not in ("gpu", "unit"):
                failures.append(f"{path}: {row['role']}: price_per {row['price_per']} on a purchase")
        else:
            if Decimal(row["total_usd"]) != 0 or host != 0 or row["price_per"] != "unit-hour":
                failures.append(f"{path}: {row['role']}: a rental row buys nothing, priced per unit-hour")
        if Decimal(row["units"]) != quantity or int(row["gpus"]) < int(row["units"]) * int(row["gpus_per_unit"]):
            failures.append(f"{path}: {row['role']}: units and GPUs disagree with quantity")
        if not row["offer"] or not row["price_kind"] or not row["price_as_of"]:
            failures.append(f"{path}: {row['role']}: offer, price kind and date must be named")
    for column in summed:
        if total[column] == "":
            continue
        expected = sum(Decimal(row[column]) for row in lines)
        if Decimal(total[column]) != expected:
            failures.append(f"{path}: total {column} {total[column]} != {expected}")

for failure in failures:
    print(failure)
print(f"csv_adds_up: {len(files)} plans, {checked_rows} procurement rows re-added")
sys.exit(1 if failures or checked_rows == 0 else 0)
