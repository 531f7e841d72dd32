#!/usr/bin/env bash
# Instructions per traced stream-ordered pair, counted by callgrind: exact and repeatable where the
# wall-clock figures of a shared machine are not (they moved by 2x between runs on the development
# machine). bench/gpu/pair_ab.cu is built against the stand-in driver and run twice per library,
# with N1 and N2 pairs per block, counting only inside the library's cuMemAllocAsync and
# cuMemFreeAsync hooks (the stand-in's own work inside them included). The difference of the two
# counts over the (N2 - N1) * 5/4 extra linked pairs (the blocks plus their warm-up) is the count per
# pair; start-up and the exit report fall outside the hooks. A division or a cache miss counts as
# one instruction here: this shows what a change removes, not what it saves in time.
# Usage: bench/count_pair_instructions.sh BUILD_DIR NAME=LIB.so [NAME=LIB.so ...]   (needs valgrind)
# Prints "NAME instructions_per_pair=..." per library.
set -eu
BUILD=${1:?usage: count_pair_instructions.sh BUILD_DIR NAME=LIB.so...}
shift
SRC=$(cd "$(dirname "$0")/.." && pwd)
WORK=${WORK:-/tmp/vramtrace-count}
mkdir -p "$WORK"
STANDIN=$(cd "$BUILD/standin" && pwd)
CUDA_INCLUDE=${CUDA_INCLUDE:-/usr/local/cuda/include}
g++ -O2 -std=c++17 -x c++ "$SRC/bench/gpu/pair_ab.cu" -I"$CUDA_INCLUDE" -L"$STANDIN" -lcuda \
  -Wl,-rpath,"$STANDIN" -o "$WORK/pair_ab_standin"
N1=${N1:-2000} N2=${N2:-6000}
count() { # LIB PAIRS
  env LD_PRELOAD="$1" VRAMTRACE_SUMMARY=0 VRAMTRACE_OUTPUT="$WORK/snap-%p.json" \
    valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$WORK/cg.out" \
    "--toggle-collect=vramtrace::hooks::cuMemAllocAsync*" "--toggle-collect=vramtrace::hooks::cuMemFreeAsync*" \
    "$WORK/pair_ab_standin" "$2" 2 32 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
  rm -f "$WORK"/snap-*.json
}
for spec in "$@"; do
  name=${spec%%=*} lib=${spec#*=}
  a=$(count "$lib" "$N1") b=$(count "$lib" "$N2")
  echo "$name instructions_per_pair=$(( (b - a) * 4 / (5 * (N2 - N1)) ))"
done
