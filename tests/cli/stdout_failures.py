#!/usr/bin/env python3
"""Standard output failures of the real binary (docs/reliability.md, "Standard output").

usage: stdout_failures.py GPUSEL

A report that cannot be delivered is exit 4 with the system's reason, never exit 0:
/dev/full, a closed stdout, and a pipe whose reader has gone while SIGPIPE is ignored.
With SIGPIPE at its default (what a shell gives), the process ends by the signal, as other
filters do (`gpusel catalog list | head`)."""
import os
import signal
import subprocess
import sys

binary = sys.argv[1]
failures = []


def check(name, actual, expected):
    if actual != expected:
        failures.append(f"{name}: expected {expected!r}, got {actual!r}")


def run(args, **kwargs):
    return subprocess.run([binary, *args], stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, **kwargs)


def message(reason):
    return f"gpusel: error: cannot write to standard output: {reason}\n".encode()


for args in (["catalog", "list"], ["--help"], ["--version"]):
    with open("/dev/full", "wb") as full:
        result = run(args, stdout=full)
    check(f"{args} > /dev/full: exit code", result.returncode, 4)
    check(f"{args} > /dev/full: stderr", result.stderr, message("No space left on device"))

    result = run(args, preexec_fn=lambda: os.close(1))
    check(f"{args} >&-: exit code", result.returncode, 4)
    check(f"{args} >&-: stderr", result.stderr, message("Bad file descriptor"))

    # A pipe whose read end is closed before gpusel starts: the first write fails for sure.
    read_end, write_end = os.pipe()
    os.close(read_end)
    result = run(args, stdout=write_end)
    check(f"{args} | (closed), default SIGPIPE: exit", result.returncode, -signal.SIGPIPE)
    check(f"{args} | (closed), default SIGPIPE: stderr", result.stderr, b"")

    result = run(args, stdout=write_end, preexec_fn=lambda: signal.signal(signal.SIGPIPE, signal.SIG_IGN))
    check(f"{args} | (closed), SIGPIPE ignored: exit code", result.returncode, 4)
    check(f"{args} | (closed), SIGPIPE ignored: stderr", result.stderr, message("Broken pipe"))
    os.close(write_end)

# An input error keeps exit 3 even when stdout is also broken: the first cause is reported.
with open("/dev/full", "wb") as full:
    result = run(["validate", "/nonexistent/workload.yaml"], stdout=full)
check("validate missing file > /dev/full: exit code", result.returncode, 3)

for failure in failures:
    print("FAIL", failure)
print(f"stdout failures: {len(failures)} failed")
sys.exit(1 if failures else 0)
