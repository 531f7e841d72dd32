#!/usr/bin/env bash
# Where the traced stream-ordered pair's time goes on a real driver (issue 6), in about 2 minutes:
#  (a) driver_calls.cu: ns per call of each driver query a hook could make, 1/4/16 threads;
#  (b) alloc_pairs.cu (async, 32 frames, 1 and 8 threads) untraced, and traced by each library given,
#      with VRAMTRACE_STACK_DEPTH=32 and =0, alternated ROUNDS times (default 3; the best of each is what counts).
# Usage: bench/diagnose/hook_breakdown.sh OUT_DIR NAME=LIB.so [NAME=LIB.so ...]
#   e.g. hook_breakdown.sh "$OUT" before=.gpu-carry/old/libvramtrace.so after=.gpu-carry/lib/libvramtrace.so
# Prints RESULT lines (also in OUT_DIR/breakdown.txt).
set -u
OUT=${1:?usage: hook_breakdown.sh OUT_DIR NAME=LIB.so...}
shift
WORK=${WORK:-/tmp/vramtrace-breakdown}
mkdir -p "$OUT" "$WORK"
HERE=$(cd "$(dirname "$0")" && pwd)
RES=$OUT/breakdown.txt
: >"$RES"
say() { echo "$*" | tee -a "$RES"; }
export VRAMTRACE_SUMMARY=0 VRAMTRACE_OUTPUT="$WORK/snap-%p.json"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

say "== machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1); $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
nvcc -O2 -std=c++17 "$HERE/../gpu/driver_calls.cu" -o "$WORK/driver_calls" -lcuda || say "RESULT failed=1 nvcc driver_calls"
nvcc -O2 -std=c++17 "$HERE/../gpu/alloc_pairs.cu" -o "$WORK/alloc_pairs" -lcuda || say "RESULT failed=1 nvcc alloc_pairs"

say "== (a) driver queries"
"$WORK/driver_calls" 200000 1 4 16 2>&1 | tee -a "$RES"

say "== (b) traced pairs"
pair() { # TAG THREADS [ENV...]
  local tag=$1 threads=$2; shift 2
  local line
  line=$(env "$@" "$WORK/alloc_pairs" async $((200000 / threads)) "$threads" 32 2>>"$OUT/stderr.txt" | grep '^RESULT' | tail -1)
  say "RESULT bench=breakdown lib=$tag ${line#RESULT }"
}
for round in $(seq "${ROUNDS:-3}"); do
  for threads in 1 8; do
    pair untraced "$threads"
    for spec in "$@"; do
      name=${spec%%=*} lib=${spec#*=}
      pair "$name" "$threads" LD_PRELOAD="$lib"
      pair "$name-depth0" "$threads" LD_PRELOAD="$lib" VRAMTRACE_STACK_DEPTH=0
    done
  done
done
if command -v perf >/dev/null; then
  say "== perf of the last library, 1 thread"
  lib=${!#}; lib=${lib#*=}
  LD_PRELOAD="$lib" perf record -g -o "$WORK/p.data" "$WORK/alloc_pairs" async 400000 1 32 >/dev/null 2>&1
  perf report -i "$WORK/p.data" --no-children --percent-limit 1 --stdio 2>/dev/null | grep -E '^ +[0-9]' | head -40 | tee -a "$RES"
else
  say "(no perf on this machine)"
fi
