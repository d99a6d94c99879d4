#!/usr/bin/env bash
# Sets up a fresh Debian bookworm machine and builds gpusel.
#   scripts/bootstrap.sh run    install what is missing, build (release), run `gpusel plan` on an example
#   scripts/bootstrap.sh test   install what is missing, build and run the whole test suite:
#                               the `ci` preset, then again under ASan+UBSan
#   scripts/bootstrap.sh lint   also install cppcheck and clang-tidy-14 and run
#                               scripts/static-analysis.sh (curated checks, .clang-tidy)
#   scripts/bootstrap.sh fuzz [SECONDS]
#                               also install clang-14 and libclang-rt-14-dev (libFuzzer), then
#                               run every fuzz harness for SECONDS (default 30; scripts/fuzz.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ pkg-config python3 locales
          libcli11-dev nlohmann-json3-dev libfmt-dev libyaml-cpp-dev catch2 libxlsxwriter-dev)
if [ "${1:-}" = test ]; then
  # chromium: headless, for the report's browser test (tests/browser/).
  packages+=(chromium)
fi
if [ "${1:-}" = lint ]; then
  packages+=(cppcheck clang-tidy-14)
fi
if [ "${1:-}" = fuzz ]; then
  # clang-14 only recommends libclang-rt-14-dev, which holds libFuzzer and the sanitizer runtimes.
  packages+=(clang-14 libclang-rt-14-dev)
fi

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
    cmake --workflow --preset ci
    cmake --workflow --preset asan
    ;;
  lint)
    cmake --preset ci >/dev/null
    scripts/static-analysis.sh build/ci
    ;;
  fuzz)
    exec scripts/fuzz.sh "${2:-30}"
    ;;
  *)
    echo "usage: scripts/bootstrap.sh run|test|lint|fuzz [SECONDS]" >&2
    exit 2
    ;;
esac
