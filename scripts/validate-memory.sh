#!/usr/bin/env bash
# Reruns the memory estimator's validation against published measurements and prints the table
# (case, metric, measured, predicted, error %, band) and the summary, for the README's accuracy
# section. Usage: scripts/validate-memory.sh [BUILD_DIR]   (default build/dev; builds it if needed)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/dev}
if [ ! -x "$build/tests/gpusel_validation_tests" ]; then
  preset=$(basename "$build")
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" --target gpusel_validation_tests >/dev/null
fi
exec "$build/tests/gpusel_validation_tests" "[memory]"
