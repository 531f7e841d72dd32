#!/usr/bin/env bash
# The small PyTorch loop (bench/gpu/train_step.py, backend:cudaMallocAsync, 381 allocations a step)
# untraced and traced in ROUNDS alternating rounds of processes (default 6): its step time moves by
# 10-15% from one process to the next on the H200, more than the effect measured, so one pair says
# little. Prints each round's medians and, per variant, the ratio to untraced of the minimum and of
# the median over rounds.
# Usage: bench/gpu/torch_small_rounds.sh CARRY_DIR [NAME=LIB[,VAR=VALUE...]]...
#   Without variants: one, "traced" = CARRY_DIR/lib/libvramtrace.so. A variant preloads LIB with the
#   given environment, e.g. old=/path/libvramtrace.so new=.gpu-carry/lib/libvramtrace.so
#   nopy=.gpu-carry/lib/libvramtrace.so,VRAMTRACE_PYTHON=0 (every variant runs once per round,
#   in the order given, after the untraced run).
set -u
B=$(cd "${1:?usage: torch_small_rounds.sh CARRY_DIR [NAME=LIB[,VAR=VALUE...]]...}" && pwd)
shift
HERE=$(cd "$(dirname "$0")" && pwd)
export PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync VRAMTRACE_SUMMARY=0 VRAMTRACE_OUTPUT=/tmp/vt-rounds-%p.json
T=(python3 "$HERE/train_step.py" --size small --steps 200)
variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=("traced=$B/lib/libvramtrace.so")
median_of() { sed -n 's/.* median_ms=\([0-9.]*\).*/\1/p'; }
declare -A times
for r in $(seq "${ROUNDS:-6}"); do
  line="RESULT bench=torch_rounds round=$r untraced_ms=$("${T[@]}" 2>/dev/null | median_of)"
  times[untraced]+="${line##*=} "
  for v in "${variants[@]}"; do
    name=${v%%=*} spec=${v#*=}
    IFS=, read -r -a parts <<<"$spec"
    lib=${parts[0]}
    ms=$(env "${parts[@]:1}" LD_PRELOAD="$lib" "${T[@]}" 2>/dev/null | median_of)
    line+=" ${name}_ms=$ms"
    times[$name]+="$ms "
  done
  echo "$line"
  rm -f /tmp/vt-rounds-*.json
done
args=("untraced=${times[untraced]}")
for v in "${variants[@]}"; do name=${v%%=*}; args+=("$name=${times[$name]}"); done
python3 - "${args[@]}" <<'PY'
import statistics, sys
series = {a.split("=", 1)[0]: [float(x) for x in a.split("=", 1)[1].split()] for a in sys.argv[1:]}
u = series.pop("untraced")
print("untraced ms: min %.3f median %.3f" % (min(u), statistics.median(u)))
for name, t in series.items():
    print("%s ms: min %.3f median %.3f; ratio of minima %.3f, ratio of medians %.3f"
          % (name, min(t), statistics.median(t), min(t) / min(u), statistics.median(t) / statistics.median(u)))
PY
