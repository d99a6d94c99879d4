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
# The in-sample table, then the out-of-sample (leave-one-publication-out) summary.
"$binary" "perf model against published measurements" | sed -n '/^case /,/^training rows/p'
status=${PIPESTATUS[0]}
"$binary" "perf model out of sample: leave one publication out" | sed -n '/^ *in sample (shipped table)/,/^targets:/p'
exit $((status | PIPESTATUS[0]))
