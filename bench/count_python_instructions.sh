#!/usr/bin/env bash
# Instructions per traced cudaMalloc + cudaFree pair made from Python (docs/python-frames.md,
# "Cost"), counted by callgrind inside the library's cudaMalloc and cudaFree hooks (the stand-in
# runtime's own work inside them included), at 3, 12 and 32 Python frames, with the GIL held.
# Each library runs twice per depth, with N1 and N2 pairs; the difference over N2 - N1 is the count
# per pair, so start-up and the exit report fall out. Exact from run to run, where times on a
# shared machine are not.
# Usage: bench/count_python_instructions.sh BUILD_DIR NAME=LIB.so [NAME=LIB.so ...]
#   (needs valgrind and Debian's python3; BUILD_DIR gives the extension and the stand-in runtime)
# Prints "NAME frames=D instructions_per_pair=..." per library and depth.
set -eu
BUILD=$(cd "${1:?usage: count_python_instructions.sh BUILD_DIR NAME=LIB.so...}" && pwd)
shift
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=${WORK:-/tmp/vramtrace-count-python}
PYTHON=${PYTHON:-/usr/bin/python3}
mkdir -p "$WORK"
N1=${N1:-1000} N2=${N2:-3000}
count() { # LIB DEPTH PAIRS
  env LD_PRELOAD="$1" VRAMTRACE_SUMMARY=0 VRAMTRACE_OUTPUT="$WORK/snap-%p.json" \
    valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$WORK/cg.out" \
    "--toggle-collect=vramtrace::hooks::cudaMalloc(*" "--toggle-collect=vramtrace::hooks::cudaFree(*" \
    "$PYTHON" "$HERE/python_frames_bench.py" "$BUILD/bin/libvt_python_ext.so" "$3" gil "$2" 2>&1 |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
  rm -f "$WORK"/snap-*.json
}
for spec in "$@"; do
  name=${spec%%=*} lib=$(cd "$(dirname "${spec#*=}")" && pwd)/$(basename "${spec#*=}")
  for depth in 3 12 32; do
    a=$(count "$lib" "$depth" "$N1") b=$(count "$lib" "$depth" "$N2")
    echo "$name frames=$depth instructions_per_pair=$(( (b - a) / (N2 - N1) ))"
  done
done
