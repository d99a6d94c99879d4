#!/usr/bin/env python3
"""`gpusel plan` gives byte-identical output for the same input (docs/reliability.md, "Estimates
and plans").

usage: plan_deterministic.py GPUSEL   (run from the repository root)

Every example workload and project is planned twice as JSON (the whole report), and the
smart-support project in every other format as well. The second run differs in what must not
matter: glibc's MALLOC_PERTURB_ fills new and freed heap memory with a byte pattern (so output
that depends on uninitialised or freed memory changes), and the process has other addresses
(address-space layout randomisation), so an order that follows pointers would show. The XLSX
workbook takes its creation time from SOURCE_DATE_EPOCH, as reproducible builds do."""
import glob
import os
import subprocess
import sys
import tempfile

binary = os.path.abspath(sys.argv[1])
failures = []


def run(args, perturb):
    env = dict(os.environ)
    env["SOURCE_DATE_EPOCH"] = "1700000000"
    env.pop("MALLOC_PERTURB_", None)
    if perturb:
        env["MALLOC_PERTURB_"] = "165"
    return subprocess.run([binary, *args], capture_output=True, stdin=subprocess.DEVNULL, env=env)


def first_difference(a, b):
    for offset, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"byte {offset}: {a[max(0, offset - 40):offset + 40]!r} vs {b[max(0, offset - 40):offset + 40]!r}"
    return f"lengths {len(a)} and {len(b)}"


def compare(name, args, output=None):
    results = []
    for perturb in (False, True):
        result = run(args + (["-o", output] if output else []), perturb)
        content = result.stdout
        if output:
            content = b""
            if os.path.exists(output):
                with open(output, "rb") as f:
                    content = f.read()
                os.remove(output)
        results.append((result.returncode, content, result.stderr))
    (rc1, out1, err1), (rc2, out2, err2) = results
    if rc1 != 0:
        failures.append(f"{name}: exit code {rc1}: {err1.decode(errors='replace')}")
    if rc1 != rc2:
        failures.append(f"{name}: exit codes {rc1} and {rc2}")
    if out1 != out2:
        failures.append(f"{name}: output differs at {first_difference(out1, out2)}")
    if err1 != err2:
        failures.append(f"{name}: standard error differs at {first_difference(err1, err2)}")
    if not out1:
        failures.append(f"{name}: no output")


examples = sorted(glob.glob("examples/*.yaml") + glob.glob("examples/scale/*.yaml"))
for example in examples:
    compare(f"{example} json", ["plan", example, "--format", "json"])
work = tempfile.mkdtemp(prefix="gpusel-deterministic-")
try:
    project = "examples/smart-support.yaml"
    for fmt in ("table", "markdown", "csv", "cashflow-csv"):
        compare(f"{project} {fmt}", ["plan", project, "--format", fmt])
    compare(f"{project} xlsx", ["plan", project, "--format", "xlsx"], os.path.join(work, "plan.xlsx"))
finally:
    for name in os.listdir(work):
        os.remove(os.path.join(work, name))
    os.rmdir(work)

if failures:
    print("\n".join(failures))
    sys.exit(1)
print(f"{len(examples) + 4} plans byte-identical over two runs")
