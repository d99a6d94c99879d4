#!/usr/bin/env bash
# Runs one golden CLI case: tests/cli/run_case.sh GPUSEL CASE_DIR (from the repository root).
# CASE_DIR/args: one argument per line. Optional CASE_DIR/stdin, and CASE_DIR/env (one NAME=VALUE
# per line, e.g. SOURCE_DATE_EPOCH for a command that writes today's date). Expected: stdout,
# stderr, rc.
# Colour is off (stdout is not a TTY) and the locale is fixed, so output is byte-stable.
set -u
gpusel=$1
case_dir=$2
args=()
while IFS= read -r line || [ -n "$line" ]; do
  args+=("$line")
done < "$case_dir/args"
environment=()
if [ -f "$case_dir/env" ]; then
  while IFS= read -r line || [ -n "$line" ]; do
    environment+=("$line")
  done < "$case_dir/env"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stdin_file=/dev/null
[ -f "$case_dir/stdin" ] && stdin_file="$case_dir/stdin"
LC_ALL=C NO_COLOR= env ${environment[@]+"${environment[@]}"} "$gpusel" "${args[@]}" <"$stdin_file" >"$work/stdout" 2>"$work/stderr"
echo $? >"$work/rc"
status=0
for stream in stdout stderr rc; do
  expected="$case_dir/$stream"
  [ -f "$expected" ] || expected=/dev/null
  if ! diff -u --label "expected $stream" --label "actual $stream" "$expected" "$work/$stream"; then
    status=1
  fi
done
exit $status
