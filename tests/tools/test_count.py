#!/usr/bin/env python3
"""Every Catch2 test case of the unit-test binary is one CTest test that selects it, and no more.

Usage: test_count.py UNIT_TESTS CTEST BUILD_DIR PREFIX

catch_discover_tests (tests/CMakeLists.txt) turns each name that `UNIT_TESTS
--list-test-names-only` prints into a CTest test "PREFIX<name>" whose command line is the name
as a Catch2 test spec. Some names do not survive that: a `;` splits the name into two CTest
tests that match nothing (Catch2 prints "No test cases matched" and exits 0, so they pass
without running anything), and others are read by Catch2 as something else than the name.
This script fails when

  * the names CTest knows under PREFIX are not exactly the Catch2 names (count and spelling:
    a split, a lost or an extra test), read from `CTEST --show-only=json-v1` in BUILD_DIR;
  * a name holds a character or a form that its test spec cannot select (tried on a probe binary
    with Debian's Catch2 2.13.10 and CMake 3.25.1, running each CTest test):
      `;`           CMake's list separator: the name becomes two tests;
      `\\`          Catch2's escape character: the spec no longer matches the name;
      `]==]`        closes the bracket argument CatchAddTests writes: the test and every test
                    after it in the generated file are lost or mangled;
      leading `~` or `exclude:`  Catch2 reads a negation: every other test runs instead;
      leading or trailing `*`    Catch2 reads a wildcard: other tests run too;
    (`,` `[` `]` are escaped by CatchAddTests and select exactly their test; a `*` inside a
    name is literal; `"`, `'`, `#`, `$`, `|`, `—` and leading or trailing spaces select fine);
  * two names differ only in letter case (Catch2 matches names case-insensitively: each test
    would run both).
"""

import collections
import json
import subprocess
import sys


def catch_names(unit_tests):
    # --list-test-names-only exits with the number of test cases, not 0.
    result = subprocess.run([unit_tests, "--list-test-names-only"], capture_output=True, text=True, check=False)
    if result.returncode < 0:
        sys.exit(f"test_count: {unit_tests} --list-test-names-only died with signal {-result.returncode}")
    return [line for line in result.stdout.split("\n") if line.strip()]


def ctest_names(ctest, build_dir, prefix):
    result = subprocess.run([ctest, "--show-only=json-v1"], capture_output=True, text=True, cwd=build_dir, check=False)
    if result.returncode != 0:
        sys.exit(f"test_count: {ctest} --show-only=json-v1 failed in {build_dir}:\n{result.stderr}")
    tests = json.loads(result.stdout)["tests"]
    return [test["name"][len(prefix):] for test in tests if test["name"].startswith(prefix)]


def unselectable(name):
    """Why the Catch2 test spec made from `name` does not select exactly that test, or None."""
    if ";" in name:
        return "';' splits it into two CTest tests that run nothing"
    if "\\" in name:
        return "'\\' is Catch2's escape character: the test spec no longer matches the name"
    if "]==]" in name:
        return "']==]' ends the bracket argument of the generated CTest file"
    if name.startswith("~") or name.lower().startswith("exclude:"):
        return "a leading '~' or 'exclude:' makes the test spec a negation"
    if name.startswith("*") or name.endswith("*"):
        return "a leading or trailing '*' makes the test spec a wildcard"
    return None


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    unit_tests, ctest, build_dir, prefix = sys.argv[1:]
    names = catch_names(unit_tests)
    known = ctest_names(ctest, build_dir, prefix)
    problems = []
    if not names:
        problems.append(f"{unit_tests} lists no test cases")
    for name in names:
        reason = unselectable(name)
        if reason:
            problems.append(f"Catch2 name {name!r}: {reason}")
    by_case = collections.defaultdict(list)
    for name in names:
        by_case[name.lower()].append(name)
    for spellings in by_case.values():
        if len(spellings) > 1:
            problems.append(f"names that differ only in case (Catch2 selects both): {spellings!r}")
    listed = collections.Counter(names)
    registered = collections.Counter(known)
    for name in sorted(registered - listed):
        problems.append(f"CTest test {prefix + name!r} is no Catch2 test case (it runs nothing)")
    for name in sorted(listed - registered):
        problems.append(f"Catch2 test case {name!r} has no CTest test {prefix + name!r}")
    print(f"test_count: {len(names)} Catch2 test cases, {len(known)} CTest tests named '{prefix}...'")
    if problems:
        print(f"\n{len(problems)} problem(s):")
        for problem in problems:
            print("  " + problem)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
