#!/usr/bin/env python3
"""Input files that golden cases cannot hold, through every entry point of the real binary
(docs/reliability.md, "Bad-input coverage").

usage: hostile_files.py GPUSEL   (run from the repository root)

For each way a file reaches gpusel (a workload, project, proposal, catalog or model-preset
file; every telemetry option of `diagnose`; `verify` and its --nvlink, --plan, --topology and
--result; `calibrate` and --calibration; a file named inside another file) and each kind of file
that is not a readable text file of sensible size
(a FIFO without a writer, a directory, /dev/zero, a missing file, a file whose read fails, a
file without read permission, a UTF-16 file, a file one byte over the size limit, standard
input that never ends), gpusel must refuse with exit 3 and the exact message, without hanging and with bounded
memory. Files exactly at the limit, and scalars or trees just over theirs, are checked too.

Hangs are caught by a generous timeout (a FIFO opened without O_NONBLOCK would block for ever,
so the case would fail rather than pass slowly). Memory is the child's peak RSS from wait4;
gpusel reads at most 16 MiB, so 512 MiB (2 GiB under AddressSanitizer, whose shadow memory and
quarantine inflate RSS) is far above what a bounded reader needs and far below what an
unbounded one reading /dev/zero or following an alias bomb reaches before the timeout."""
import os
import stat
import subprocess
import sys
import tempfile
import time

binary = os.path.abspath(sys.argv[1])
failures = []
cases = 0
peaks = []  # KiB, for the summary
# The asan test preset sets ASAN_OPTIONS for every test (CMakePresets.json).
rss_limit_kib = (2048 if "ASAN_OPTIONS" in os.environ else 512) * 1024
hang_timeout_s = 120


def check(name, actual, expected):
    if actual != expected:
        failures.append(f"{name}: expected {expected!r}, got {actual!r}")


def run(name, args, expected_rc, expected_stderr, stdin=None, preexec_fn=None):
    """Runs gpusel, checks exit code and standard error exactly, and its peak memory."""
    global cases
    cases += 1
    with tempfile.TemporaryFile() as stdout_file, tempfile.TemporaryFile() as stderr_file, \
            open(stdin or os.devnull, "rb") as stdin_file:
        process = subprocess.Popen([binary, *args], stdin=stdin_file, stdout=stdout_file, stderr=stderr_file,
                                   preexec_fn=preexec_fn, env={**os.environ, "LC_ALL": "C", "NO_COLOR": ""})
        # wait4 gives this child's own peak RSS; Popen keeps none.
        deadline = time.monotonic() + hang_timeout_s
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid != 0:
                break
            if time.monotonic() > deadline:
                process.kill()
                os.wait4(process.pid, 0)
                process.returncode = -9
                failures.append(f"{name}: still running after {hang_timeout_s} s (a hang)")
                return
            time.sleep(0.005)
        process.returncode = os.waitstatus_to_exitcode(status)
        stderr_file.seek(0)
        stderr = stderr_file.read()
    check(f"{name}: exit code", process.returncode, expected_rc)
    check(f"{name}: stderr", stderr.decode("utf-8", "replace"), expected_stderr)
    if usage.ru_maxrss > rss_limit_kib:
        failures.append(f"{name}: peak RSS {usage.ru_maxrss} KiB above {rss_limit_kib} KiB")
    peaks.append(usage.ru_maxrss)


work = tempfile.mkdtemp(prefix="gpusel-hostile-")
os.chmod(work, 0o755)  # the permission case may run as `nobody`


def path(name):
    return os.path.join(work, name)


def write(name, data):
    with open(path(name), "wb") as f:
        f.write(data)
    return path(name)


# --- The hostile files -------------------------------------------------------------------
fifo = path("fifo")
os.mkfifo(fifo)
directory = path("directory")
os.mkdir(directory)
missing = path("missing.yaml")
# A regular file whose read() fails: /proc/self/mem is a regular file of size 0, and reading
# at offset 0 (never mapped) gives EIO. Works as root, unlike a permission bit.
read_fails = "/proc/self/mem"
unreadable = write("unreadable.yaml", b"name: x\n")
os.chmod(unreadable, 0)

yaml_limit = 4 << 20
telemetry_limit = 16 << 20
comment_line = b"#" + b"x" * 62 + b"\n"  # 64 bytes
yaml_at_limit = write("at-limit.yaml", comment_line * (yaml_limit // 64))
yaml_over_limit = write("over-limit.yaml", comment_line * (yaml_limit // 64) + b"\n")
telemetry_over_limit = write("over-limit.txt", comment_line * (telemetry_limit // 64) + b"\n")

# Entry points: (label, argv with {} for the file).
proposal_refers = "format: 1\nproposal: p\nworkload: {}\nhardware:\n  - {{role: development, gpu: L40, count: 1}}\n"
project_refers = "format: 1\nproject: p\nworkloads:\n  - file: {}\n"
smi_q = "tests/data/telemetry/nvidia-smi-q-H100-80GB-590-load.txt"
plan_json = "tests/data/verify/plan-chat-70b-h100.json"
yaml_entries = [
    ("workload (validate)", ["validate", "{}"]),
    ("workload (plan)", ["plan", "{}"]),
    ("project (plan)", ["plan", "{}"]),
    ("proposal (check)", ["check", "{}"]),
    ("catalog (--catalog)", ["--catalog", "{}", "catalog", "list"]),
    ("catalog (catalog validate)", ["catalog", "validate", "{}"]),
    ("models (--models)", ["--models", "{}", "models", "list"]),
    ("workload (diagnose --workload)", ["diagnose", "--dmon", "tests/data/telemetry/nvidia-smi-dmon-s-m-8gpu.txt",
                                        "--workload", "{}"]),
    ("calibration (plan --calibration)", ["plan", "examples/chat-llama2-13b-int4.yaml", "--calibration", "{}"]),
]
telemetry_entries = [
    ("dmon", ["diagnose", "--dmon", "{}"]),
    ("dcgm", ["diagnose", "--dcgm", "{}"]),
    ("query", ["diagnose", "--query", "{}"]),
    ("cpu", ["diagnose", "--cpu", "{}"]),
    ("perf", ["diagnose", "--perf", "{}"]),
    ("topo", ["diagnose", "--topo", "{}"]),
    ("processes", ["diagnose", "--processes", "{}"]),
    ("smi -q (verify)", ["verify", "{}", "--expect", "H100-SXM5"]),
    ("nvlink (verify --nvlink)", ["verify", smi_q, "--expect", "H100-SXM5", "--nvlink", "{}"]),
    ("plan JSON (verify --plan)", ["verify", smi_q, "--plan", "{}"]),
    ("topo (verify --topology)", ["verify", smi_q, "--plan", plan_json, "--topology", "{}"]),
    ("bench result (verify --result)", ["verify", smi_q, "--plan", plan_json, "--result", "{}"]),
    ("measurement (calibrate)", ["calibrate", "{}", "--gpu", "H100-SXM5"]),
]


def argv(template, file):
    return [file if part == "{}" else part for part in template]


def error(file, message):
    return f"{file}: {message}\n"


not_regular = "is not a regular file (a device, pipe or socket)"
kinds = [
    ("FIFO without a writer", fifo, not_regular),
    ("directory", directory, "is a directory, not a file"),
    ("/dev/zero", "/dev/zero", not_regular),
    ("missing file", missing, "no such file"),
    ("read fails (EIO)", read_fails, "cannot read: Input/output error"),
    ("path through a file", path("at-limit.yaml") + "/x", "cannot open: Not a directory"),
]

# UTF-16 with a byte order mark: what Windows PowerShell 5 writes for `>`.
utf16 = write("utf16.txt", b"\xff\xfe" + "format: 1\n".encode("utf-16-le"))

for label, template in yaml_entries + telemetry_entries:
    for kind, file, message in kinds:
        run(f"{label}: {kind}", argv(template, file), 3, error(file, message))
    run(f"{label}: UTF-16", argv(template, utf16), 3, f"{utf16}:1:1: file is UTF-16; save it as UTF-8\n")
    limit = "16 MiB" if (label, template) in telemetry_entries else "4 MiB"
    over = telemetry_over_limit if limit == "16 MiB" else yaml_over_limit
    run(f"{label}: one byte over {limit}", argv(template, over), 3,
        error(over, f"file is larger than the limit of {limit}"))

# Standard input that never ends is cut at the limit, not read for ever.
for label, args in (("workload", ["validate", "-"]), ("dmon", ["diagnose", "--dmon", "-"]),
                    ("smi -q", ["verify", "-", "--expect", "H100-SXM5"])):
    limit = "4 MiB" if label == "workload" else "16 MiB"
    run(f"{label}: standard input from /dev/zero", args, 3,
        f"<stdin>: file is larger than the limit of {limit}\n", stdin="/dev/zero")

# Files named inside other files go through the same reader; the message says where.
for kind, file, message in kinds:
    proposal = write("refers.proposal.yaml", proposal_refers.format(file).encode())
    run(f"proposal naming a {kind}", ["check", proposal], 3,
        f"{proposal}:3:11: workload: in {file}: {message}\n")
    project = write("refers.project.yaml", project_refers.format(file).encode())
    run(f"project naming a {kind}", ["plan", project], 3,
        f"{project}:4:11: workloads[0].file: in {file}: {message}\n")
    hf = write("refers.hf.yaml", f"name: w\nkind: training\nmodel: {{hf_config: {file}}}\n".encode())
    run(f"workload naming a {kind} as hf_config", ["validate", hf], 3,
        f"{hf}:3:20: model.hf_config: {message} ({file})\n")

# A file without read permission. chmod 000 does not stop root, so as root the case runs as
# `nobody`; where that is impossible (no CAP_SETUID, uid 65534 unmapped) it is said, and the
# read-failure path above still runs.
def drop_privileges():
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)


permission_message = error(unreadable, "cannot open: Permission denied")
try:
    if os.geteuid() == 0:
        run("workload without read permission (as nobody)", ["validate", unreadable], 3, permission_message,
            preexec_fn=drop_privileges)
        run("dmon without read permission (as nobody)", ["diagnose", "--dmon", unreadable], 3,
            permission_message, preexec_fn=drop_privileges)
    else:
        run("workload without read permission", ["validate", unreadable], 3, permission_message)
        run("dmon without read permission", ["diagnose", "--dmon", unreadable], 3, permission_message)
except subprocess.SubprocessError as failure:
    print(f"note: cannot run as nobody here ({failure}); the permission case was not run")

# Exactly at the limits: not refused for size. A 4 MiB file of comments is empty YAML.
run("workload of exactly 4 MiB", ["validate", yaml_at_limit], 3,
    error(yaml_at_limit, "file is empty (no YAML content)"))

# One value over 64 KiB, and exactly 64 KiB (then the name is valid and the file is checked on).
long_name = write("long-value.yaml", b"name: " + b"n" * ((64 << 10) + 1) + b"\nkind: training\n")
run("value one byte over 64 KiB", ["validate", long_name], 3,
    f"{long_name}:1:7: value is longer than the limit of 64 KiB\n")
name_at_limit = write("value-at-limit.yaml", b"name: " + b"n" * (64 << 10) + b"\nkind: training\n")
run("value of exactly 64 KiB", ["validate", name_at_limit], 3,
    f"{name_at_limit}:1:1: model: missing required field\n")

# 200,001 values in one file: refused at the value that passes the limit, not built. The
# mapping, the key `name` and the list count too, so item k (column 8 + 2k) is value k + 4:
# the 200,001st value is item 199,997 at column 400,002.
many = write("many-values.yaml", b"name: [" + b"1," * 200000 + b"1]\n")
run("200001 values", ["validate", many], 3, f"{many}:1:400002: more than 200000 values in one file\n")

# Nesting 100,000 deep (block and flow) is refused at level 65, not recursed into.
deep_flow = write("deep-flow.yaml", b"a: " + b"[" * 100000 + b"]" * 100000 + b"\n")
run("flow nesting 100000 deep", ["validate", deep_flow], 3,
    f"{deep_flow}:1:67: nesting deeper than 64 levels\n")
deep_block = write("deep-block.yaml", b"".join(b"  " * i + b"- \n" for i in range(2000)))
run("block nesting 2000 deep", ["validate", deep_block], 3,
    f"{deep_block}:65:129: nesting deeper than 64 levels\n")

# A telemetry log of exactly 16 MiB is read (all comment lines here: no header).
telemetry_at_limit = write("at-limit.txt", comment_line * (telemetry_limit // 64))
run("dmon of exactly 16 MiB", ["diagnose", "--dmon", telemetry_at_limit], 3,
    f"{telemetry_at_limit}:1:1: no '# gpu ...' header line; expected `nvidia-smi dmon` output\n")

os.chmod(unreadable, 0o600)
for name in os.listdir(work):
    full = path(name)
    if os.path.isdir(full) and not os.path.islink(full):
        os.rmdir(full)
    else:
        os.remove(full)
os.rmdir(work)

for failure in failures:
    print("FAIL", failure)
print(f"{cases} cases, {len(failures)} failures; largest peak RSS {max(peaks, default=0) // 1024} MiB")
sys.exit(1 if failures else 0)
