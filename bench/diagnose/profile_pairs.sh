#!/usr/bin/env bash
# Where a traced stream-ordered pair's time goes on the real driver: perf profiles (cpu-clock, so it
# works without a PMU) of alloc_pairs async, untraced and traced by LIB, with 1 thread x 400,000
# pairs 32 frames deep and 16 threads x 4,000 pairs 24 frames deep; a flat profile by object and by
# symbol for each, and `perf stat` of the 1-thread runs (cycles/instructions when the machine has a PMU).
# Usage: bench/diagnose/profile_pairs.sh OUT_DIR LIB.so [PERF]     (PERF: the perf binary, default perf)
set -u
OUT=${1:?usage: profile_pairs.sh OUT_DIR LIB.so [PERF]}
LIB=${2:?usage: profile_pairs.sh OUT_DIR LIB.so [PERF]}
PERF=${3:-perf}
WORK=${WORK:-/tmp/vramtrace-profile}
mkdir -p "$OUT" "$WORK"
HERE=$(cd "$(dirname "$0")" && pwd)
export VRAMTRACE_SUMMARY=0 VRAMTRACE_OUTPUT="$WORK/snap-%p.json"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvcc -O2 -std=c++17 "$HERE/../gpu/alloc_pairs.cu" -o "$WORK/alloc_pairs" -lcuda || exit 1
grep -o -w -E 'constant_tsc|nonstop_tsc|tsc_reliable|rdtscp' /proc/cpuinfo | sort | uniq -c
echo "clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"
lscpu | grep -E 'Model name|Hypervisor|Socket|NUMA node\(s\)'
prof() { # TAG THREADS PAIRS FRAMES [ENV...]
  local tag=$1 threads=$2 pairs=$3 frames=$4; shift 4
  env "$@" "$PERF" record -e cpu-clock -F 9999 -o "$WORK/$tag.data" "$WORK/alloc_pairs" async "$pairs" "$threads" "$frames" 2>/dev/null | grep RESULT | sed "s/^/$tag /"
  "$PERF" report -i "$WORK/$tag.data" --sort dso --stdio 2>/dev/null | grep -E '^ +[0-9]' | head -8 | sed "s/^/$tag dso /"
  "$PERF" report -i "$WORK/$tag.data" --sort dso,sym --stdio 2>/dev/null | grep -E '^ +[0-9]' | head -45 | sed "s/^/$tag sym /"
}
prof t1-untraced 1 400000 32
prof t1-traced 1 400000 32 LD_PRELOAD="$LIB"
prof t16-untraced 16 4000 24
prof t16-traced 16 4000 24 LD_PRELOAD="$LIB"
for v in untraced traced; do
  pre=(); [ $v = traced ] && pre=(LD_PRELOAD="$LIB")
  env "${pre[@]}" "$PERF" stat -e task-clock,cycles,instructions,cache-misses,context-switches "$WORK/alloc_pairs" async 400000 1 32 2>&1 | grep -E 'RESULT|task-clock|cycles|instructions|cache-misses|context' | sed "s/^/stat-$v /"
done
