#!/usr/bin/env bash
# The small PyTorch loop (bench/gpu/train_step.py, backend:cudaMallocAsync, 381 allocations a step)
# untraced and traced in ROUNDS alternating pairs of processes (default 6): its step time moves by
# 10-15% from one process to the next on the H200, more than the effect measured, so one pair says
# little. Prints each pair's medians and the ratio of the minimum and of the median over rounds.
# Usage: bench/gpu/torch_small_rounds.sh CARRY_DIR
set -u
B=$(cd "${1:?usage: torch_small_rounds.sh CARRY_DIR}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
export PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync VRAMTRACE_SUMMARY=0 VRAMTRACE_OUTPUT=/tmp/vt-rounds-%p.json
T=(python3 "$HERE/train_step.py" --size small --steps 200)
un=() tr=()
for r in $(seq "${ROUNDS:-6}"); do
  u=$("${T[@]}" 2>/dev/null | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p')
  t=$(LD_PRELOAD="$B/lib/libvramtrace.so" "${T[@]}" 2>/dev/null | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p')
  echo "RESULT bench=torch_rounds round=$r untraced_ms=$u traced_ms=$t"
  un+=("$u") tr+=("$t")
  rm -f /tmp/vt-rounds-*.json
done
python3 - "${un[*]}" "${tr[*]}" <<'PY'
import statistics, sys
u = [float(x) for x in sys.argv[1].split()]
t = [float(x) for x in sys.argv[2].split()]
print("untraced ms: min %.3f median %.3f; traced ms: min %.3f median %.3f" % (min(u), statistics.median(u), min(t), statistics.median(t)))
print("ratio of minima %.3f, ratio of medians %.3f" % (min(t) / min(u), statistics.median(t) / statistics.median(u)))
PY
