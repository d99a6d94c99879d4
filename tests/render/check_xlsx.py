#!/usr/bin/env python3
"""Checks the XLSX workbook of `gpusel plan --format xlsx` from outside C++.

Usage: check_xlsx.py FIXTURE_PROGRAM OUTPUT.xlsx

Runs the fixture program (tests/render/render_fixture.cpp), which renders the hand-built
report of tests/unit/plan_fixture.hpp, then reads the file with the standard library only
(zipfile + ElementTree): the ZIP is valid, the sheets are Procurement, Candidates, Rejected and
Assumptions, the Procurement totals are =SUM() formulas over the money columns with cached
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
        check(sheets == ["Procurement", "Candidates", "Rejected", "Assumptions"], f"sheets are {sheets}")

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
        header = [procurement[f"{column}1"]["value"] for column in "ABCDEFGHIJKLM"]
        check(header == ["role", "gpu", "gpu_name", "quantity", "acquisition", "unit_price_usd", "total_usd",
                         "monthly_opex_usd", "tco_usd", "horizon_months", "reason", "alternative",
                         "alternative_reason"], f"Procurement header is {header}")
        check(procurement["C2"]["value"] == 'NVIDIA A100 80GB SXM4, "datacenter"', "gpu_name with comma and quotes")
        check(float(procurement["F2"]["value"]) == 2.79, "unit price of the rental")
        check(float(procurement["G3"]["value"]) == 96000.5, "purchase total")
        check(procurement["G3"]["format"] == "$#,##0.00", f"money format is {procurement['G3']['format']}")
        # Text that looks like a formula stays text (a shared string), never a formula.
        check(procurement["K3"]["type"] == "s" and procurement["K3"]["value"].startswith("-5 %"), "reason K3 is text")
        check(procurement["M3"]["type"] == "s" and procurement["M3"]["value"].startswith("=1+1"), "reason M3 is text")

        # Totals row 4: SUM over rows 2..3 of G (total), H (monthly opex), I (TCO); cached values
        # 0 + 96000.5, 164.58333 + 1234.567 = 1399.15033, 3950 + 125629.99 = 129579.99.
        expected = {"G4": ("SUM(G2:G3)", 96000.5), "H4": ("SUM(H2:H3)", 1399.15033), "I4": ("SUM(I2:I3)", 129579.99),
                    "W4": ("SUM(W2:W3)", 6000.5), "X4": ("SUM(X2:X3)", 40500), "Y4": ("SUM(Y2:Y3)", 4000.0208)}
        for reference, (formula, total) in expected.items():
            cell = procurement.get(reference, {})
            check(cell.get("formula") == formula, f"{reference} formula is {cell.get('formula')}")
            check(cell.get("value") is not None and abs(float(cell["value"]) - total) < 1e-6,
                  f"{reference} cached value is {cell.get('value')}, expected {total}")
            check(cell.get("format") == "$#,##0.00", f"{reference} format is {cell.get('format')}")
        formulas = sorted(reference for reference, cell in procurement.items() if cell["formula"])
        check(formulas == ["G4", "H4", "I4", "W4", "X4", "Y4"], f"formula cells are {formulas}")
        check(procurement["A4"]["value"] == "total", "total row label")

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
    print("xlsx ok: 4 sheets, 6 SUM formulas with cached totals, text never a formula")
    return 0


if __name__ == "__main__":
    sys.exit(main())
