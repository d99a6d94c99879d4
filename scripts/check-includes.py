#!/usr/bin/env python3
"""The include graph of src/: every module (a folder) includes only modules of a lower layer,
and no header includes itself through others (no cycles). Run by scripts/static-analysis.sh.

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
    ["search", "diagnose"],      # training-layout search; observed bottlenecks
    ["plan"],                    # the planner
    ["check", "deploy"],         # proposal judgement; launch configurations
    ["report"],                  # every renderer
    ["cli"],                     # flag binding, loading, exit codes
]
RANK = {module: rank for rank, modules in enumerate(LAYERS) for module in modules}
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
    problems += cycles(graph)
    if "--graph" in sys.argv:
        for module in sorted(modules, key=lambda name: (RANK[name], name)):
            print(f"{module}: {' '.join(sorted(modules[module], key=lambda name: (RANK[name], name)))}")
    for problem in problems:
        print(problem)
    print(f"check-includes: {len(graph)} files, {len(problems)} problem{'' if len(problems) == 1 else 's'}")
    return 1 if problems else 0


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
