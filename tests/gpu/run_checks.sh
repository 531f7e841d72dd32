#!/usr/bin/env bash
# Runs several of this folder's checks in one device call: run_<name>.sh CARRY OUT/<name> for
# each name, each under a time limit, its whole output in OUT/<name>.log, and prints each check's
# PASS/FAIL/INFO lines and its failure count, then one line per check.
# Usage: tests/gpu/run_checks.sh CARRY OUT [SECONDS_EACH] NAME...
#   e.g. tests/gpu/run_checks.sh .gpu-carry "$OUT" 150 foundation termination python_package
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
carry=$1 out=$2
shift 2
limit=150
if [[ ${1:-} =~ ^[0-9]+$ ]]; then limit=$1; shift; fi
mkdir -p "$out"
declare -a summary
for name in "$@"; do
  script="$here/run_$name.sh"
  if [ ! -f "$script" ]; then summary+=("$name: no $script"); continue; fi
  start=$(date +%s)
  timeout "$limit" bash "$script" "$carry" "$out/$name" > "$out/$name.log" 2>&1
  rc=$?
  echo "=== $name: exit $rc after $(( $(date +%s) - start )) s"
  grep -E '^(PASS|FAIL|INFO|FIGURE)|failure' "$out/$name.log" | cut -c1-240
  summary+=("$name: exit $rc, $(grep -c '^FAIL' "$out/$name.log") FAIL line(s)")
done
echo "=== summary"
printf '%s\n' "${summary[@]}"
