#!/usr/bin/env bash
# Does the 16-thread slowdown depend on where the hook runs? alloc_pairs (stream-ordered, each thread
# its own stream) built against the static cudart (the hook runs inside cudart's driver call, the
# only entry the library sees) and the shared cudart (the runtime hook records before cudart runs;
# the driver hook passes through), 16 threads x PAIRS pairs 24 frames deep and 1 thread x 200,000
# pairs 32 frames deep; ROUNDS alternated rounds (default 6) of: untraced | busy loop of 500 ns per pair
# (ALLOC_PAIRS_SPIN_NS) | LIB with VRAMTRACE_DISABLE=1 (interposition only) | LIB traced.
# Usage: bench/diagnose/cudart_linkage.sh OUT_DIR LIB.so      Prints RESULT lines (also OUT_DIR/linkage.txt).
set -u
OUT=${1:?usage: cudart_linkage.sh OUT_DIR LIB.so}
LIB=${2:?usage: cudart_linkage.sh OUT_DIR LIB.so}
WORK=${WORK:-/tmp/vramtrace-linkage}
mkdir -p "$OUT" "$WORK"
HERE=$(cd "$(dirname "$0")" && pwd)
RES=$OUT/linkage.txt
: >"$RES"
say() { echo "$*" | tee -a "$RES"; }
export VRAMTRACE_SUMMARY=0 VRAMTRACE_OUTPUT="$WORK/snap-%p.json"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
PAIRS=${PAIRS:-2000}
nvcc -O2 -std=c++17 "$HERE/../gpu/alloc_pairs.cu" -o "$WORK/pairs_static" -lcuda || { say "RESULT failed=1 nvcc"; exit 1; }
nvcc -O2 -std=c++17 -cudart shared "$HERE/../gpu/alloc_pairs.cu" -o "$WORK/pairs_shared" -lcuda || { say "RESULT failed=1 nvcc"; exit 1; }
one() { # CUDART TAG THREADS PAIRS FRAMES [ENV...]
  local cudart=$1 tag=$2 threads=$3 pairs=$4 frames=$5; shift 5
  local line
  line=$(env "$@" "$WORK/pairs_$cudart" async "$pairs" "$threads" "$frames" 2>>"$OUT/stderr.txt" | grep '^RESULT' | tail -1)
  say "RESULT bench=linkage cudart=$cudart variant=$tag ${line#RESULT }"
  rm -f "$WORK"/snap-*.json
}
for round in $(seq "${ROUNDS:-6}"); do
  for shape in "16 $PAIRS 24" "1 200000 32"; do
    for cudart in static shared; do
      one $cudart untraced $shape
      one $cudart spin500 $shape ALLOC_PAIRS_SPIN_NS=500
      one $cudart disabled $shape LD_PRELOAD="$LIB" VRAMTRACE_DISABLE=1
      one $cudart traced $shape LD_PRELOAD="$LIB"
    done
  done
done
