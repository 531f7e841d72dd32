#!/usr/bin/env bash
# Issue 20's thread figures on the H200: alloc_pairs (stream-ordered, each thread its own stream)
#  (a) 16 threads x PAIRS pairs, 24 frames deep, and (b) 1 thread x 200,000 pairs, 32 frames deep,
# timed inside the process around the threads; ROUNDS alternated rounds (default 10) of:
#   untraced | untraced + cuStreamGetDevice per allocation (the driver query a traced hook makes) |
#   traced by each library given | the same with VRAMTRACE_STACK_DEPTH=0 | with VRAMTRACE_EVENTS=0
# and, once per round when present, compute-sanitizer --leak-check full on (a).
# Usage: bench/diagnose/thread_scaling.sh OUT_DIR NAME=LIB.so [NAME=LIB.so ...]
# SHAPES: "THREADS PAIRS FRAMES" shapes separated by '|' (default "16 $PAIRS 24|1 200000 32");
# PIN_ONE: CPUs (taskset -c list) for every 1-thread process, so that traced and untraced processes
# run on the same cores (the H200's processes otherwise move by 30% from one to the next).
# CONTROLS: more untraced variants run in each round after untraced+query, as NAME:VAR=VALUE[,VAR=VALUE]
# separated by spaces, e.g. "work10:ALLOC_PAIRS_WORK_NS=10 atomic:ALLOC_PAIRS_SHARED_ATOMIC=1"
# (alloc_pairs.cu's controls). LIB_VARIANTS: which runs each library gets, from "full depth0 events0
# bare" (default "full depth0 events0"; bare is VRAMTRACE_STACK_DEPTH=0 and VRAMTRACE_EVENTS=0 together).
# NO_SANITIZER=1 leaves compute-sanitizer out.
# Prints RESULT lines (also in OUT_DIR/scaling.txt); bench/diagnose/summarize_scaling.py makes the table.
set -u
OUT=${1:?usage: thread_scaling.sh OUT_DIR NAME=LIB.so...}
shift
WORK=${WORK:-/tmp/vramtrace-scaling}
mkdir -p "$OUT" "$WORK"
HERE=$(cd "$(dirname "$0")" && pwd)
RES=$OUT/scaling.txt
: >"$RES"
say() { echo "$*" | tee -a "$RES"; }
export VRAMTRACE_SUMMARY=0 VRAMTRACE_OUTPUT="$WORK/snap-%p.json"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
PAIRS=${PAIRS:-2000}
say "== machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1); $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
nvcc -O2 -std=c++17 "$HERE/../gpu/alloc_pairs.cu" -o "$WORK/alloc_pairs" -lcuda || { say "RESULT failed=1 nvcc"; exit 1; }
one() { # TAG THREADS PAIRS FRAMES [ENV...]
  local tag=$1 threads=$2 pairs=$3 frames=$4; shift 4
  local line
  local pin=()
  if [ "$threads" = 1 ] && [ -n "${PIN_ONE:-}" ]; then pin=(taskset -c "$PIN_ONE"); fi
  line=$(env "$@" "${pin[@]}" "$WORK/alloc_pairs" async "$pairs" "$threads" "$frames" 2>>"$OUT/stderr.txt" | grep '^RESULT' | tail -1)
  say "RESULT bench=scaling variant=$tag ${line#RESULT }"
  rm -f "$WORK"/snap-*.json
}
read -r -a controls <<<"${CONTROLS:-}"
for control in "${controls[@]}"; do
  case $control in
    *:*=*) ;;
    *) say "RESULT failed=1 CONTROLS entry $control is not NAME:VAR=VALUE[,VAR=VALUE]"; exit 2 ;;
  esac
done
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
for round in $(seq "${ROUNDS:-10}"); do
  IFS='|' read -r -a shapes <<<"${SHAPES:-16 $PAIRS 24|1 200000 32}"
  for shape in "${shapes[@]}"; do
    one untraced $shape
    one untraced+query $shape ALLOC_PAIRS_QUERY=stream_device
    for control in "${controls[@]}"; do
      IFS=',' read -r -a vars <<<"${control#*:}"
      one "${control%%:*}" $shape "${vars[@]}"
    done
    for spec in "$@"; do
      name=${spec%%=*} lib=${spec#*=}
      for v in ${LIB_VARIANTS:-full depth0 events0}; do
        case $v in
          full) one "$name" $shape LD_PRELOAD="$lib" ;;
          depth0) one "$name,depth0" $shape LD_PRELOAD="$lib" VRAMTRACE_STACK_DEPTH=0 ;;
          events0) one "$name,events0" $shape LD_PRELOAD="$lib" VRAMTRACE_EVENTS=0 ;;
          bare) one "$name,bare" $shape LD_PRELOAD="$lib" VRAMTRACE_STACK_DEPTH=0 VRAMTRACE_EVENTS=0 ;;
          *) say "RESULT failed=1 unknown LIB_VARIANTS entry $v"; exit 2 ;;
        esac
      done
    done
  done
  if [ -n "$SAN" ] && [ "${NO_SANITIZER:-0}" != 1 ]; then
    line=$("$SAN" --leak-check full --print-limit 1 "$WORK/alloc_pairs" async "$PAIRS" 16 24 2>>"$OUT/stderr.txt" | grep '^RESULT' | tail -1)
    say "RESULT bench=scaling variant=compute-sanitizer ${line#RESULT }"
  fi
done
