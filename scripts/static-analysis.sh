#!/usr/bin/env bash
# Static analysis with a curated check list: cppcheck (warning, performance, portability) over
# src/ and clang-tidy (.clang-tidy) over every source of the core, using the compile commands of
# a configured build. Exits non-zero on any finding.
#   scripts/static-analysis.sh [BUILD_DIR]   (default build/ci, configured by the ci preset)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/ci}
[ -f "$build/compile_commands.json" ] || { echo "static-analysis: configure first (cmake --preset ci)" >&2; exit 2; }

echo "static-analysis: cppcheck"
cppcheck --enable=warning,performance,portability --std=c++20 --quiet --inline-suppr \
  -I include -I src --suppress=missingIncludeSystem --error-exitcode=1 src/

echo "static-analysis: clang-tidy"
mapfile -t sources < <(find src -name '*.cpp' | sort)
tidy=$(command -v clang-tidy-14 || command -v clang-tidy)
printf '%s\n' "${sources[@]}" | xargs -P 2 -n 4 "$tidy" -p "$build" --quiet 2>&1 \
  | grep -v "warnings generated" || true
# Run again for the exit status (xargs above keeps the output readable in parallel).
printf '%s\n' "${sources[@]}" | xargs -P 2 -n 4 "$tidy" -p "$build" --quiet >/dev/null 2>&1
echo "static-analysis: clean"
