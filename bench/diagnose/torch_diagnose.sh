#!/usr/bin/env bash
# Where the traced PyTorch step's extra time goes (issue 20): bench/gpu/train_step.py small, with
# backend:cudaMallocAsync, untraced and traced by LIB.
#   1. VRAMTRACE_DEBUG=1 runs (Python frames on and off): the stack-capture counters printed at
#      exit (unwind rules derived, captures that fell back to libunwind's walk) and allocs per step.
#   2. perf stat of each: task clock, context switches, migrations, page faults.
#   3. perf record (cpu-clock) of each, reported by thread name and object, and the main thread's
#      symbols, so a difference can be told apart from the samples of idle worker threads.
# Usage: bench/diagnose/torch_diagnose.sh LIB OUT_DIR [PERF]      (PERF: the perf binary, default perf)
# PERF_LIBS: a folder of libraries that a carried perf needs; only perf itself gets it on
# LD_LIBRARY_PATH, the profiled program keeps the caller's.
set -u
LIB=${1:?usage: torch_diagnose.sh LIB OUT_DIR [PERF]}
OUT=${2:?usage: torch_diagnose.sh LIB OUT_DIR [PERF]}
PERF=${3:-perf}
mkdir -p "$OUT"
HERE=$(cd "$(dirname "$0")" && pwd)
export VRAMTRACE_SUMMARY=0 VRAMTRACE_OUTPUT=/tmp/vt-diag-%p.json PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
T=(python3 "$HERE/../gpu/train_step.py" --size small --steps "${STEPS:-200}")
ORIG_LDLP=${LD_LIBRARY_PATH:-}
P() { # perf SUBCOMMAND ARGS... -- the profiled command follows "--" as given
  if [ -n "${PERF_LIBS:-}" ]; then LD_LIBRARY_PATH="$PERF_LIBS" "$PERF" "$@"; else "$PERF" "$@"; fi
}
for py in 1 0; do
  echo "== debug run, VRAMTRACE_PYTHON=$py"
  LD_PRELOAD="$LIB" VRAMTRACE_DEBUG=1 VRAMTRACE_PYTHON=$py "${T[@]}" 2>&1 |
    grep -E 'RESULT|stack capture|Python frames|fell back|derived' | cut -c1-300
done
for v in untraced traced; do
  pre=(); [ $v = traced ] && pre=(LD_PRELOAD="$LIB")
  echo "== perf stat $v"
  P stat -e task-clock,context-switches,cpu-migrations,page-faults -- env LD_LIBRARY_PATH="$ORIG_LDLP" "${pre[@]}" "${T[@]}" 2>&1 |
    grep -E 'RESULT|task-clock|context-switches|migrations|page-faults|elapsed'
done
for v in untraced traced; do
  pre=(); [ $v = traced ] && pre=(LD_PRELOAD="$LIB")
  echo "== perf record $v"
  P record -q -e cpu-clock -F 2999 -o "/tmp/diag-$v.data" -- env LD_LIBRARY_PATH="$ORIG_LDLP" "${pre[@]}" "${T[@]}" 2>/dev/null | grep RESULT
  P report -i "/tmp/diag-$v.data" --sort comm --stdio 2>/dev/null | grep -E '^ +[0-9]' | head -8 | sed "s/^/$v comm /"
  P report -i "/tmp/diag-$v.data" --comm python3 --sort dso --stdio 2>/dev/null | grep -E '^ +[0-9]' | head -12 |
    sed "s/^/$v main-dso /"
  P report -i "/tmp/diag-$v.data" --comm python3 --sort dso,sym --stdio 2>/dev/null | grep -E '^ +[0-9]' |
    head -40 | cut -c1-160 | sed "s/^/$v main-sym /"
  P report -i "/tmp/diag-$v.data" --comm python3 --dso libvramtrace.so --sort sym --stdio 2>/dev/null |
    grep -E '^ +[0-9]' | head -25 | cut -c1-160 | sed "s/^/$v vt-sym /"
done
rm -f /tmp/vt-diag-*.json
