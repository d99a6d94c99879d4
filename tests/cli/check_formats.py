#!/usr/bin/env python3
"""Structural checks of `gpusel check` output on every example proposal, beyond the goldens:
the JSON document has the format-1 keys and types, the JUnit XML parses and holds one test case
per rule per role, every GitHub line is a well-formed workflow command, and the exit code is 0
exactly when no finding is an error, in every format.

Usage: check_formats.py GPUSEL (from the repository root)."""

import glob
import json
import re
import subprocess
import sys
import xml.dom.minidom

GPUSEL = sys.argv[1]
FAILURES = []


def fail(message):
    FAILURES.append(message)


def run(proposal, fmt):
    result = subprocess.run([GPUSEL, "check", proposal, "--format", fmt], capture_output=True, text=True,
                            env={"LC_ALL": "C"})
    return result.returncode, result.stdout, result.stderr


# Property values may not hold a raw ':' or ',' (actions/toolkit escapes them); the message may
# not hold CR or LF.
ANNOTATION = re.compile(r"^::(error|warning|notice) file=[^,:\r\n]+(,line=[1-9][0-9]*(,col=[1-9][0-9]*)?)?"
                        r",title=[^,:\r\n]*::[^\r\n]*$")

for proposal in sorted(glob.glob("examples/proposals/*.yaml")):
    code, out, err = run(proposal, "json")
    if code == 3:
        continue  # a workload file of the examples, not a proposal
    if code not in (0, 1):
        fail(f"{proposal}: json exit {code}: {err}")
        continue
    document = json.loads(out)
    for key, kind in (("format_version", int), ("proposal", str), ("passed", bool), ("findings", list)):
        if not isinstance(document.get(key), kind):
            fail(f"{proposal}: json key {key} missing or not {kind.__name__}")
    if document["format_version"] != 1:
        fail(f"{proposal}: format_version {document['format_version']}")
    errors = [f for f in document["findings"] if f["severity"] == "error"]
    if document["passed"] != (not errors) or code != (1 if errors else 0):
        fail(f"{proposal}: passed={document['passed']} exit={code} with {len(errors)} errors")
    for finding in document["findings"]:
        for key in ("severity", "rule", "role", "file", "line", "column", "message", "evidence", "fix"):
            if key not in finding:
                fail(f"{proposal}: finding without {key}: {finding}")
        if finding["severity"] not in ("error", "warning", "note"):
            fail(f"{proposal}: severity {finding['severity']}")
        if not re.fullmatch(r"[a-z]+(-[a-z]+)*", finding["rule"]):
            fail(f"{proposal}: rule id {finding['rule']} is not kebab-case")
        if finding["line"] is not None and (finding["line"] < 1 or finding["column"] < 1):
            fail(f"{proposal}: position {finding['line']}:{finding['column']}")
        for key, value in finding["evidence"].items():
            if isinstance(value, float) and value != value:
                fail(f"{proposal}: NaN evidence {key}")
    failing = {(f["role"], f["rule"]) for f in errors}

    code_junit, out, _ = run(proposal, "junit")
    dom = xml.dom.minidom.parseString(out)
    cases = dom.getElementsByTagName("testcase")
    roles = {case.getAttribute("classname").rsplit(".", 1)[1] for case in cases}
    rules = {case.getAttribute("name") for case in cases}
    if len(cases) != len(roles) * len(rules):
        fail(f"{proposal}: {len(cases)} test cases for {len(roles)} roles x {len(rules)} rules")
    failed = {(case.getAttribute("classname").rsplit(".", 1)[1], case.getAttribute("name"))
              for case in cases if case.getElementsByTagName("failure")}
    if failed != failing:
        fail(f"{proposal}: junit failures {sorted(failed)} != json errors {sorted(failing)}")
    suites = dom.getElementsByTagName("testsuites")[0]
    if int(suites.getAttribute("failures")) != len(failed) or int(suites.getAttribute("tests")) != len(cases):
        fail(f"{proposal}: junit totals do not match its test cases")

    code_github, out, _ = run(proposal, "github")
    lines = out.splitlines()
    annotations = [line for line in lines if line.startswith("::")]
    if len(annotations) != len(document["findings"]):
        fail(f"{proposal}: {len(annotations)} annotations for {len(document['findings'])} findings")
    for line in annotations:
        if not ANNOTATION.match(line):
            fail(f"{proposal}: malformed annotation: {line}")

    code_text, _, _ = run(proposal, "text")
    if len({code, code_junit, code_github, code_text}) != 1:
        fail(f"{proposal}: exit codes differ by format: json {code}, junit {code_junit}, github {code_github}, "
             f"text {code_text}")

for message in FAILURES:
    print(message)
sys.exit(1 if FAILURES else 0)
