#!/usr/bin/env bash
# Format goldens: the hand-built PlanReport of tests/support/plan_fixture.hpp rendered in every
# text format and compared byte for byte with tests/render/golden/. The fixture's numbers are
# fixed by hand, so these files change only when a renderer's output changes, never with the
# model (the end-to-end goldens in tests/cli/cases/ cover the model).
#   tests/render/check_goldens.sh FIXTURE_BINARY           compare (exit 1 on any difference)
#   tests/render/check_goldens.sh FIXTURE_BINARY --bless   rewrite the expected files; then read `git diff`
set -u
fixture=$1
bless=${2:-}
golden=$(dirname "$0")/golden
status=0
check() {
  local name=$1
  shift
  local actual
  actual=$(mktemp)
  "$fixture" "$@" >"$actual" || { echo "render goldens: $fixture $* failed"; status=1; rm -f "$actual"; return; }
  if [ "$bless" = --bless ]; then
    cp "$actual" "$golden/$name"
  elif ! diff -u "$golden/$name" "$actual"; then
    echo "render goldens: $name differs (tests/render/check_goldens.sh FIXTURE --bless, then review git diff)"
    status=1
  fi
  rm -f "$actual"
}
check plan-table-100.txt table 100
check plan-table-100-show-rejected.txt table 100 show-rejected
check plan-table-60.txt table 60
check plan-markdown.md markdown
check plan.json json
check plan.csv csv
[ "$status" -eq 0 ] && echo "render goldens: 6 files identical"
exit "$status"
