#!/usr/bin/env bash
# Sets up a fresh Debian bookworm machine and builds gpusel.
#   scripts/bootstrap.sh run    install what is missing, build (release), run `gpusel plan` on an example
#   scripts/bootstrap.sh test   what CI runs (.ci/run): install what is missing, then four stages,
#                               each timed, all run even when one fails, a summary at the end,
#                               exit 1 if any failed:
#                                 ci    the whole test suite, `ci` preset (cmake --workflow)
#                                 asan  the whole test suite again under ASan+UBSan (`asan` preset)
#                                 lint  cppcheck and clang-tidy on the ci build, no finding allowed
#                                       (scripts/static-analysis.sh)
#                                 fuzz  every libFuzzer harness for 30 s from a copy of its seeds,
#                                       fixed seed; any crash, leak, timeout or OOM fails
#                                       (scripts/fuzz.sh --ci 30)
#   scripts/bootstrap.sh lint   also install cppcheck and clang-tidy-14 and run
#                               scripts/static-analysis.sh (curated checks, .clang-tidy)
#   scripts/bootstrap.sh bench  also install libbenchmark-dev (Google Benchmark), build the `bench`
#                               preset and run bench/ (docs/performance.md)
#   scripts/bootstrap.sh fuzz [SECONDS]
#                               also install clang-14 and libclang-rt-14-dev (libFuzzer), then
#                               run every fuzz harness for SECONDS (default 30; scripts/fuzz.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ pkg-config python3 locales
          libcli11-dev nlohmann-json3-dev libfmt-dev libyaml-cpp-dev catch2 libxlsxwriter-dev
          libcurl4-openssl-dev)
lint_packages=(cppcheck clang-tidy-14 clang-format-14)
# clang-14 only recommends libclang-rt-14-dev, which holds libFuzzer and the sanitizer runtimes.
fuzz_packages=(clang-14 libclang-rt-14-dev)
case "${1:-}" in
  # chromium: headless, for the report's browser test (tests/browser/). nodejs and npm: the
  # offline Kubernetes schema check of `gpusel deploy` (tests/deploy/), unless a Node.js with npm
  # is installed already (the machine image's, e.g. from NodeSource, conflicts with Debian's npm).
  # libbenchmark-dev: the ci preset compiles bench/ (not run) so that it cannot rot unseen.
  # python3-yaml: scripts/check_offers.py (data/offers.yaml sanity rules) and tests/cli/csv_adds_up.py, CTest tests.
  test) packages+=(chromium libbenchmark-dev python3-yaml "${lint_packages[@]}" "${fuzz_packages[@]}")
        command -v node >/dev/null && command -v npm >/dev/null || packages+=(nodejs npm) ;;
  lint) packages+=("${lint_packages[@]}" libbenchmark-dev) ;;  # it configures the ci preset, which compiles bench/
  fuzz) packages+=("${fuzz_packages[@]}") ;;
  bench) packages+=(libbenchmark-dev) ;;
esac

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The locale tests (tests/unit/test_json_output.cpp) run output code under de_DE.UTF-8, whose
# decimal comma breaks printf-style number formatting. Debian ships locale sources only.
# (grep without -q reads all of `locale -a`, so pipefail sees no SIGPIPE.)
if ! locale -a 2>/dev/null | grep -ix 'de_DE.utf-\{0,1\}8' >/dev/null; then
  echo "bootstrap: generating the de_DE.UTF-8 locale"
  "${sudo_cmd[@]}" localedef -i de_DE -f UTF-8 de_DE.UTF-8 \
    || echo "bootstrap: could not generate de_DE.UTF-8; the locale test falls back to a synthetic locale" >&2
fi

case "${1:-}" in
  run)
    cmake --preset release >/dev/null
    cmake --build --preset release
    ./build/release/gpusel plan examples/smart-support.yaml
    ;;
  test)
    # Each stage runs even when an earlier one failed, so that one CI run shows every problem.
    names=() seconds=() results=()
    stage() {
      local name=$1 start status=0
      shift
      echo "bootstrap: stage $name: $*"
      start=$(date +%s)
      "$@" || status=$?
      names+=("$name")
      seconds+=($(($(date +%s) - start)))
      if [ "$status" -eq 0 ]; then results+=(ok); else results+=("FAILED (exit $status)"); fi
      echo "bootstrap: stage $name: ${results[-1]} after ${seconds[-1]} s"
    }
    stage ci cmake --workflow --preset ci
    stage asan cmake --workflow --preset asan
    stage lint scripts/static-analysis.sh build/ci
    stage fuzz scripts/fuzz.sh --ci 30
    echo "bootstrap: summary"
    failed=0 total=0
    for i in "${!names[@]}"; do
      printf 'bootstrap:   %-5s %5d s  %s\n' "${names[$i]}" "${seconds[$i]}" "${results[$i]}"
      total=$((total + seconds[i]))
      [ "${results[$i]}" = ok ] || failed=1
    done
    printf 'bootstrap:   %-5s %5d s\n' total "$total"
    exit "$failed"
    ;;
  lint)
    cmake --preset ci >/dev/null
    scripts/static-analysis.sh build/ci
    ;;
  fuzz)
    exec scripts/fuzz.sh "${2:-30}"
    ;;
  bench)
    cmake --preset bench >/dev/null
    cmake --build --preset bench
    ./build/bench/bench/gpusel_bench
    ;;
  *)
    echo "usage: scripts/bootstrap.sh run|test|lint|bench|fuzz [SECONDS]" >&2
    exit 2
    ;;
esac
