#!/usr/bin/env python3
"""The finance CSVs add up (docs/cost-model.md, "The procurement CSV" and "Cash flow").

usage: csv_adds_up.py GPUSEL   (run from the repository root)

Every example workload and project is planned as `--format csv` and `--format cashflow-csv` and
read back with Python's csv module (the text written back with csv.writer must read the same):

procurement CSV: on every line capex_usd = quantity_units × unit_price_usd to the cent (0 when
rented), tco_usd = capex_usd + opex_usd_per_month × horizon_months + rent_usd −
resale_subtracted_usd (within half a cent per month of the rounded monthly opex, plus a cent per
rounded term), resale_subtracted_usd is 0 or resale_usd, a host line carries no GPUs and is
priced per unit, a rental line buys nothing and is priced per unit-hour; the final row, whose
role is `total`, carries the column sums of gpus and of every money column.

cash-flow CSV: every month's net_usd = capex + opex + rent − resale and cumulative_usd is the
running sum; each role's months add up to its `total` row exactly, whose net_usd equals the sum
of the role's tco_usd in the procurement CSV (within a cent per money column), and the plan's
`total` row is the sum of the role totals and the procurement CSV's total tco_usd.

Each single workload is checked again over 36 months with deployment.count_resale: true, so that
spares and subtracted resale occur."""
import csv
import glob
import io
import os
import shutil
import subprocess
import sys
import tempfile
from decimal import Decimal

import yaml

binary = sys.argv[1]
failures = []
checked_rows = 0
checked_months = 0
files = sorted(glob.glob("examples/*.yaml") + glob.glob("examples/*/project.yaml") +
               glob.glob("examples/scale/*.yaml"))
money = ["capex_usd", "opex_usd_per_month", "rent_usd", "resale_usd", "resale_subtracted_usd", "tco_usd",
         "depreciation_usd_per_month"]
cent = Decimal("0.01")


def plan(path, form):
    result = subprocess.run([binary, "plan", path, "--format", form], capture_output=True, stdin=subprocess.DEVNULL)
    if result.returncode != 0:
        failures.append(f"{path}: {form}: exit {result.returncode}: {result.stderr.decode()[:200]}")
        return None
    text = result.stdout.decode("utf-8")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    # Round trip: what csv.writer makes of the rows reads back the same.
    again = io.StringIO(newline="")
    csv.writer(again, lineterminator="\r\n").writerows(rows)
    if list(csv.reader(io.StringIO(again.getvalue(), newline=""))) != rows:
        failures.append(f"{path}: {form}: does not round-trip through the csv module")
    if not rows or len({len(row) for row in rows}) != 1:
        failures.append(f"{path}: {form}: rows of different lengths")
        return None
    return [dict(zip(rows[0], row)) for row in rows[1:]]


def check_procurement(path, rows):
    global checked_rows
    lines, total = rows[:-1], rows[-1]
    if total["role"] != "total" or any(row["role"] == "total" for row in lines):
        failures.append(f"{path}: the last row, and only it, must be the totals row")
        return {}
    tco_by_role = {}
    for row in lines:
        checked_rows += 1
        where = f"{path}: {row['role']} {row['item']}"
        quantity = Decimal(row["quantity_units"])
        unit = Decimal(row["unit_price_usd"])
        capex = Decimal(row["capex_usd"])
        opex = Decimal(row["opex_usd_per_month"])
        rent = Decimal(row["rent_usd"])
        resale = Decimal(row["resale_usd"])
        subtracted = Decimal(row["resale_subtracted_usd"])
        tco = Decimal(row["tco_usd"])
        months = Decimal(row["horizon_months"])
        if row["acquisition"].startswith("buy-"):
            if quantity * unit != capex:
                failures.append(f"{where}: {quantity} × {unit} != capex {capex}")
            # The one rent a purchase pays: the weeks its delivery is late for deployment.deliver_by,
            # bridged by renting (docs/cost-model.md, "Delivery and the wait").
            with open(path, encoding="utf-8") as workload:
                dated = "deliver_by:" in workload.read()
            if row["price_per"] != "unit" or (rent != 0 and not dated):
                failures.append(f"{where}: a purchase is priced per unit and pays no rent")
        else:
            if capex != 0 or opex != 0 or resale != 0 or row["price_per"] != "unit-hour" or row["item"] != "gpus":
                failures.append(f"{where}: a rental line buys nothing, priced per unit-hour")
        if row["item"] == "host":
            if int(row["gpus"]) != 0 or row["price_per"] != "unit" or opex != 0 or resale != 0:
                failures.append(f"{where}: a host line holds no GPUs and is priced per unit")
        elif row["item"] == "gpus":
            if int(row["gpus"]) < (quantity - Decimal(row["spare_units"])) * int(row["gpus_per_unit"]):
                failures.append(f"{where}: GPUs fewer than the units hold")
        else:
            failures.append(f"{where}: item must be gpus or host")
        if subtracted not in (0, resale):
            failures.append(f"{where}: resale_subtracted_usd {subtracted} is neither 0 nor resale_usd {resale}")
        # opex_usd_per_month is rounded to the cent: × months it may be off by half a cent a month.
        tolerance = months * Decimal("0.005") + 4 * cent
        if abs(capex + opex * months + rent - subtracted - tco) > tolerance:
            failures.append(f"{where}: {capex} + {opex} × {months} + {rent} − {subtracted} != tco {tco}")
        if not row["offer"] or not row["price_kind"] or not row["price_as_of"]:
            failures.append(f"{where}: offer, price kind and date must be named")
        if row["item"] == "host" and row["price_kind"] not in ("list", "msrp", "quote", "street", "reported",
                                                               "estimate"):
            failures.append(f"{where}: host price kind {row['price_kind']}")
        # A role may order several lines (an owned base and a rented peak, a prefill/decode split):
        # the cash flow has one block per role, GPU and acquisition.
        key = (row["role"], row["gpu"], row["acquisition"])
        tco_by_role[key] = tco_by_role.get(key, Decimal(0)) + tco
    for column in money + ["gpus"]:
        if total[column] == "":
            continue
        expected = sum(Decimal(row[column]) for row in lines)
        if Decimal(total[column]) != expected:
            failures.append(f"{path}: total {column} {total[column]} != {expected}")
    tco_by_role["total"] = Decimal(total["tco_usd"])
    return tco_by_role


def check_cash_flow(path, rows, tco_by_role):
    global checked_months
    columns = ["capex_usd", "opex_usd", "rent_usd", "resale_usd", "net_usd", "resale_not_counted_usd"]
    sums = {}
    running = Decimal(0)
    role_totals = {column: Decimal(0) for column in columns}
    for row in rows:
        if row["role"] == "total":
            for column in columns:
                if Decimal(row[column]) != role_totals[column]:
                    failures.append(f"{path}: cash flow: plan total {column} {row[column]} != {role_totals[column]}")
            if abs(Decimal(row["net_usd"]) - tco_by_role.get("total", Decimal(-1))) > 6 * cent * len(tco_by_role):
                failures.append(f"{path}: cash flow total {row['net_usd']} != procurement TCO {tco_by_role.get('total')}")
            continue
        if row["month"] == "total":
            for column in columns:
                if Decimal(row[column]) != sums.get(column, Decimal(0)):
                    failures.append(f"{path}: cash flow: {row['role']} total {column} {row[column]} != months "
                                    f"{sums.get(column)}")
                role_totals[column] += Decimal(row[column])
            if Decimal(row["cumulative_usd"]) != running:
                failures.append(f"{path}: cash flow: {row['role']} cumulative total {row['cumulative_usd']}")
            expected = tco_by_role.get((row["role"], row["gpu"], row["acquisition"]))
            # Both files round each money column to the cent on its own.
            if expected is None or abs(Decimal(row["net_usd"]) - expected) > 6 * cent:
                failures.append(f"{path}: cash flow: {row['role']} sums to {row['net_usd']}, TCO {expected}")
            sums = {}
            running = Decimal(0)
            continue
        checked_months += 1
        values = {column: Decimal(row[column]) for column in columns}
        if values["capex_usd"] + values["opex_usd"] + values["rent_usd"] - values["resale_usd"] != values["net_usd"]:
            failures.append(f"{path}: cash flow: {row['role']} month {row['month']}: net is not capex + opex + rent − "
                            "resale")
        if values["capex_usd"] != 0 and row["month"] != "0":
            failures.append(f"{path}: cash flow: {row['role']} capex after delivery (month {row['month']})")
        running += values["net_usd"]
        if Decimal(row["cumulative_usd"]) != running:
            failures.append(f"{path}: cash flow: {row['role']} month {row['month']}: cumulative {row['cumulative_usd']}"
                            f" != {running}")
        for column in columns:
            sums[column] = sums.get(column, Decimal(0)) + values[column]


# Each single workload again over 36 months (spares are bought beyond 24) with its resale
# counted: the lines must add up with resale_subtracted_usd in play.
variants = []
scratch = tempfile.mkdtemp(prefix="csv-adds-up-")
for path in files:
    with open(path, encoding="utf-8") as handle:
        workload = yaml.safe_load(handle)
    if not isinstance(workload, dict) or "roles" in workload or "workloads" in workload:
        continue
    deployment = workload.setdefault("deployment", {})
    deployment["horizon"] = "36mo"
    deployment["count_resale"] = True
    variant = os.path.join(scratch, "resale-36mo-" + os.path.basename(path))
    with open(variant, "w", encoding="utf-8") as handle:
        yaml.safe_dump(workload, handle, allow_unicode=True, sort_keys=False)
    variants.append(variant)
counted = 0
spares = 0

for path in files + variants:
    rows = plan(path, "csv")
    if rows is None:
        continue
    if not rows:
        failures.append(f"{path}: no rows")
        continue
    tco_by_role = check_procurement(path, rows)
    counted += sum(1 for row in rows[:-1] if row["resale_subtracted_usd"] not in ("", "0.00"))
    spares += sum(1 for row in rows[:-1] if row["spare_units"] not in ("", "0"))
    flow = plan(path, "cashflow-csv")
    if flow is None:
        continue
    check_cash_flow(path, flow, tco_by_role)

shutil.rmtree(scratch, ignore_errors=True)
if counted == 0 or spares == 0:
    failures.append(f"the 36-month variants must subtract some resale ({counted} lines) and buy spares ({spares})")
for failure in failures:
    print(failure)
print(f"csv_adds_up: {len(files)} plans and {len(variants)} 36-month variants with resale counted, {checked_rows} "
      f"order lines re-added ({counted} with resale subtracted, {spares} with spares), {checked_months} cash-flow months")
sys.exit(1 if failures or checked_rows == 0 or checked_months == 0 else 0)
