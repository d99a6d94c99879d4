#!/usr/bin/env bash
# Static analysis: the include layers of src/ (scripts/check-includes.py), formatting
# (clang-format-14 --dry-run --Werror), then a curated check list: cppcheck (warning, performance, portability) and
# clang-tidy (.clang-tidy, warnings are errors) over every source of the core (src/) and of the
# fuzz harnesses (fuzz/), using the compile commands of a configured build. Exits non-zero on
# any finding. `scripts/bootstrap.sh test` runs it on the `ci` build; `scripts/bootstrap.sh lint`
# runs only this.
#   scripts/static-analysis.sh [BUILD_DIR]   (default build/ci, configured by the ci preset)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/ci}
[ -f "$build/compile_commands.json" ] || { echo "static-analysis: configure first (cmake --preset ci)" >&2; exit 2; }
tidy=$(command -v clang-tidy-14 || command -v clang-tidy || true)
if [ -z "$tidy" ] || ! command -v cppcheck >/dev/null 2>&1; then
  echo "static-analysis: needs cppcheck and clang-tidy-14 (scripts/bootstrap.sh lint installs them)" >&2
  exit 2
fi

status=0

echo "static-analysis: include layers (scripts/check-includes.py)"
if ! python3 scripts/check-includes.py; then
  echo "static-analysis: include layers FAILED"
  status=1
fi

# Formatting: every C++ file git tracks under src/, tests/, bench/ and fuzz/ is as .clang-format
# says (clang-format-14; `clang-format-14 -i FILE` fixes one).
format=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$format" ]; then
  echo "static-analysis: needs clang-format-14 (scripts/bootstrap.sh lint installs it)" >&2
  exit 2
fi
mapfile -t formatted < <(git ls-files 'src/*.cpp' 'src/*.hpp' 'tests/*.cpp' 'tests/*.hpp' 'bench/*.cpp' \
                           'fuzz/*.cpp' 'fuzz/*.hpp')
echo "static-analysis: $("$format" --version | sed -n 's/.*version //p') --dry-run --Werror over ${#formatted[@]} files"
if ! "$format" --dry-run --Werror "${formatted[@]}"; then
  echo "static-analysis: formatting FAILED (run $format -i on the files above)"
  status=1
fi

echo "static-analysis: cppcheck $(cppcheck --version | sed 's/^Cppcheck //') over src/ fuzz/"
if ! cppcheck --enable=warning,performance,portability --std=c++20 --quiet --inline-suppr \
    -I src --suppress=missingIncludeSystem --error-exitcode=1 src/ fuzz/; then
  echo "static-analysis: cppcheck FAILED"
  status=1
fi

# Every translation unit of the build that lives in src/ or fuzz/ (fuzz_target.cpp is compiled
# only by the `fuzz` preset and holds nothing but the libFuzzer entry point).
mapfile -t sources < <(find src fuzz -name '*.cpp' ! -name fuzz_target.cpp | sort)
echo "static-analysis: $("$tidy" --version | sed -n 's/.*LLVM version //p') clang-tidy over ${#sources[@]} files"
# The compile commands are GCC's: clang does not know some of its warning options
# (-Wno-restrict), which clang-tidy would report as errors.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! printf '%s\n' "${sources[@]}" \
    | xargs -P 2 -n 4 "$tidy" -p "$build" --quiet --extra-arg=-Wno-unknown-warning-option >"$log" 2>&1; then
  status=1
fi
# clang-tidy prints a count of the (filtered) warnings of system headers for every file.
grep -v -e ' warnings\{0,1\} generated\.$' -e '^Suppressed [0-9]* warnings' \
  -e '^Use -header-filter=' "$log" || true
if [ "$status" -ne 0 ]; then
  echo "static-analysis: FAILED (findings above)"
  exit 1
fi
echo "static-analysis: clean"
