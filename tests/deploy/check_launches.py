#!/usr/bin/env python3
"""`gpusel deploy` from outside, on every example and target (docs/deploy.md, "How it is tested").

For every role of every example and every target that launches it:
  - every shell script passes `bash -n` and opens with gpusel's comment;
  - every serving command line, split with shlex, has the plan's tensor-parallel size
    (`gpusel plan --format json`) and the max model length and memory fraction of the engine
    arithmetic (`gpusel memory --gpu G --count TP`, text and JSON);
  - every DeepSpeed configuration re-adds (micro-batch x accumulation x data parallel = global
    batch) and has the plan's ZeRO stage;
  - every Slurm script asks for the plan's GPUs (nodes x GPUs per node x array tasks);
  - `gpusel deploy --verify` agrees with every serving script and manifest (and, on three
    examples, every training script), and catches copies edited to another tensor-parallel size,
    memory fraction, GPU count or replica count.
Usage: check_launches.py GPUSEL (from the repository root)."""

import concurrent.futures
import glob
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import threading

GPUSEL = sys.argv[1]
SERVING = ["vllm", "sglang", "tensorrt-llm"]
TRAINING = ["torchrun", "megatron", "deepspeed"]
ZERO = {"none": 0, "zero1": 1, "zero2": 2, "zero3": 3}
failures = []
checked = {"scripts": 0, "pd_launches": 0, "commands": 0, "engine_commands": 0, "engine_flags": 0, "engine_values": 0,
           "ds_configs": 0, "slurm": 0, "verified": 0, "edits": 0}


def run(*args):
    return subprocess.run([GPUSEL, *args], capture_output=True, text=True, check=False)


LOCK = threading.Lock()


def fail(message):
    with LOCK:
        failures.append(message)


def count(what):
    with LOCK:
        checked[what] += 1


def command_words(script):
    """The words of the `exec`/`srun` command of a generated script (shlex: quotes, continuations)."""
    text = re.sub(r"\\\n", " ", script)
    for line in text.splitlines():
        words = shlex.split(line, comments=True)
        if words and words[0] in ("exec", "srun"):
            return words[1:]
    return []


def load_engine_flags(engine):
    """The pinned option list of one engine: ({option: closed value set or None}, commit)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "engine_flags", engine + ".txt")
    flags, commit = {}, "?"
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if line.startswith("# commit:"):
                commit = line.split()[2][:12]
            if not line or line.startswith("#"):
                continue
            name, _, values = line.partition(" ")
            flags[name] = set(values.split(",")) if values else None
    return flags, commit


ENGINE_FLAGS = {engine: load_engine_flags(engine) for engine in SERVING}
ENGINE_COMMANDS = {engine: 0 for engine in SERVING}
OPTION = re.compile(r"--?[A-Za-z]")


def engine_options(words):
    """(engine, option words) of a serving command line as gpusel writes it: `vllm serve MODEL
    ...`, `python3 -m sglang.launch_server ...`, `trtllm-serve MODEL ...`; (None, []) otherwise."""
    if words[:2] == ["vllm", "serve"]:
        return "vllm", words[3:]
    if len(words) >= 3 and words[0].startswith("python") and words[1:3] == ["-m", "sglang.launch_server"]:
        return "sglang", words[3:]
    if words[:1] == ["trtllm-serve"]:
        return "tensorrt-llm", words[2:]
    return None, []


def engine_flag_problems(words):
    """(engine, problems, options, closed values) of a serving command against its engine's list."""
    engine, options = engine_options(words)
    if engine is None:
        return None, [], 0, 0
    accepted, commit = ENGINE_FLAGS[engine]
    listed = f"tests/deploy/engine_flags/{engine}.txt, pinned at {commit}"
    problems, flags, values = [], 0, 0
    i = 0
    while i < len(options):
        word = options[i]
        i += 1
        if not OPTION.match(word):
            problems.append(f"{engine}: {word!r} is neither an option nor an option's value")
            continue
        name, equals, value = word.partition("=")
        if not equals:
            value = options[i] if i < len(options) and not OPTION.match(options[i]) else None
            i += value is not None
        flags += 1
        if name not in accepted:
            problems.append(f"{engine} flag {name}: not an option of the pinned source ({listed})")
        elif accepted[name] is not None:
            values += 1
            if value not in accepted[name]:
                problems.append(f"{engine} flag {name} {value}: not one of its values "
                                f"{','.join(sorted(accepted[name]))} ({listed})")
    return engine, problems, flags, values


def check_engine_command(where, words, target=None):
    engine, problems, flags, values = engine_flag_problems(words)
    if target in SERVING and engine != target:
        fail(f"{where}: the command is not a {target} serving command: {shlex.join(words[:3])}")
    if engine is None:
        return
    for problem in problems:
        fail(f"{where}: {problem}")
    with LOCK:
        ENGINE_COMMANDS[engine] += 1
        checked["engine_commands"] += 1
        checked["engine_flags"] += flags
        checked["engine_values"] += values


def manifest_commands(text):
    """The words (command, then args) of each container of a manifest gpusel wrote: one list
    item a line, double-quoted (JSON escapes) where YAML needs quotes."""
    commands, key, key_indent = [], None, 0
    for line in text.splitlines():
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if stripped in ("command:", "args:"):
            if stripped == "command:":
                commands.append([])
            key, key_indent = stripped, indent
        elif key and commands and indent > key_indent and stripped.startswith("- "):
            item = stripped[2:]
            commands[-1].append(json.loads(item) if item.startswith('"') else item)
        else:
            key = None
    return commands


def check_engine_flag_checker():
    """The flag check rejects what it should: an unknown option, a value outside a closed set, a
    stray word; and passes a command built from listed options."""
    cases = [
        (["vllm", "serve", "m", "--tensor-parallel-size", "2", "--dtype", "bfloat16", "--port", "8000"], 0),
        (["vllm", "serve", "m", "--tensor-parallel", "2"], 1),
        (["vllm", "serve", "m", "--dtype", "fp16"], 1),
        (["python3", "-m", "sglang.launch_server", "--model-path", "m", "--kv-cache-dtype", "fp8"], 1),
        (["trtllm-serve", "m", "--backend", "tensorrt", "--tp_size", "2", "stray"], 2),
    ]
    for words, expected in cases:
        _, problems, _, _ = engine_flag_problems(words)
        if len(problems) != expected:
            fail(f"engine flag self-test: {shlex.join(words)}: {len(problems)} problems, "
                 f"expected {expected}: {problems}")


def option(words, *names):
    for i, word in enumerate(words):
        if word in names and i + 1 < len(words):
            return words[i + 1]
    return None


def serving_arithmetic(example, gpu, tensor_parallel):
    """max_model_len from `gpusel memory --format json`, the fraction from its text line."""
    as_json = run("memory", example, "--gpu", gpu, "--count", str(tensor_parallel), "--format", "json")
    as_text = run("--quiet", "memory", example, "--gpu", gpu, "--count", str(tensor_parallel))
    if as_json.returncode != 0 or as_text.returncode != 0:
        return None
    serving = json.loads(as_json.stdout).get("serving")
    match = re.search(r"budget [0-9.]+ GB \(([0-9.]+) ×", as_text.stdout)
    if serving is None or match is None:
        return None
    return serving["max_model_len"], float(match.group(1))


def check_serving_script(example, winner, target, script):
    words = command_words(script)
    tp_flag = {"vllm": "--tensor-parallel-size", "sglang": "--tp-size", "tensorrt-llm": "--tp_size"}[target]
    len_flag = {"vllm": "--max-model-len", "sglang": "--context-length", "tensorrt-llm": "--max_seq_len"}[target]
    frac_flag = {"vllm": "--gpu-memory-utilization", "sglang": "--mem-fraction-static",
                 "tensorrt-llm": "--kv_cache_free_gpu_memory_fraction"}[target]
    tensor_parallel = winner["layout"]["tensor_parallel"]
    where = f"{example} {target}"
    if option(words, tp_flag) != str(tensor_parallel):
        fail(f"{where}: {tp_flag} {option(words, tp_flag)}; the plan's layout has tensor_parallel {tensor_parallel}")
    # gpusel memory models the workload's own engine (vLLM in the examples); other engines'
    # settings come from their own arithmetic and are held to it by --verify below.
    arithmetic = serving_arithmetic(example, winner["gpu"], tensor_parallel) if target == "vllm" else None
    if arithmetic is not None:
        max_model_len, fraction = arithmetic
        if option(words, len_flag) != str(max_model_len):
            fail(f"{where}: {len_flag} {option(words, len_flag)}; gpusel memory says max_model_len {max_model_len}")
        if abs(float(option(words, frac_flag) or "nan") - fraction) > 1e-9:
            fail(f"{where}: {frac_flag} {option(words, frac_flag)}; gpusel memory says {fraction}")
    count("commands")


def all_command_words(script):
    """The words of every `exec` command of a script (a PD launch has one per role)."""
    text = re.sub(r"\\\n", " ", script)
    commands = []
    for line in text.splitlines():
        words = shlex.split(line, comments=True)
        if "exec" in words:
            commands.append(words[words.index("exec") + 1:])
    return commands


def check_pd_script(example, split, script):
    """A prefill/decode launch (docs/deploy.md): each phase's worker at the tensor parallel and
    decode batch of the plan's roles[].disaggregated, the SGLang router listing every worker.
    Independent of `gpusel deploy --verify`, which reads the same launch back."""
    where = f"{example} PD launch"
    if not split:
        fail(f"{where}: the plan has no roles[].disaggregated")
        return
    phases = {"prefill": split["prefill"], "decode": split["decode"]}
    seen = set()
    for words in all_command_words(script):
        check_engine_command(where, words)  # SGLang workers' flags against the pinned source
        mode = option(words, "--disaggregation-mode")
        if mode in phases:
            seen.add(mode)
            tp = option(words, "--tp-size", "--tp")
            if tp != str(phases[mode]["tensor_parallel"]):
                fail(f"{where}: {mode} tensor parallel {tp}; the plan has {phases[mode]['tensor_parallel']}")
            if mode == "decode" and option(words, "--max-running-requests") != str(phases["decode"]["batch"]):
                fail(f"{where}: decode --max-running-requests {option(words, '--max-running-requests')}; the plan "
                     f"sized {phases['decode']['batch']}")
        if words[:3] == ["python3", "-m", "sglang_router.launch_router"]:
            for phase in phases:
                listed = sum(1 for word in words if word == f"--{phase}")
                wanted = phases[phase]["count"] * split["replicas"]
                if listed != wanted:
                    fail(f"{where}: the router lists {listed} {phase} workers; the plan has {wanted}")
    if seen != set(phases):
        fail(f"{where}: workers found for {sorted(seen)}, not prefill and decode")
    count("pd_launches")


def check_ds_config(example, winner, path):
    with open(path, encoding="utf-8") as handle:
        config = json.load(handle)
    layout = winner["layout"]
    # DeepSpeed without a model-parallel unit (HF Trainer passes none) counts every rank as data
    # parallel and asserts this identity at start-up (deepspeed/runtime/config.py).
    product = config["train_micro_batch_size_per_gpu"] * config["gradient_accumulation_steps"] * winner["count"]
    if product != config["train_batch_size"]:
        fail(f"{example}: {path}: micro-batch x accumulation x GPUs = {product} != train_batch_size {config['train_batch_size']}")
    if layout["tensor_parallel"] * layout["pipeline_parallel"] == 1 and config["train_batch_size"] != winner["perf"]["training"]["global_batch"]:
        fail(f"{example}: {path}: train_batch_size {config['train_batch_size']}; the plan's global batch {winner['perf']['training']['global_batch']}")
    if config["train_micro_batch_size_per_gpu"] != winner["micro_batch"]:
        fail(f"{example}: {path}: micro-batch {config['train_micro_batch_size_per_gpu']}; the plan's {winner['micro_batch']}")
    if config["zero_optimization"]["stage"] != ZERO[layout["sharding"]]:
        fail(f"{example}: {path}: ZeRO stage {config['zero_optimization']['stage']}; the plan's {layout['sharding']}")
    count("ds_configs")


def check_slurm(example, winner, script):
    nodes = int(re.search(r"^#SBATCH --nodes=(\d+)$", script, re.M).group(1))
    per_node = int(re.search(r"^#SBATCH --gpus-per-node=(\d+)$", script, re.M).group(1))
    array = re.search(r"^#SBATCH --array=0-(\d+)$", script, re.M)
    tasks = int(array.group(1)) + 1 if array else 1
    if nodes * per_node * tasks != winner["count"]:
        fail(f"{example}: slurm asks for {tasks} x {nodes} x {per_node} GPUs; the plan has {winner['count']}")
    count("slurm")


def verify(example, role, path, expect_ok, expect_text=None):
    result = run("deploy", example, "--role", role, "--verify", path)
    ok = result.returncode == 0 and "agrees with" in result.stdout
    if ok != expect_ok or (expect_text and expect_text not in result.stdout):
        fail(f"{example} {role}: --verify {os.path.basename(path)}: rc {result.returncode}, expected "
             f"{'agreement' if expect_ok else expect_text!r}:\n{result.stdout}{result.stderr}")
    count("verified" if expect_ok else "edits")


def edited(path, directory, pattern, replacement):
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    changed, count = re.subn(pattern, replacement, text, count=1, flags=re.M)
    if count != 1:
        fail(f"{path}: no match for {pattern!r} to edit")
    copy = os.path.join(directory, "edited-" + os.path.basename(path))
    with open(copy, "w", encoding="utf-8") as handle:
        handle.write(changed)
    return copy


def check_edits(example, role, winner, files, directory):
    tensor_parallel = winner["layout"]["tensor_parallel"]
    for path in files:
        name = os.path.basename(path)
        if name.endswith(".vllm.sh"):
            verify(example, role, edited(path, directory, r"--tensor-parallel-size \d+",
                                         f"--tensor-parallel-size {tensor_parallel * 2}"), False, "tensor-parallel size")
            verify(example, role, edited(path, directory, r"--gpu-memory-utilization [0-9.]+",
                                         "--gpu-memory-utilization 0.5"), False, "memory fraction 0.5")
        if name.endswith(".kubernetes.yaml"):
            verify(example, role, edited(path, directory, r"nvidia\.com/gpu: (\d+)$", "nvidia.com/gpu: 99"),
                   False, "99 GPUs per")
            if role == "inference":
                verify(example, role, edited(path, directory, r"^  replicas: \d+$", "  replicas: 42"),
                       False, "42 replicas")


def launch_one(example, role, winner, target, directory):
    result = run("--quiet", "deploy", example, "--role", role, "--target", target, "-o", directory)
    if result.returncode == 2 and ("runs decoder LLMs" in result.stderr or "runs on NVIDIA GPUs" in result.stderr
                                   or "is a LoRA fine-tune" in result.stderr):
        return []  # a target that cannot run this model, GPU or LoRA: the golden cases pin the message
    if result.returncode != 0:
        fail(f"{example} {role} {target}: rc {result.returncode}: {result.stderr}")
        return []
    files = sorted(glob.glob(os.path.join(directory, f"*.{target}.*")) + glob.glob(os.path.join(directory, "*.ds_config.json"))
                   + (glob.glob(os.path.join(directory, "*.dynamo.sh")) if target == "sglang" else []))
    for path in files:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        if path.endswith(".sh"):
            syntax = subprocess.run(["bash", "-n", path], capture_output=True, text=True, check=False)
            if syntax.returncode != 0:
                fail(f"{path}: bash -n: {syntax.stderr}")
            if "# generated by gpusel" not in text.split("\n", 2)[1]:
                fail(f"{path}: the second line is not gpusel's comment")
            count("scripts")
        if "--disaggregation-mode" in text:
            # A prefill/decode launch (the plan chose the split): checked against the split.
            check_pd_script(example, winner.get("disaggregated"), text)
            verify(example, role, path, True)  # --verify reads the PD launch back against the split
            continue
        if target in SERVING:
            check_serving_script(example, winner, target, text)
        if path.endswith(".sh"):
            check_engine_command(f"{example} {role} {os.path.basename(path)}", command_words(text), target)
        if path.endswith(".kubernetes.yaml"):
            for words in manifest_commands(text):
                check_engine_command(f"{example} {role} {os.path.basename(path)}", words)
        if path.endswith(".ds_config.json"):
            check_ds_config(example, winner, path)
        if target == "slurm":
            check_slurm(example, winner, text)
        # Every serving command and manifest is read back; training scripts on the edited examples.
        if target in SERVING or target == "kubernetes" or (example in EDITED and path.endswith(".sh")):
            verify(example, role, path, True)
    return files


# Edited copies are checked on these examples only (each --verify plans again); the rest of the
# checks run on every example.
EDITED = {"examples/chat-llama2-13b-int4.yaml", "examples/llama3-70b-finetune.yaml", "examples/smart-support.yaml"}


def check_target(example, role, winner, target):
    with tempfile.TemporaryDirectory() as directory:
        files = launch_one(example, role, winner, target, directory)
        if example in EDITED:
            check_edits(example, role, winner, files, directory)


def units_of(example):
    plan = run("plan", example, "--format", "json", "--top", "1")
    if plan.returncode != 0:
        fail(f"{example}: gpusel plan failed: {plan.stderr}")
        return []
    units = []
    for role_plan in json.loads(plan.stdout)["roles"]:
        winner = role_plan.get("winner")
        if winner:
            winner = dict(winner, disaggregated=role_plan.get("disaggregated"))
            role = role_plan["role"]
            for target in (SERVING if role == "inference" else TRAINING) + ["kubernetes", "slurm"]:
                units.append((example, role_plan["role"], winner, target))
    return units


check_engine_flag_checker()

# Each unit runs gpusel several times; threads overlap those processes on every core.
with concurrent.futures.ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
    all_units = [unit for units in pool.map(units_of, sorted(glob.glob("examples/*.yaml"))) for unit in units]
    list(pool.map(lambda unit: check_target(*unit), all_units))

for engine, commands in ENGINE_COMMANDS.items():
    if commands == 0:
        fail(f"no {engine} serving command was checked against tests/deploy/engine_flags/{engine}.txt")
for failure in failures:
    print("FAIL:", failure)
print("check_launches: " + ", ".join(f"{count} {what}" for what, count in checked.items()))
sys.exit(1 if failures or checked["scripts"] == 0 or checked["edits"] == 0 else 0)
