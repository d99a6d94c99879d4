#!/usr/bin/env python3
"""The include graph of src/: every module (a folder) includes only modules of a lower layer,
only their public headers, and no header includes itself through others (no cycles). Run by
scripts/static-analysis.sh.

A module's public headers are its main header `<module>/<module>.hpp` (where it has one) and
the ones PUBLIC lists; any other header of a module is private to it: only files of the same
folder include it. Tests, benchmarks and fuzz harnesses (outside src/) are not checked: a unit
test may include the private header of the module it tests.

    scripts/check-includes.py            exit 0 when clean, 1 with one line per violation
    scripts/check-includes.py --graph    also print each module's direct dependencies
"""
import pathlib
import re
import sys

# Lowest first. A module may include modules of a strictly lower layer (and itself). Modules on
# one layer are independent of each other. docs/ARCHITECTURE.md says what each folder holds.
LAYERS = [
    ["base"],                    # errors, units, text, humanised numbers
    ["io"],                      # YAML, CSV and JSON readers and writers, output files
    ["catalog"],                 # GPU specifications, precisions, offers
    ["inputs", "telemetry"],     # workloads, models, efficiency table; telemetry parsers
    ["memory", "verify"],        # memory estimator; acceptance checks of delivered hardware
    ["perf", "cost"],            # performance model; cost model and offer selection
    ["search", "diagnose", "explain"],  # training-layout search; observed bottlenecks; prose of estimates
    ["plan", "calibrate"],       # the planner; measurements read into calibration points
    ["check", "deploy"],         # proposal judgement; launch configurations
    ["report"],                  # every renderer
    ["cli"],                     # flag binding, loading, exit codes
]
RANK = {module: rank for rank, modules in enumerate(LAYERS) for module in modules}

# Public headers besides `<module>/<module>.hpp`, each a contract for the modules above (units,
# ranges and errors in its comment). A header named for a module's parts (internal.hpp, a
# reader or renderer helper) is left out: private. docs/ARCHITECTURE.md, CONTRIBUTING.md.
PUBLIC = {
    "base": ["error.hpp", "format.hpp", "money.hpp", "parallel.hpp", "text.hpp", "units.hpp"],  # the foundation, all of it
    "io": ["csv.hpp", "csv_reader.hpp", "json_output.hpp", "output.hpp", "yaml.hpp"],
    "catalog": ["offer.hpp", "precision.hpp", "skypilot_import.hpp"],  # private: offers.hpp (loaders)
    "inputs": ["cost_assumptions.hpp", "efficiency.hpp", "hf_hub.hpp", "layout.hpp", "length_distribution.hpp", "memory_assumptions.hpp",
               "models.hpp", "vllm_benchmark.hpp", "workload.hpp"],
    # private: workload_reader.hpp, dated_values.hpp (the data files' shared entry reader)
    "telemetry": [],  # private: lines.hpp, notes.hpp (the parsers' helpers)
    "memory": ["terms.hpp"],  # per-term formulas perf and search share; private: internal.hpp
    "verify": [],
    "perf": ["bottleneck.hpp", "calibration.hpp", "training_ops.hpp"],  # private: internal.hpp
    "cost": ["offer_selection.hpp", "price_sanity.hpp"],  # which offers a workload may use, at what price; prices that cannot be right
    "search": ["training_search.hpp"],  # private: compiled_training.hpp
    "diagnose": [],  # private: internal.hpp
    "explain": [],
    "plan": ["disaggregation.hpp", "fleet.hpp", "mix.hpp", "phases.hpp", "redundancy.hpp", "robustness.hpp", "uncertainty.hpp"],  # private: internal.hpp, robustness_analysis.hpp
    "calibrate": [],  # private: serving_readers.hpp, log_readers.hpp, log_readers_text.hpp (the readers calibrate.cpp's table lists)
    "check": [],
    "deploy": [],  # private: launch_text.hpp
    "report": ["render.hpp", "catalog_render.hpp", "check_render.hpp", "diagnose_render.hpp", "html_report.hpp",
               "memory_render.hpp", "models_render.hpp", "perf_render.hpp", "verify_render.hpp"],
    # private: plan_common.hpp, svg.hpp, text_table.hpp (the renderers' helpers)
    "cli": [],  # private: context.hpp, format_option.hpp
}


def is_public(name):
    module, header = name.split("/", 1)
    return header == f"{module}.hpp" or header in PUBLIC.get(module, [])
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def main() -> int:
    root = pathlib.Path(__file__).resolve().parent.parent / "src"
    problems = []
    graph = {}       # header or source -> included project files
    modules = {}     # module -> modules it includes
    for path in sorted(root.rglob("*.[ch]pp")):
        relative = path.relative_to(root).as_posix()
        if "/" not in relative:
            continue  # src/main.cpp
        module = relative.split("/", 1)[0]
        if module not in RANK:
            problems.append(f"src/{relative}: module '{module}' is not in a layer of scripts/check-includes.py")
            continue
        includes = INCLUDE.findall(path.read_text(encoding="utf-8"))
        graph[relative] = [name for name in includes if (root / name).exists()]
        for name in includes:
            if "/" not in name:
                problems.append(f"src/{relative}: #include \"{name}\" is not by module path")
                continue
            target = name.split("/", 1)[0]
            if not (root / name).exists():
                problems.append(f"src/{relative}: #include \"{name}\" does not exist")
                continue
            if target == module:
                continue
            modules.setdefault(module, set()).add(target)
            if RANK.get(target, -1) >= RANK[module]:
                problems.append(f"src/{relative}: {module} (layer {RANK[module]}) includes {name} "
                                f"({target}, layer {RANK.get(target)}): only lower layers may be included")
            elif not is_public(name):
                problems.append(f"src/{relative}: includes {name}, a private header of {target}: include "
                                f"{target}'s public headers, or list {name} in PUBLIC if it is a contract")
    problems += stale_public(root)
    problems += cycles(graph)
    if "--graph" in sys.argv:
        for module in sorted(modules, key=lambda name: (RANK[name], name)):
            print(f"{module}: {' '.join(sorted(modules[module], key=lambda name: (RANK[name], name)))}")
    for problem in problems:
        print(problem)
    print(f"check-includes: {len(graph)} files, {len(problems)} problem{'' if len(problems) == 1 else 's'}")
    return 1 if problems else 0


def stale_public(root):
    """Every module has an entry in PUBLIC, and every header PUBLIC lists exists."""
    found = [f"scripts/check-includes.py: module '{module}' has no PUBLIC entry" for module in RANK
             if module not in PUBLIC]
    for module, headers in PUBLIC.items():
        found += [f"scripts/check-includes.py: PUBLIC lists {module}/{header}, which does not exist"
                  for header in headers if not (root / module / header).exists()]
    return found


def cycles(graph):
    found = []
    state = {}  # 1 = on the stack, 2 = done
    stack = []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for target in graph.get(node, []):
            if state.get(target) == 1:
                loop = stack[stack.index(target):] + [target]
                found.append("include cycle: " + " -> ".join(f"src/{name}" for name in loop))
            elif target not in state:
                visit(target)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


if __name__ == "__main__":
    sys.exit(main())
