#!/usr/bin/env bash
# A stand-in benchmark for suite_test.sh: prints figures that depend only on its arguments, its
# environment and how many times it has run before (a counter file), so that the suite's results
# are known exactly.
#   fake_bench.sh COUNTER pair|count NAME|fail
set -eu
n=$(($(cat "$1" 2>/dev/null || echo 0) + 1))
echo "$n" >"$1"
case $2 in
  pair) echo "check: fake walk agrees"
        echo "RESULT ns_per_pair=$((${FAKE_NS:-100} + n)) preloaded=$([ -n "${LD_PRELOAD:-}" ] && echo 1 || echo 0)" ;;
  count) echo "frames=3 instructions_per_pair=$((1000 + ${FAKE_NS:-0}))"
         echo "frames=12 instructions_per_pair=$((2000 + ${FAKE_NS:-0}))"
         echo "${3%%=*} instructions_per_pair=$((500 + ${FAKE_NS:-0}))" ;;
  fail) echo "no figures" >&2; exit 3 ;;
esac
