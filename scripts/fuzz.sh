#!/usr/bin/env bash
# Builds the libFuzzer harnesses (the `fuzz` preset: clang-14, ASan + UBSan) and runs each one
# for SECONDS (default 30), starting from its seed corpus (fuzz/corpus/TARGET) and its
# regression files (fuzz/regressions/TARGET). Fails when any harness finds a crash, a broken
# contract, a leak, a timeout (10 s for one input) or memory use above 2 GiB.
#
#   scripts/fuzz.sh [--ci | --long] [SECONDS] [TARGET...]
#       targets: yaml workload catalog models proposal units hf_config telemetry skypilot launch
#
# Exploring (the default): inputs found along the way accumulate in build/fuzz/work/corpus-TARGET
# from run to run, and each run draws a new random seed.
# --ci (what `scripts/bootstrap.sh test` runs): every run is the same experiment. Each harness
# starts from a fresh copy of its seeds and regression files in build/fuzz/ci/corpus-TARGET
# (nothing under fuzz/ is written), with a fixed seed (-seed=1), for SECONDS.
# --long: the run docs/reliability.md records. Like exploring (corpus kept in
# build/fuzz/long/corpus-TARGET, a new seed each time), SECONDS defaults to 600, and the end
# is a table, also written to build/fuzz/long/summary.md: per harness the seconds, executions,
# coverage (libFuzzer's `cov`, edges reached, and `ft`, features), corpus files and findings.
#
# A crasher is saved as build/fuzz/{work,ci,long}/artifacts-TARGET/{crash,leak,timeout,oom}-*,
# and its path is printed: minimise it (fuzz_TARGET -minimize_crash=1 FILE), fix the loader,
# and add it to fuzz/regressions/TARGET/ so that ctest replays it forever.
#
# Needs clang-14 and libclang-rt-14-dev (`scripts/bootstrap.sh fuzz` installs them and runs this).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  echo "usage: scripts/fuzz.sh [--ci | --long] [SECONDS] [TARGET...]" >&2
  exit 2
}

ci=false
long=false
case "${1:-}" in
  --ci) ci=true; shift ;;
  --long) long=true; shift ;;
esac
if $long; then
  seconds=600
else
  seconds=30
fi
case "${1:-}" in
  ''|*[!0-9]*) ;;
  *) seconds=$1; shift ;;
esac
case "$seconds" in
  ''|*[!0-9]*|0) usage ;;
esac
all_targets=(yaml workload catalog models proposal units hf_config telemetry skypilot launch)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=("${all_targets[@]}")
fi
for target in "${targets[@]}"; do
  case " ${all_targets[*]} " in
    *" $target "*) ;;
    *) echo "fuzz: unknown target '$target'" >&2; usage ;;
  esac
done

if ! command -v clang++-14 >/dev/null 2>&1; then
  echo "fuzz: clang++-14 not found; run scripts/bootstrap.sh fuzz (installs clang-14 and libclang-rt-14-dev)" >&2
  exit 2
fi

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target "${targets[@]/#/fuzz_}"

seed_options=()
if $ci; then
  work=build/fuzz/ci
  rm -rf "$work"
  seed_options=(-seed=1)
elif $long; then
  work=build/fuzz/long
else
  work=build/fuzz/work
fi

# One harness: runs it, then prints one line (or the end of its log and the failing input's
# path) and leaves its exit status in $work/TARGET.status.
run_harness() {
  local target=$1
  local binary="build/fuzz/fuzz/fuzz_${target}"
  local corpus="$work/corpus-$target"
  local artifacts="$work/artifacts-$target"
  local log="$work/$target.log"
  mkdir -p "$corpus" "$artifacts"
  local inputs=("$corpus")
  if $ci; then
    # libFuzzer writes new inputs into its first corpus folder: give it a copy.
    cp fuzz/corpus/"$target"/* "$corpus"/
    if [ -d "fuzz/regressions/$target" ]; then
      cp fuzz/regressions/"$target"/* "$corpus"/
    fi
  else
    inputs+=("fuzz/corpus/$target")
    if [ -d "fuzz/regressions/$target" ]; then
      inputs+=("fuzz/regressions/$target")
    fi
  fi
  local status=0
  "$binary" "${seed_options[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -dict=fuzz/yaml.dict -print_final_stats=1 -artifact_prefix="$artifacts/" \
    "${inputs[@]}" >"$log" 2>&1 || status=$?
  local runs coverage features files findings
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  # libFuzzer's last progress line ("#N DONE cov: C ft: F corp: ...") carries the coverage.
  coverage=$(sed -n 's/.* cov: \([0-9]*\) .*/\1/p' "$log" | tail -1)
  features=$(sed -n 's/.* ft: \([0-9]*\) .*/\1/p' "$log" | tail -1)
  files=$(find "$corpus" -type f | wc -l)
  findings=$(find "$artifacts" -type f | wc -l)
  echo "| $target | $seconds | ${runs:-?} | ${coverage:-?} | ${features:-?} | $files | $findings |" >"$work/$target.row"
  if [ "$status" -eq 0 ]; then
    echo "fuzz: $target: ok, ${runs:-?} executions in ${seconds} s, coverage ${coverage:-?} edges, corpus $files files"
  else
    # One block, so that parallel harnesses do not interleave their reports.
    {
      echo "fuzz: $target: FAILED (exit $status); end of $log:"
      tail -n 40 "$log"
      # libFuzzer names the file it saved ("Test unit written to PATH"); list the folder too,
      # in case it died before saying so.
      sed -n 's/.*Test unit written to \(.*\)$/fuzz: '"$target"': failing input saved as \1/p' "$log"
      find "$artifacts" -type f -printf "fuzz: $target: artifact %p (%s bytes)\n"
    } | cat
  fi
  echo "$status" >"$work/$target.status"
}

# Two harnesses at a time where there are two cores (each libFuzzer process uses one): the
# same executions per harness, half the wall time.
jobs=$(nproc 2>/dev/null || echo 1)
[ "$jobs" -le 2 ] || jobs=2
[ "$jobs" -le ${#targets[@]} ] || jobs=${#targets[@]}
mkdir -p "$work"
running=0
for target in "${targets[@]}"; do
  rm -f "$work/$target.status"
  run_harness "$target" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait || true

failed=()
for target in "${targets[@]}"; do
  if [ "$(cat "$work/$target.status" 2>/dev/null || echo missing)" != 0 ]; then
    failed+=("$target")
  fi
done

if $long; then
  {
    echo "| harness | seconds | executions | coverage (cov) | features (ft) | corpus files | findings |"
    echo "|---|---|---|---|---|---|---|"
    for target in "${targets[@]}"; do
      cat "$work/$target.row" 2>/dev/null || echo "| $target | $seconds | ? | ? | ? | ? | did not run |"
    done
  } >"$work/summary.md"
  echo "fuzz: clang $(clang++-14 --version | sed -n 's/.*version \([0-9.]*\).*/\1/p;q'), $(date -u +%Y-%m-%d), $jobs at a time:"
  cat "$work/summary.md"
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: ${#failed[@]} failed: ${failed[*]}"
  exit 1
fi
echo "fuzz: all ${#targets[@]} harnesses ran ${seconds} s each ($jobs at a time) without a finding"
