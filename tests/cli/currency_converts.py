#!/usr/bin/env python3
"""A plan in another currency is the USD plan times the user's rate (docs/workload.md,
"deployment.currency"; docs/spec/plan-output.md, "Currency").

usage: currency_converts.py GPUSEL   (run from the repository root)

Every single example workload is planned twice, as written (USD) and with
`deployment.currency: {code: EUR, per_usd: 0.86, as_of: 2026-11}`, as `--format csv`,
`--format cashflow-csv` and `--format json`, and compared row by row:

procurement CSV: the EUR plan's USD columns are the USD plan's, byte for byte (the rate changes
no figure the planner computes), but for the prose of reason and alternative_reason, written in
the currency; after them come unit_price_eur, capex_eur, opex_eur_per_month,
rent_eur, resale_eur, resale_subtracted_eur, tco_eur, depreciation_eur_per_month, eur_per_usd
and rate_as_of; each EUR figure is its USD figure × 0.86 within the two roundings to the cent
(|eur − usd × 0.86| ≤ 0.005 + 0.005 × 0.86, and capex_eur is quantity_units × unit_price_eur
exactly), and the totals row is the sum of the rows in EUR too.

cash-flow CSV: the USD columns are the USD plan's; each month's EUR figures are its USD figures
× 0.86 within a cent (both carried to the cent), net_eur = capex + opex + rent − resale and the
role totals add the months exactly.

JSON: every key of the USD document is there unchanged; `currency` is {code: EUR, per_usd: 0.86,
as_of: 2026-11, source: user-given, totals: the USD totals × 0.86 to the cent}."""
import csv
import glob
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from decimal import Decimal

import yaml

binary = sys.argv[1]
rate = Decimal("0.86")
failures = []
compared_rows = 0
compared_months = 0
cent = Decimal("0.01")


def run(path, form):
    result = subprocess.run([binary, "plan", path, "--format", form], capture_output=True, stdin=subprocess.DEVNULL)
    if result.returncode != 0:
        failures.append(f"{path}: {form}: exit {result.returncode}: {result.stderr.decode()[:300]}")
        return None
    return result.stdout.decode("utf-8")


def rows_of(text):
    return list(csv.DictReader(io.StringIO(text, newline="")))


def near(eur, usd, tolerance):
    return abs(Decimal(eur) - Decimal(usd) * rate) <= tolerance


def compare_procurement(path, usd_text, eur_text):
    global compared_rows
    usd = rows_of(usd_text)
    eur = rows_of(eur_text)
    if len(usd) != len(eur):
        failures.append(f"{path}: csv: {len(usd)} rows in USD, {len(eur)} in EUR")
        return
    usd_columns = list(csv.reader(io.StringIO(usd_text, newline="")))[0]
    eur_columns = list(csv.reader(io.StringIO(eur_text, newline="")))[0]
    added = ["unit_price_eur", "capex_eur", "opex_eur_per_month", "rent_eur", "resale_eur", "resale_subtracted_eur",
             "tco_eur", "depreciation_eur_per_month", "eur_per_usd", "rate_as_of"]
    if eur_columns != usd_columns + added:
        failures.append(f"{path}: csv: EUR header {eur_columns[len(usd_columns):]} after the USD columns")
        return
    pairs = [("unit_price_usd", "unit_price_eur"), ("opex_usd_per_month", "opex_eur_per_month"),
             ("rent_usd", "rent_eur"), ("resale_usd", "resale_eur"),
             ("resale_subtracted_usd", "resale_subtracted_eur"), ("tco_usd", "tco_eur"),
             ("depreciation_usd_per_month", "depreciation_eur_per_month")]
    # Both sides rounded to the cent from the same exact figure: |eur − usd × rate| ≤ ½ cent × (1 + rate).
    tolerance = Decimal("0.005") * (1 + rate)
    sums = {eur_key: Decimal(0) for _, eur_key in pairs}
    sums["capex_eur"] = Decimal(0)
    for index, (a, b) in enumerate(zip(usd, eur)):
        where = f"{path}: csv row {index + 2}"
        # Prose columns are written in the currency ("tied on TCO (within €43 …)"); every other
        # USD column is the USD plan's.
        for column in usd_columns:
            if column not in ("reason", "alternative", "alternative_reason") and a[column] != b[column]:
                failures.append(f"{where}: {column} is {b[column]!r} in the EUR plan, {a[column]!r} in USD")
        if b["role"] == "total":
            for key, total in sums.items():
                if b[key] != "" and Decimal(b[key]) != total:
                    failures.append(f"{where}: total {key} {b[key]} is not the sum of the rows, {total}")
            continue
        compared_rows += 1
        if b["eur_per_usd"] != "0.86" or b["rate_as_of"] != "2026-11":
            failures.append(f"{where}: rate {b['eur_per_usd']} of {b['rate_as_of']}")
        for usd_key, eur_key in pairs:
            if a[usd_key] == "" or b[eur_key] == "":
                if a[usd_key] != b[eur_key]:
                    failures.append(f"{where}: {eur_key} {b[eur_key]!r} beside {usd_key} {a[usd_key]!r}")
                continue
            if not near(b[eur_key], a[usd_key], tolerance):
                failures.append(f"{where}: {eur_key} {b[eur_key]} is not {usd_key} {a[usd_key]} × 0.86")
            if eur_key in sums:
                sums[eur_key] += Decimal(b[eur_key])
        expected_capex = (Decimal(b["quantity_units"]) * Decimal(b["unit_price_eur"])
                          if Decimal(a["capex_usd"]) > 0 else Decimal(0))
        if Decimal(b["capex_eur"]) != expected_capex:
            failures.append(f"{where}: capex_eur {b['capex_eur']} is not quantity_units × unit_price_eur")
        sums["capex_eur"] += Decimal(b["capex_eur"])


def compare_cash_flow(path, usd_text, eur_text):
    global compared_months
    usd = rows_of(usd_text)
    eur = rows_of(eur_text)
    if len(usd) != len(eur):
        failures.append(f"{path}: cashflow: {len(usd)} rows in USD, {len(eur)} in EUR")
        return
    usd_columns = list(csv.reader(io.StringIO(usd_text, newline="")))[0]
    names = ["capex", "opex", "rent", "resale", "net", "cumulative", "resale_not_counted"]
    role_sums = {name: Decimal(0) for name in names}
    for index, (a, b) in enumerate(zip(usd, eur)):
        where = f"{path}: cashflow row {index + 2}"
        for column in usd_columns:
            if a[column] != b[column]:
                failures.append(f"{where}: {column} is {b[column]!r} in the EUR plan, {a[column]!r} in USD")
        if b["month"] == "total":
            if b["role"] != "total":
                for name in ["capex", "opex", "rent", "resale", "resale_not_counted"]:
                    if Decimal(b[name + "_eur"]) != role_sums[name]:
                        failures.append(f"{where}: {name}_eur total {b[name + '_eur']} ≠ months {role_sums[name]}")
            role_sums = {name: Decimal(0) for name in names}
            continue
        compared_months += 1
        values = {name: Decimal(b[name + "_eur"]) for name in names}
        if values["net"] != values["capex"] + values["opex"] + values["rent"] - values["resale"]:
            failures.append(f"{where}: net_eur is not capex + opex + rent − resale")
        for name in names:
            role_sums[name] += values[name]
            # Each side carried to the cent from a running total: within a cent of usd × rate.
            if name != "cumulative" and not near(b[name + "_eur"], a[name + "_usd"], Decimal("0.02")):
                failures.append(f"{where}: {name}_eur {b[name + '_eur']} is not {name}_usd {a[name + '_usd']} × 0.86")


def compare_json(path, usd_text, eur_text):
    usd = json.loads(usd_text)
    eur = json.loads(eur_text)
    currency = eur.pop("currency", None)
    if currency is None:
        failures.append(f"{path}: json: no currency object")
        return
    if (currency.get("code"), currency.get("per_usd"), currency.get("as_of"), currency.get("source")) != (
            "EUR", 0.86, "2026-11", "user-given"):
        failures.append(f"{path}: json: currency {currency}")
    if set(usd.keys()) != set(eur.keys()):
        failures.append(f"{path}: json: keys {sorted(set(usd) ^ set(eur))} differ")
    if usd["totals"] != eur["totals"]:
        failures.append(f"{path}: json: USD totals differ")
    pairs = {"capex": "capex_usd", "monthly_opex": "monthly_opex_usd", "tco": "tco_usd",
             "opex_per_month": "opex_usd_per_month", "rent": "rent_usd", "resale": "resale_usd",
             "resale_subtracted": "resale_subtracted_usd"}
    for key, usd_key in pairs.items():
        value = currency["totals"].get(key)
        # Both to the cent from the same exact figure: within ½ cent × (1 + 0.86).
        if value is None or abs(value - usd["totals"][usd_key] * 0.86) > 0.0093 + 1e-9:
            failures.append(f"{path}: json: currency.totals.{key} {value} is not {usd['totals'][usd_key]} × 0.86")


scratch = tempfile.mkdtemp(prefix="currency-converts-")
compared_files = 0
for path in sorted(glob.glob("examples/*.yaml")):
    with open(path, encoding="utf-8") as handle:
        workload = yaml.safe_load(handle)
    if not isinstance(workload, dict) or "workloads" in workload or "proposal" in workload or "gpus" in workload:
        continue
    # Single workloads name no other file, so that the copies plan as the originals do.
    for name in ["usd", "eur"]:
        variant = dict(workload)
        if name == "eur":
            variant["deployment"] = dict(variant.get("deployment") or {})
            variant["deployment"]["currency"] = {"code": "EUR", "per_usd": 0.86, "as_of": "2026-11"}
        with open(os.path.join(scratch, name + "-" + os.path.basename(path)), "w", encoding="utf-8") as handle:
            yaml.safe_dump(variant, handle, allow_unicode=True, sort_keys=False)
    usd_path = os.path.join(scratch, "usd-" + os.path.basename(path))
    eur_path = os.path.join(scratch, "eur-" + os.path.basename(path))
    outputs = {}
    for form in ["csv", "cashflow-csv", "json"]:
        outputs[form] = (run(usd_path, form), run(eur_path, form))
    if any(a is None or b is None for a, b in outputs.values()):
        continue
    compared_files += 1
    compare_procurement(path, *outputs["csv"])
    compare_cash_flow(path, *outputs["cashflow-csv"])
    compare_json(path, *outputs["json"])

shutil.rmtree(scratch, ignore_errors=True)
if compared_files < 5 or compared_rows == 0 or compared_months == 0:
    failures.append(f"only {compared_files} workloads, {compared_rows} rows and {compared_months} months compared")
for failure in failures[:40]:
    print(failure)
print(f"{compared_files} workloads: {compared_rows} order lines and {compared_months} months compared in EUR")
sys.exit(1 if failures else 0)
