#!/usr/bin/env bash
# Builds the libFuzzer harnesses (the `fuzz` preset: clang-14, ASan + UBSan) and runs each one
# for SECONDS (default 30), starting from its seed corpus (fuzz/corpus/TARGET) and its
# regression files (fuzz/regressions/TARGET). Fails when any harness finds a crash, a broken
# contract, a leak, a timeout (10 s for one input) or memory use above 2 GiB.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]      targets: yaml workload catalog models proposal units
#                                               hf_config telemetry
#
# Needs clang-14 and libclang-rt-14-dev (`scripts/bootstrap.sh fuzz` installs them and runs this).
# Inputs found along the way go to build/fuzz/work/corpus-TARGET; a crasher is saved as
# build/fuzz/work/artifacts-TARGET/crash-*: minimise it (fuzz_TARGET -minimize_crash=1 FILE),
# fix the loader, and add it to fuzz/regressions/TARGET/ so that ctest replays it forever.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-30}"
if [ $# -gt 0 ]; then
  shift
fi
case "$seconds" in
  ''|*[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS] [TARGET...]" >&2; exit 2 ;;
esac
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(yaml workload catalog models proposal units hf_config telemetry)
fi

if ! command -v clang++-14 >/dev/null 2>&1; then
  echo "fuzz: clang++-14 not found; run scripts/bootstrap.sh fuzz (installs clang-14 and libclang-rt-14-dev)" >&2
  exit 2
fi

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz

work=build/fuzz/work
failed=()
for target in "${targets[@]}"; do
  binary="build/fuzz/fuzz/fuzz_${target}"
  if [ ! -x "$binary" ]; then
    echo "fuzz: unknown target '$target'" >&2
    exit 2
  fi
  corpus="$work/corpus-$target"
  artifacts="$work/artifacts-$target"
  log="$work/$target.log"
  mkdir -p "$corpus" "$artifacts"
  inputs=("$corpus" "fuzz/corpus/$target")
  if [ -d "fuzz/regressions/$target" ]; then
    inputs+=("fuzz/regressions/$target")
  fi
  status=0
  "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -dict=fuzz/yaml.dict -print_final_stats=1 -artifact_prefix="$artifacts/" \
    "${inputs[@]}" >"$log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if [ "$status" -eq 0 ]; then
    echo "fuzz: $target: ok, ${runs:-?} executions in ${seconds} s, corpus $(find "$corpus" -type f | wc -l) files"
  else
    echo "fuzz: $target: FAILED (exit $status); end of $log:"
    tail -n 40 "$log"
    ls -l "$artifacts"
    failed+=("$target")
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: ${#failed[@]} failed: ${failed[*]}"
  exit 1
fi
echo "fuzz: all ${#targets[@]} harnesses ran ${seconds} s each without a finding"
