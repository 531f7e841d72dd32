#!/usr/bin/env bash
# Two builds of the library side by side on the H200, in one run (issue 20's figures):
#   1. PyTorch's small loop traced by each with VRAMTRACE_DEBUG=1 (stack-capture counters);
#   2. bench/gpu/torch_pairs.sh, ROUNDS (default 12) alternated rounds: untraced | NEW | BASE;
#   3. bench/gpu/thread_scaling.sh, SCALING_ROUNDS (default 6) rounds with both builds (its SHAPES,
#      CONTROLS, LIB_VARIANTS and NO_SANITIZER pass through);
#   4. bench/gpu/pair_ab.sh, PAIR_ROUNDS (default 6) rounds: the one-thread pair inside the process;
#   5. with PERF given, a perf profile of NEW in the PyTorch loop, by symbol inside the library.
# Usage: bench/gpu/compare_builds.sh OUT_DIR NEW.so BASE.so [PERF]   (PERF_LIBS: as torch_diagnose.sh)
set -u
OUT=${1:?usage: compare_builds.sh OUT_DIR NEW.so BASE.so [PERF]}
NEW=${2:?}
BASE=${3:?}
PERF=${4:-}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
export PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync VRAMTRACE_SUMMARY=0 VRAMTRACE_OUTPUT=/tmp/vt-cmp-%p.json
for spec in new="$NEW" base="$BASE"; do
  LD_PRELOAD=${spec#*=} VRAMTRACE_DEBUG=1 python3 "$HERE/train_step.py" --size small --steps 200 2>&1 |
    grep -E 'RESULT|stack capture' | sed "s/^/${spec%%=*} /" | tee -a "$OUT/debug.txt"
done
ROUNDS=${ROUNDS:-12} DEFAULT_ROUNDS=0 BASE_LIB="$BASE" bash "$HERE/torch_pairs.sh" "$NEW" "$OUT/torch" 2>&1 | grep -v "^ROUND"
ROUNDS=${SCALING_ROUNDS:-6} bash "$HERE/thread_scaling.sh" "$OUT/scaling" new="$NEW" base="$BASE" >/dev/null 2>&1
python3 "$HERE/summarize_scaling.py" "$OUT/scaling/scaling.txt" --base base
ROUNDS=${PAIR_ROUNDS:-6} bash "$HERE/pair_ab.sh" "$OUT/pair_ab" new="$NEW" base="$BASE" 2>&1 | grep -v '^variant='
if [ -n "$PERF" ]; then
  P() { if [ -n "${PERF_LIBS:-}" ]; then LD_LIBRARY_PATH="$PERF_LIBS" "$PERF" "$@"; else "$PERF" "$@"; fi; }
  P record -q -e cpu-clock -F 2999 -o /tmp/vt-cmp.data -- env LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}" \
    LD_PRELOAD="$NEW" python3 "$HERE/train_step.py" --size small --steps 300 2>/dev/null | grep RESULT
  P report -i /tmp/vt-cmp.data --sort comm,dso --stdio 2>/dev/null | grep -E '^ +[0-9]' | head -6
  P report -i /tmp/vt-cmp.data --dso libvramtrace.so --sort sym --stdio 2>/dev/null | grep -E '^ +[0-9]' |
    head -24 | cut -c1-120
fi
rm -f /tmp/vt-cmp-*.json
