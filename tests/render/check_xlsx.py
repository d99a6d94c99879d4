#!/usr/bin/env python3
"""Checks the XLSX workbook of `gpusel plan --format xlsx` from outside C++.

Usage: check_xlsx.py FIXTURE_PROGRAM OUTPUT.xlsx

Runs the fixture program (tests/render/render_fixture.cpp), which renders the hand-built
report of tests/unit/plan_fixture.hpp, then reads the file with the standard library only
(zipfile + ElementTree): the ZIP is valid, the sheets are Procurement, Cash flow, Candidates,
Rejected and Assumptions, the Procurement totals are =SUM() formulas over the money columns with cached
values that match the lines (worked out by hand below), money cells carry a currency format,
and no text cell became a formula.
"""

import subprocess
import sys
import zipfile
import xml.etree.ElementTree as ET

MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def main():
    program, output = sys.argv[1], sys.argv[2]
    subprocess.run([program, "xlsx", output], check=True)

    with open(output, "rb") as handle:
        check(handle.read(4) == b"PK\x03\x04", "the file does not start with a ZIP signature")

    with zipfile.ZipFile(output) as archive:
        check(archive.testzip() is None, "a ZIP member is corrupt")
        workbook = ET.fromstring(archive.read("xl/workbook.xml"))
        sheets = [sheet.get("name") for sheet in workbook.iter(MAIN + "sheet")]
        check(sheets == ["Procurement", "Cash flow", "Candidates", "Rejected", "Assumptions"], f"sheets are {sheets}")

        relations = ET.fromstring(archive.read("xl/_rels/workbook.xml.rels"))
        targets = {rel.get("Id"): rel.get("Target") for rel in relations}
        paths = {sheet.get("name"): "xl/" + targets[sheet.get(REL + "id")] for sheet in workbook.iter(MAIN + "sheet")}

        shared = ET.fromstring(archive.read("xl/sharedStrings.xml"))
        strings = ["".join(t.text or "" for t in si.iter(MAIN + "t")) for si in shared.iter(MAIN + "si")]

        styles = ET.fromstring(archive.read("xl/styles.xml"))
        number_formats = {nf.get("numFmtId"): nf.get("formatCode") for nf in styles.iter(MAIN + "numFmt")}
        cell_formats = [xf.get("numFmtId") for xf in styles.find(MAIN + "cellXfs")]

        def cells(sheet_name):
            sheet = ET.fromstring(archive.read(paths[sheet_name]))
            result = {}
            for cell in sheet.iter(MAIN + "c"):
                value = cell.find(MAIN + "v")
                formula = cell.find(MAIN + "f")
                text = value.text if value is not None else None
                if cell.get("t") == "s" and text is not None:
                    text = strings[int(text)]
                result[cell.get("r")] = {
                    "value": text,
                    "formula": formula.text if formula is not None else None,
                    "format": number_formats.get(cell_formats[int(cell.get("s", "0"))]),
                    "type": cell.get("t"),
                }
            return result

        procurement = cells("Procurement")
        columns = [chr(ord("A") + i) for i in range(26)] + ["AA", "AB"]
        header = [procurement[f"{column}1"]["value"] for column in columns]
        check(header == ["role", "item", "gpu", "gpu_name", "acquisition", "offer", "offer_name", "provider",
                         "quantity_units", "spare_units", "gpus_per_unit", "gpus", "unit_price_usd", "price_per",
                         "price_kind", "price_as_of", "capex_usd", "opex_usd_per_month", "rent_usd", "resale_usd",
                         "resale_subtracted_usd", "tco_usd", "horizon_months", "depreciation_usd_per_month",
                         "precision", "reason", "alternative", "alternative_reason"], f"Procurement header is {header}")
        check(procurement["D2"]["value"] == 'NVIDIA A100 80GB SXM4, "datacenter"', "gpu_name with comma and quotes")
        check(float(procurement["M2"]["value"]) == 2.79 and procurement["N2"]["value"] == "unit-hour",
              "unit price of the rental, per unit-hour")
        # Row 3 the cards (12 × $7,500, street), row 4 their hosts (2 × $3,000.25, an estimate).
        check(procurement["B3"]["value"] == "gpus" and procurement["B4"]["value"] == "host", "a line per item")
        check(float(procurement["Q3"]["value"]) == 90000 and float(procurement["Q4"]["value"]) == 6000.5, "capex")
        check(procurement["O3"]["value"] == "street" and procurement["O4"]["value"] == "estimate",
              "each line its own price kind")
        check(float(procurement["L4"]["value"]) == 0, "a host line holds no GPUs")
        check(procurement["Q3"]["format"] == "$#,##0.00", f"money format is {procurement['Q3']['format']}")
        # Text that looks like a formula stays text (a shared string), never a formula.
        check(procurement["Z3"]["type"] == "s" and procurement["Z3"]["value"].startswith("-5 %"), "reason Z3 is text")
        check(procurement["AB3"]["type"] == "s" and procurement["AB3"]["value"].startswith("=1+1"),
              "reason AB3 is text")

        # Totals row 5: SUM over rows 2..4; cached values worked out by hand: GPUs 4 + 12 + 0; capex
        # 0 + 90,000 + 6,000.5; opex 1,234.567 (the cards only); rent 3,950 (the rental); resale
        # 40,500 reported, 0 subtracted; TCO 3,950 + (125,630.108 − 6,000.5) + 6,000.5; depreciation
        # 90,000 / 24 + 6,000.5 / 24.
        expected = {"L5": ("SUM(L2:L4)", 16, "0"), "Q5": ("SUM(Q2:Q4)", 96000.5, "$#,##0.00"),
                    "R5": ("SUM(R2:R4)", 1234.567, "$#,##0.00"), "S5": ("SUM(S2:S4)", 3950, "$#,##0.00"),
                    "T5": ("SUM(T2:T4)", 40500, "$#,##0.00"), "U5": ("SUM(U2:U4)", 0, "$#,##0.00"),
                    "V5": ("SUM(V2:V4)", 129580.108, "$#,##0.00"),
                    "X5": ("SUM(X2:X4)", 3750 + 6000.5 / 24, "$#,##0.00")}
        for reference, (formula, total, number_format) in expected.items():
            cell = procurement.get(reference, {})
            check(cell.get("formula") == formula, f"{reference} formula is {cell.get('formula')}")
            check(cell.get("value") is not None and abs(float(cell["value"]) - total) < 1e-6,
                  f"{reference} cached value is {cell.get('value')}, expected {total}")
            check(cell.get("format") == number_format, f"{reference} format is {cell.get('format')}")
        formulas = sorted(reference for reference, cell in procurement.items() if cell["formula"])
        check(formulas == sorted(expected), f"formula cells are {formulas}")
        check(procurement["A5"]["value"] == "total", "total row label")
        notes = [cell["value"] for reference, cell in procurement.items() if reference.startswith("A") and
                 reference[1:].isdigit() and int(reference[1:]) > 6]
        # The notes come from the lines: the resale is not counted, only the host's price is an estimate.
        check(any("$40,500, is not subtracted" in note for note in notes), f"the resale note: {notes}")
        check(not any("is subtracted" in note for note in notes), "no note calls the resale subtracted")
        check("~ marks an estimated price, not published: 8-slot PCIe server." in notes, "the estimate note")

        # Cash flow: the rental's months 0-24 (rows 2-26) and total (27), the purchase's (28-52,
        # 53), the plan's total (54). Net totals: 3,950; 96,000.5 + 24 × 1,234.567 = 125,630.108.
        flow = cells("Cash flow")
        check(flow["D1"]["value"] == "month" and flow["I1"]["value"] == "net_usd", "Cash flow header")
        check(flow["D27"]["value"] == "total" and flow["I27"]["formula"] == "SUM(I2:I26)", "rental total row")
        check(abs(float(flow["I27"]["value"]) - 3950) < 1e-6, f"rental net total {flow['I27']['value']}")
        check(flow["J27"]["formula"] == "J26", "the cumulative total is the last month's")
        check(float(flow["E28"]["value"]) == 96000.5, "capex at delivery, hosts included")
        check(abs(float(flow["I53"]["value"]) - 125630.108) < 1e-6, f"purchase net total {flow['I53']['value']}")
        check(float(flow["K52"]["value"]) == 40500 and float(flow["H52"]["value"]) == 0,
              "resale not counted: a memo in month 24")
        check(flow["I54"]["formula"] == "I27+I53" and abs(float(flow["I54"]["value"]) - 129580.108) < 1e-6,
              "plan total")

        candidates = cells("Candidates")
        check(candidates["A1"]["value"] == "role" and candidates["C1"]["value"] == "gpu", "Candidates header")
        check([candidates[f"C{row}"]["value"] for row in range(2, 6)] == ["A100-80GB-SXM4", "H100-SXM5", "L40S",
                                                                          "V100-SXM2-32GB"], "Candidates rows")
        check(candidates["H5"]["value"] == "fp16 (fallback)", "precision fallback is said")
        check(not any(cell["formula"] for cell in candidates.values()), "Candidates holds no formula")

        rejected = cells("Rejected")
        check([rejected[f"B{row}"]["value"] for row in range(2, 6)] == ["T4", "V100-SXM2-32GB", "JETSON-AGX-ORIN-64GB",
                                                                        "RTX-3060"], "Rejected rows")
        check(float(rejected["C5"]["value"]) == 8, "Rejected count")

        assumptions = cells("Assumptions")
        check(assumptions["A4"]["value"] == "chat-api: inference.batch", "Assumptions rows")

    if failures:
        for failure in failures:
            print("FAIL:", failure)
        return 1
    print("xlsx ok: 5 sheets, 8 SUM formulas with cached totals, a cash flow adding up, text never a formula")
    return 0


if __name__ == "__main__":
    sys.exit(main())
