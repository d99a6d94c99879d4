#!/usr/bin/env bash
# ctest "deploy: kubernetes manifests pass an offline schema validator".
# Usage: check_manifests.sh GPUSEL CACHE_DIR
# Writes `gpusel deploy --target kubernetes` for every role of every example, then validates each
# document with tests/deploy/validate_manifests.js (kubernetes-models' OpenAPI schemas and a
# TypeScript excess-property check), after its self-test shows it rejects known-bad documents.
# The npm packages (package.json, package-lock.json beside this script) are installed with
# `npm ci` into CACHE_DIR (in the build tree) when missing or when the lock file changed; CI's
# fresh clone installs them on its first run. No node or npm: skipped (77) outside CI, failed in CI
# (scripts/bootstrap.sh test installs them).
set -euo pipefail
gpusel=$1
cache=$2
here=$(cd "$(dirname "$0")" && pwd)

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "check_manifests: node and npm are not installed (scripts/bootstrap.sh test installs them)"
  [ "${CI:-}" = true ] && exit 1
  exit 77
fi

mkdir -p "$cache"
if [ ! -d "$cache/node_modules" ] || ! cmp -s "$here/package-lock.json" "$cache/.installed-lock.json"; then
  echo "check_manifests: npm ci in $cache"
  rm -f "$cache/.installed-lock.json"
  cp "$here/package.json" "$here/package-lock.json" "$cache/"
  (cd "$cache" && npm ci --no-audit --no-fund --prefer-offline --loglevel=error)
  cp "$here/package-lock.json" "$cache/.installed-lock.json"
fi
cp "$here/validate_manifests.js" "$cache/"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for example in examples/*.yaml; do
  # One directory per example: a project and a workload it includes write the same file name.
  mkdir "$out/$(basename "$example" .yaml)"
  "$gpusel" --quiet deploy "$example" --target kubernetes -o "$out/$(basename "$example" .yaml)"
done
node "$cache/validate_manifests.js" --self-test
node "$cache/validate_manifests.js" "$out"/*/*.yaml
