#!/usr/bin/env python3
"""Inputs at the documented size limits, in the shapes that used to take quadratic time or
unbounded memory (issue 38; docs/reliability.md, "Time and memory at the size limits").

usage: hostile_scale.py GPUSEL   (run from the repository root)

Each case writes a file just under its reader's limit (64 MiB for `catalog import skypilot`,
16 MiB for telemetry, 4 MiB for YAML and launch files), runs the real binary on it, and checks
the exit code, the standard error (exactly, or its first line where the rest lists many rows),
and the child's peak RSS from wait4: at most 512 MiB (2 GiB under AddressSanitizer, whose
shadow memory and quarantine inflate RSS).

Time is checked the way hostile_files.py checks hangs, with a bound far above what a linear
reader needs and far below what the quadratic ones took at these sizes: at the limits, the
readers this file covers ran for 10 minutes to hours before they were made linear; now each
finishes in seconds (docs/reliability.md lists the figures). The table printed at the end gives
each case's wall time and peak RSS, for the documentation, not for the verdict."""
import os
import subprocess
import sys
import tempfile
import time

binary = os.path.abspath(sys.argv[1])
asan = "ASAN_OPTIONS" in os.environ  # the asan test preset sets it (CMakePresets.json)
rss_limit_kib = (2048 if asan else 512) * 1024
hang_timeout_s = 300 if asan else 120
failures = []
rows = []  # (case, input MiB, exit code, seconds, peak MiB)

MiB = 1 << 20
skypilot_limit = 64 * MiB
telemetry_limit = 16 * MiB
yaml_limit = 4 * MiB


def write_filled(name, header, limit, row, trailer=b""):
    """Writes header + row(0) + row(1) + ... + trailer, as long as the whole stays under
    `limit` bytes, in chunks: this process must stay small, because a child's peak RSS from
    wait4 starts from the parent's size at the fork (Linux keeps the pre-exec high-water mark)."""
    file = os.path.join(work, name)
    budget = limit - 4096 - len(trailer)
    with open(file, "wb") as f:
        f.write(header)
        size = len(header)
        chunk = []
        i = 0
        while True:
            line = row(i)
            if size + len(line) > budget:
                break
            chunk.append(line)
            size += len(line)
            i += 1
            if len(chunk) == 65536:
                f.write(b"".join(chunk))
                chunk = []
        f.write(b"".join(chunk) + trailer)
    return file


work = tempfile.mkdtemp(prefix="gpusel-scale-")


def write(name, data):
    file = os.path.join(work, name)
    with open(file, "wb") as f:
        f.write(data)
    return file


def remove(name):
    if os.path.exists(os.path.join(work, name)):
        os.remove(os.path.join(work, name))


def run(name, args, expected_rc, expected_stderr, first_line_only=False, input_file=None, last_line_only=False):
    """first_line_only: compare only the first line of standard error (the rest lists rows);
    last_line_only: only the last (the summary after the warnings)."""
    """Runs gpusel; checks exit code, standard error and peak memory; records time and RSS."""
    with tempfile.TemporaryFile() as stdout_file, tempfile.TemporaryFile() as stderr_file:
        start = time.monotonic()
        process = subprocess.Popen([binary, *args], stdin=subprocess.DEVNULL, stdout=stdout_file,
                                   stderr=stderr_file, cwd=work,
                                   env={**os.environ, "LC_ALL": "C", "NO_COLOR": ""})
        deadline = start + hang_timeout_s
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid != 0:
                break
            if time.monotonic() > deadline:
                process.kill()
                os.wait4(process.pid, 0)
                failures.append(f"{name}: still running after {hang_timeout_s} s (not linear)")
                return
            time.sleep(0.01)
        seconds = time.monotonic() - start
        rc = os.waitstatus_to_exitcode(status)
        stderr_file.seek(0)
        stderr = stderr_file.read().decode("utf-8", "replace").replace(work + "/", "")
    if rc != expected_rc:
        failures.append(f"{name}: exit code {rc}, expected {expected_rc}; stderr:\n{stderr[:2000]}")
    actual = stderr.split("\n", 1)[0] + "\n" if first_line_only and stderr else stderr
    if last_line_only and stderr:
        actual = stderr.rstrip("\n").rsplit("\n", 1)[-1] + "\n"
    if actual != expected_stderr:
        failures.append(f"{name}: stderr\n  expected {expected_stderr!r}\n  got      {actual[:2000]!r}")
    if usage.ru_maxrss > rss_limit_kib:
        failures.append(f"{name}: peak RSS {usage.ru_maxrss // 1024} MiB above {rss_limit_kib // 1024} MiB")
    size = os.path.getsize(os.path.join(work, input_file)) / MiB if input_file else 0
    rows.append((name, size, rc, seconds, usage.ru_maxrss / 1024))


SKYPILOT_HEADER = (b"InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,"
                   b"SpotPrice,AvailabilityZone\n")
import_args = ["catalog", "import", "skypilot", "{}", "--provider", "aws", "--as-of", "2026-11", "-o", "out.yaml"]


def import_argv(file):
    return [file if part == "{}" else part for part in import_args]


# --- catalog import skypilot (64 MiB) -----------------------------------------------------
# One instance type in 2,000 regions, its zones on ~900,000 rows: a region lookup per row. Each
# region's ~530 spot zones are more than a zone list holds (32): a warning per region (the first
# 1,000 kept) and the median written; the summary is the last line.
write_filled("regions.csv", SKYPILOT_HEADER, skypilot_limit,
             lambda i: b"p4d.24xlarge,A100,8,96,1152,32.77,region-%d,,10.0,zone-%d\n" % (i % 2000, i))
run("skypilot: one instance type, 2000 regions, zones to 64 MiB", import_argv("regions.csv"), 0,
    "gpusel: imported 1 offer from 1058516 rows of regions.csv (1058516 GPU rows) into out.yaml\n",
    last_line_only=True, input_file="regions.csv")
remove("out.yaml")

# Every row a new region: the output would exceed the catalog's 200,000 values; refused at the
# row that crosses the limit (22 values for the offer, 3 per price line), with the filters.
write_filled("unique-regions.csv", SKYPILOT_HEADER, skypilot_limit,
             lambda i: b"p4d.24xlarge,A100,8,96,1152,32.77,region-%d,,10.0,zone-%d\n" % (i, i))
run("skypilot: one instance type, a region per row, to 64 MiB", import_argv("unique-regions.csv"), 3,
    "unique-regions.csv:66661:1: the imported catalog would hold more than the 200000 values a catalog file "
    "may (1 offer and 66660 regional prices by this row); import part of the file with --regions GLOB,... or "
    "--instance-types GLOB,..., or split it; nothing written\n", input_file="unique-regions.csv")

# A new GPU instance type on every row (~1.6 million): refused at row 8,002, not built.
write_filled("types.csv", SKYPILOT_HEADER, skypilot_limit,
             lambda i: b"p4d.%dxlarge,A100,8,96,1152,32.77,us-east-1,,10.0,us-east-1a\n" % i)
run("skypilot: an instance type per row, to 64 MiB", import_argv("types.csv"), 3,
    "types.csv:8002:1: the imported catalog would hold more than the 200000 values a catalog file may (8001 "
    "offers and 8000 regional prices by this row); import part of the file with --regions GLOB,... or "
    "--instance-types GLOB,..., or split it; nothing written\n", input_file="types.csv")

# One offer, then rows of empty cells to the limit (6 million of them used to exhaust memory).
write_filled("empty-rows.csv", SKYPILOT_HEADER + b"p4d.24xlarge,A100,8,96,1152,32.77,us-east-1,,10.0,us-east-1a\n",
             skypilot_limit, lambda i: b",,,,,,,,,\n")
run("skypilot: one row, then rows of empty cells to 64 MiB", import_argv("empty-rows.csv"), 0,
    "gpusel: imported 1 offer from 6710460 rows of empty-rows.csv (1 GPU rows) into out.yaml\n",
    first_line_only=True, input_file="empty-rows.csv")
remove("out.yaml")

# --- telemetry (16 MiB) -------------------------------------------------------------------
write_filled("query.csv", b"timestamp, index, utilization.gpu [%], memory.used [MiB]\n", telemetry_limit,
             lambda i: b"2026/12/05 10:%02d:%02d.000, %d, 50 %%, 1000 MiB\n" % (i // 6000000, i // 100000 % 60,
                                                                               i % 100000))
run("diagnose --query: 100,000 GPU indices to 16 MiB", ["diagnose", "--query", "query.csv"], 0, "", input_file="query.csv")

# 40 hosts x 1,000 GPUs, a series each with 20 points (the key-position rescan was per series).
values = b",".join(b'[%d,"50"]' % (1705416256 + t) for t in range(20))
write_filled("range.json", b'{"status":"success","data":{"resultType":"matrix","result":[', telemetry_limit,
             lambda i: (b"" if i == 0 else b",") +
             b'{"metric":{"__name__":"DCGM_FI_DEV_GPU_UTIL","gpu":"%d","Hostname":"node-%d"},"values":[%s]}'
             % (i % 1000, i // 1000, values), trailer=b"]}}")
run("diagnose --prom: range JSON, 40,000 series, to 16 MiB", ["diagnose", "--prom", "range.json"], 0, "",
    input_file="range.json")

# dcgm-exporter scrapes of one host's 1,024 GPUs, timestamps in milliseconds.
write_filled("metrics.txt", b"# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n", telemetry_limit,
             lambda i: b'DCGM_FI_DEV_GPU_UTIL{gpu="%d",UUID="GPU-%08x",modelName="NVIDIA H100 80GB HBM3",'
             b'Hostname="node-0"} 50 %d\n' % (i % 1024, i % 1024, 1705416256000 + 1000 * (i // 1024)))
run("diagnose --prom: text exposition, 1,024 GPUs, to 16 MiB", ["diagnose", "--prom", "metrics.txt"], 0, "",
    input_file="metrics.txt")

# A new host on every line: refused past 100,000 GPUs. GPUs are numbered in the order of their
# (host, gpu) labels, so the 100,001st is node-99999's line (lexical order), line 190,001.
write_filled("hosts.txt", b"# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n", telemetry_limit,
             lambda i: b'DCGM_FI_DEV_GPU_UTIL{gpu="0",Hostname="node-%d"} 50\n' % i)
run("diagnose --prom: text exposition, a host per line, to 16 MiB", ["diagnose", "--prom", "hosts.txt"], 3,
    "hosts.txt:190001:1: more than 100000 GPUs across hosts; expected the GPUs of one job\n",
    input_file="hosts.txt")

write_filled("dmon.txt", b"# gpu   pwr gtemp mtemp    sm   mem   enc   dec   jpg   ofa  mclk  pclk\n"
             b"# Idx     W     C     C     %     %     %     %     %     %   MHz   MHz\n", telemetry_limit,
             lambda i: b"    %d   300    60    70    95    40     0     0     0     0  2619  1980\n" % (i % 8))
run("diagnose --dmon: 8 GPUs to 16 MiB", ["diagnose", "--dmon", "dmon.txt"], 0, "", input_file="dmon.txt")

# Rows of 4 bytes, the most rows 16 MiB can hold (the worst case for memory per byte).
write_filled("dmon-tiny.txt", b"# gpu sm\n", telemetry_limit, lambda i: b"0 1\n")
run("diagnose --dmon: 4-byte rows to 16 MiB", ["diagnose", "--dmon", "dmon-tiny.txt"], 0, "",
    input_file="dmon-tiny.txt")

# --query rows of 4 bytes: the most samples 16 MiB can hold.
write_filled("query-tiny.csv", b"index, utilization.gpu [%]\n", telemetry_limit, lambda i: b"0,1\n")
run("diagnose --query: 4-byte rows to 16 MiB", ["diagnose", "--query", "query-tiny.csv"], 0, "",
    input_file="query-tiny.csv")

# One range-query series whose UUID label is 8 MiB, then 8 MiB of points (was out of memory).
write_filled("long-label.json", b'{"status":"success","data":{"resultType":"matrix","result":[{"metric":'
             b'{"__name__":"DCGM_FI_DEV_GPU_UTIL","gpu":"0","UUID":"' + b"x" * (8 << 20) + b'"},"values":[',
             telemetry_limit, lambda i: (b"" if i == 0 else b",") + b'[%d,"50"]' % (1705416256 + i),
             trailer=b"]}]}}")
run("diagnose --prom: an 8 MiB label, then points, to 16 MiB", ["diagnose", "--prom", "long-label.json"], 0, "", input_file="long-label.json")

# nvidia-smi topo -m with 200,000 devices in its header: refused at the 1,025th, GPU1024, whose
# column is 2 + 10 x 5 + 90 x 6 + 900 x 7 + 24 x 8 = 7,084 (a tab, then "GPUk" and a tab each).
write_filled("topo.txt", b"\t" + b"\t".join(b"GPU%d" % i for i in range(200000)) + b"\n", telemetry_limit,
             lambda i: b"GPU0\n")
run("diagnose --topo: 200,000 devices in the header, to 16 MiB", ["diagnose", "--topo", "topo.txt"], 3,
    "topo.txt:1:7084: the header names more than 1024 devices; expected `nvidia-smi topo -m` output\n",
    input_file="topo.txt")

# nvidia-smi -q with a GPU section per line (verify).
write_filled("smi-q.txt", b"", telemetry_limit, lambda i: b"GPU 00000000:2F:00.0\n")
run("verify: a GPU section per line, to 16 MiB", ["verify", "smi-q.txt", "--expect", "H100-SXM5"], 3,
    "smi-q.txt:4097:1: more than 4096 GPU sections; expected one `nvidia-smi -q` report\n",
    input_file="smi-q.txt")

# perf report rows of 13 bytes: over the cap of 10^6 rows (real rows are longer than 16 bytes).
write_filled("perf.txt", b"", telemetry_limit, lambda i: b"1% a b [.] c\n")
run("diagnose --perf: 13-byte rows to 16 MiB", ["diagnose", "--perf", "perf.txt"], 3,
    "perf.txt:1000001:1: more than 1000000 profile rows; perf report rows are longer than these\n",
    input_file="perf.txt")

# mpstat rows of 4 bytes: over the cap of 10^6 CPU rows.
write_filled("mpstat.txt", b"12:00:00 CPU %idle\n", telemetry_limit, lambda i: b"0 9\n")
run("diagnose --cpu: 4-byte mpstat rows to 16 MiB", ["diagnose", "--cpu", "mpstat.txt"], 3,
    "mpstat.txt:1000002:1: more than 1000000 CPU rows; mpstat, sar and top rows are longer than these\n",
    input_file="mpstat.txt")

# --- deploy --verify: a manifest of many documents (4 MiB) ---------------------------------
chat = os.path.join(os.getcwd(), "examples/chat-llama2-13b-int4.yaml")
with open("tests/cli/cases/deploy-kubernetes-chat/stdout", "rb") as f:
    chat_manifest = f.read()
write_filled("manifest.yaml", b"", yaml_limit,
             lambda i: b"--- # Source: chart/templates/config-%d.yaml\napiVersion: v1\nkind: ConfigMap\n"
             b"metadata: {name: config-%d}\ndata:\n  notes: |\n    ---\n    not a separator\n" % (i, i),
             trailer=b"---\n" + chat_manifest)
run("deploy --verify: ConfigMaps, then the chat manifest, to 4 MiB",
    ["deploy", chat, "--verify", "manifest.yaml"], 0, "", input_file="manifest.yaml")

# --- check: the top of the count range ------------------------------------------------------
write("count.yaml", b"format: 1\nproposal: p\nworkload: " + chat.encode() +
      b"\nhardware:\n  - {role: inference, gpu: L40S, count: 1048576}\n")
run("check: count 1048576", ["check", "count.yaml"], 1, "", input_file="count.yaml")

for name in os.listdir(work):
    os.remove(os.path.join(work, name))
os.rmdir(work)

print(f"{'case':<64} {'input MiB':>9} {'exit':>4} {'seconds':>8} {'peak MiB':>8}")
for name, size, rc, seconds, peak in rows:
    print(f"{name:<64} {size:>9.1f} {rc:>4} {seconds:>8.2f} {peak:>8.0f}")
for failure in failures:
    print("FAIL", failure)
print(f"{len(rows)} cases run, {len(failures)} failures")
sys.exit(1 if failures else 0)
