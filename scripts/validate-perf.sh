#!/usr/bin/env bash
# Reruns the performance model against every published measurement in
# tests/validation/perf/cases.yaml and prints case, measured, predicted and error, then the
# summary (median and 90th-percentile absolute error, cases beyond the physical limit).
#   scripts/validate-perf.sh            build with the dev preset, then run
#   scripts/validate-perf.sh PRESET     another configure/build preset (release, ci, ...)
# Exit status: that of the validation test (non-zero when a target is missed).
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-dev}
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" --target gpusel_validation_tests >/dev/null
binary=build/$preset/tests/gpusel_validation_tests
# Only the perf table: the executable may hold other validation suites.
"$binary" "perf model against published measurements" | sed -n '/^case /,/beyond physical limit/p'
exit "${PIPESTATUS[0]}"
