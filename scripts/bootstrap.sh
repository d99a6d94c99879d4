#!/usr/bin/env bash
# Sets up a fresh Debian bookworm machine and builds gpusel.
#   scripts/bootstrap.sh run    install what is missing, build (release), run `gpusel plan` on an example
#   scripts/bootstrap.sh test   install what is missing, build and run the whole test suite
#                               (the `ci` preset, then again under ASan+UBSan)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ pkg-config python3
          libcli11-dev nlohmann-json3-dev libfmt-dev libyaml-cpp-dev catch2 libxlsxwriter-dev)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
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
  *)
    echo "usage: scripts/bootstrap.sh run|test" >&2
    exit 2
    ;;
esac
