#!/usr/bin/env python3
"""Output files of the real binary (docs/reliability.md, "Files"), through `plan -o` and
`diagnose --write-calibration`.

usage: output_files.py GPUSEL   (run from the repository root)

Each case checks the exit code, the message and the state of the directory afterwards: whole
or not at all, nothing overwritten without --force, never an input, no temporary file left,
nothing written by an invalid run, and the same bytes under the C and de_DE.UTF-8 locales."""
import os
import shutil
import signal
import subprocess
import sys
import tempfile

binary = os.path.abspath(sys.argv[1])
example = os.path.abspath("examples/chat-llama2-13b-int4.yaml")
failures = []


def check(name, actual, expected):
    if actual != expected:
        failures.append(f"{name}: expected {expected!r}, got {actual!r}")


def run(args, env=None, **kwargs):
    return subprocess.run([binary, *args], capture_output=True, stdin=subprocess.DEVNULL,
                          env=env, **kwargs)


def listing(directory):
    return sorted(os.listdir(directory))


def read(path):
    with open(path, "rb") as f:
        return f.read()


work = tempfile.mkdtemp(prefix="gpusel-output-files-")
try:
    reference = run(["plan", example, "--format", "csv"])
    check("plan to stdout: exit code", reference.returncode, 0)
    csv = reference.stdout

    # A new file holds exactly what standard output would have shown.
    target = os.path.join(work, "purchase.csv")
    result = run(["plan", example, "--format", "csv", "-o", target])
    check("new file: exit code", result.returncode, 0)
    check("new file: content", read(target), csv)
    check("new file: stdout", result.stdout, b"")
    check("new file: listing", listing(work), ["purchase.csv"])

    # An existing file is kept without --force, replaced with it.
    with open(target, "wb") as f:
        f.write(b"old\n")
    result = run(["plan", example, "--format", "csv", "-o", target])
    check("existing without --force: exit code", result.returncode, 4)
    check("existing without --force: stderr", result.stderr.decode(),
          f"gpusel: error: cannot write '{target}': file exists; use --force to replace it\n")
    check("existing without --force: content", read(target), b"old\n")
    result = run(["--force", "plan", example, "--format", "csv", "-o", target])
    check("existing with --force: exit code", result.returncode, 0)
    check("existing with --force: content", read(target), csv)
    check("existing with --force: listing", listing(work), ["purchase.csv"])

    # The input itself, under another name, is refused even with --force.
    workload = os.path.join(work, "workload.yaml")
    shutil.copyfile(example, workload)
    os.link(workload, os.path.join(work, "alias.yaml"))
    for name in ("workload.yaml", "alias.yaml"):
        result = run(["--force", "plan", workload, "--format", "csv", "-o", os.path.join(work, name)])
        check(f"input as output ({name}): exit code", result.returncode, 2)
        check(f"input as output ({name}): input unchanged", read(workload), read(example))
    os.remove(os.path.join(work, "alias.yaml"))

    # Files a project pulls in (workloads[].file, model.hf_config) are inputs too, for plan,
    # report and check alike: --force does not let an output replace one of them.
    pulled = os.path.join(work, "pulled")
    os.mkdir(pulled)
    shutil.copyfile("tests/data/hf/hf-config-llama-3.1-8b.json", os.path.join(pulled, "config.json"))
    with open(example) as f:
        workload_text = f.read().replace("model: {preset: llama-2-13b}", "model: {hf_config: config.json}")
    check("pulled-in files: workload uses the config", "hf_config: config.json" in workload_text, True)
    with open(os.path.join(pulled, "chat.yaml"), "w") as f:
        f.write(workload_text)
    project = os.path.join(pulled, "project.yaml")
    with open(project, "w") as f:
        f.write("format: 1\nproject: pulled-in\nworkloads:\n  - file: chat.yaml\n")
    proposal = os.path.join(pulled, "proposal.yaml")
    with open(proposal, "w") as f:
        f.write("format: 1\nproposal: pulled-in\nworkload: project.yaml\n"
                "hardware:\n  - {role: inference, gpu: H100-SXM5, count: 1, acquisition: buy-new}\n")
    originals = {name: read(os.path.join(pulled, name)) for name in listing(pulled)}
    result = run(["plan", project, "--format", "csv"])
    check("pulled-in files: the project plans", result.returncode, 0)
    commands = {"plan": ["plan", project, "--format", "csv"], "report": ["report", project],
                "check": ["check", proposal]}
    for command, args in commands.items():
        for name in ("chat.yaml", "config.json", "project.yaml"):
            target = os.path.join(pulled, name)
            result = run(["--force", *args, "-o", target])
            check(f"{command} -o {name}: exit code", result.returncode, 2)
            check(f"{command} -o {name}: stderr", result.stderr.decode(),
                  f"gpusel: error: -o '{target}' is the input file '{target}'; refusing to overwrite an input\n"
                  "Run 'gpusel --help' for usage.\n")
    check("pulled-in files: all unchanged",
          {name: read(os.path.join(pulled, name)) for name in listing(pulled)}, originals)
    shutil.rmtree(pulled)

    # An invalid run writes nothing.
    broken = os.path.join(work, "broken.yaml")
    with open(broken, "w") as f:
        f.write("name: x\nkind: inference\nmodel: {preset: no-such-model}\n")
    result = run(["plan", broken, "--format", "csv", "-o", os.path.join(work, "never.csv")])
    check("invalid input: exit code", result.returncode, 3)
    check("invalid input: nothing written", "never.csv" in listing(work), False)

    # A directory, a missing directory, a full disk, a file size limit: exit 4, nothing left.
    os.mkdir(os.path.join(work, "dir"))
    result = run(["plan", example, "--format", "csv", "-o", os.path.join(work, "dir")])
    check("directory: exit code", result.returncode, 4)
    check("directory: still empty", listing(os.path.join(work, "dir")), [])
    result = run(["plan", example, "--format", "csv", "-o", os.path.join(work, "missing", "x.csv")])
    check("missing directory: exit code", result.returncode, 4)
    result = run(["plan", example, "--format", "csv", "-o", "/dev/full"])
    check("/dev/full: exit code", result.returncode, 4)
    check("/dev/full: stderr", result.stderr.decode(),
          "gpusel: error: cannot write '/dev/full': No space left on device\n")
    before = listing(work)

    def limit_file_size():
        import resource
        resource.setrlimit(resource.RLIMIT_FSIZE, (100, 100))
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # gpusel must ignore it itself

    result = run(["plan", example, "--format", "csv", "-o", os.path.join(work, "limited.csv")],
                 preexec_fn=limit_file_size)
    check("file size limit: exit code", result.returncode, 4)
    check("file size limit: stderr", result.stderr.decode().endswith(": File too large\n"), True)
    check("file size limit: no partial or temporary file", listing(work), before)

    # diagnose --write-calibration goes through the same contract: the file holds what
    # /dev/stdout shows ahead of the report, an existing file needs --force, the capture itself is
    # never the target, and a capture that measured no speed writes nothing (exit 2).
    capture = os.path.abspath("tests/data/telemetry/derived-prometheus-federate-vllm-dcgm-H100-5-scrapes.txt")
    calibrate = ["diagnose", "--quiet", "--prom", capture, "--gpu", "H100-SXM5"]
    shown = run(calibrate + ["--write-calibration", "/dev/stdout"])
    check("calibration to stdout: exit code", shown.returncode, 0)
    report = run(calibrate).stdout
    check("calibration to stdout: ahead of the report", shown.stdout.endswith(report), True)
    calibration = shown.stdout[:len(shown.stdout) - len(report)]
    check("calibration to stdout: a calibration block", b"\ncalibration:\n  speed:\n" in calibration, True)
    target = os.path.join(work, "measured.yaml")
    result = run(calibrate + ["--write-calibration", target])
    check("calibration file: exit code", result.returncode, 0)
    check("calibration file: content", read(target), calibration)
    check("calibration file: stdout is the report", result.stdout, report)
    result = run(calibrate + ["--write-calibration", target])
    check("calibration file existing: exit code", result.returncode, 4)
    check("calibration file existing: kept", read(target), calibration)
    result = run(["--force"] + calibrate + ["--write-calibration", target])
    check("calibration file --force: exit code", result.returncode, 0)
    result = run(calibrate + ["--write-calibration", capture])
    check("calibration over the capture: exit code", result.returncode, 2)
    before = listing(work)
    nothing = os.path.join(work, "nothing.yaml")
    result = run(["diagnose", "--query", os.path.abspath(
        "tests/data/telemetry/derived-nvidia-smi-query-gpu-csv-header-units-H100-vllm-25pct-fb-92pct-40s.txt"),
        "--gpu", "H100-SXM5", "--write-calibration", nothing])
    check("calibration of no speed: exit code", result.returncode, 2)
    check("calibration of no speed: no report", result.stdout, b"")
    check("calibration of no speed: nothing written", listing(work), before)

    # The same bytes under the C and the German locale (decimal comma), CSV and JSON alike.
    for fmt in ("csv", "json"):
        outputs = []
        for locale in ("C", "de_DE.UTF-8"):
            env = dict(os.environ, LC_ALL=locale, LANG=locale)
            outputs.append(run(["plan", example, "--format", fmt], env=env).stdout)
        check(f"{fmt}: same bytes under C and de_DE.UTF-8", outputs[0] == outputs[1], True)
        check(f"{fmt}: not empty", len(outputs[0]) > 100, True)
finally:
    shutil.rmtree(work)

for failure in failures:
    print("FAIL", failure)
print(f"output files: {len(failures)} failed")
sys.exit(1 if failures else 0)
