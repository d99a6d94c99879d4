#!/usr/bin/env bash
# Rewrites the expected stdout, stderr and rc of golden CLI cases from the current binary.
#   scripts/bless-goldens.sh GPUSEL [CASE_NAME_GLOB]     e.g. scripts/bless-goldens.sh build/dev/gpusel 'plan-*'
# Runs each case exactly as tests/cli/run_case.sh does (same locale, colour and env file). An
# expected file that would be empty is removed (run_case.sh treats a missing file as empty).
# Blessing is not reviewing: read `git diff tests/cli/cases` before committing.
set -u
cd "$(dirname "$0")/.."
gpusel=$(realpath "$1")
pattern=${2:-*}
changed=0
for case_dir in tests/cli/cases/$pattern; do
  [ -f "$case_dir/args" ] || continue
  args=()
  while IFS= read -r line || [ -n "$line" ]; do args+=("$line"); done < "$case_dir/args"
  environment=()
  if [ -f "$case_dir/env" ]; then
    while IFS= read -r line || [ -n "$line" ]; do [ -n "$line" ] && environment+=("$line"); done < "$case_dir/env"
  fi
  stdin_file=/dev/null
  [ -f "$case_dir/stdin" ] && stdin_file="$case_dir/stdin"
  work=$(mktemp -d)
  LC_ALL=C NO_COLOR= env ${environment[@]+"${environment[@]}"} "$gpusel" "${args[@]}" <"$stdin_file" \
    >"$work/stdout" 2>"$work/stderr"
  echo $? >"$work/rc"
  for stream in stdout stderr rc; do
    if [ -s "$work/$stream" ]; then
      cmp -s "$work/$stream" "$case_dir/$stream" 2>/dev/null || { cp "$work/$stream" "$case_dir/$stream"; changed=$((changed + 1)); }
    elif [ -f "$case_dir/$stream" ]; then
      rm "$case_dir/$stream"; changed=$((changed + 1))
    fi
  done
  rm -rf "$work"
done
echo "bless-goldens: $changed expected files rewritten"
