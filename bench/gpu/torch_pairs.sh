#!/usr/bin/env bash
# Issue 20's PyTorch figure: bench/gpu/train_step.py (small loop) in ROUNDS alternated rounds of
# processes (default 10). Each round runs, in this order:
#   backend:cudaMallocAsync untraced | traced (LIB)                        -> the ratio of the round
#   default caching allocator untraced | PyTorch's recorder (stacks=python) | traced (LIB)
#     (the recorder refuses the cudaMallocAsync backend; the default allocator makes ~70 calls in
#      260 steps, so it shows the recorder's cost beside vramtrace's on the same loop)
# and prints per-round ratios and, per comparison, the median ratio with its min-max spread, of the
# step, of its host part (train_step.py: the step before its synchronize, which GPU clocks do not
# move), and of the step scaled by the process's own CPU probe (train_step.py's probe_median_ms: the
# host's speed in that process, which differs from process to process); with LIB == BASE_LIB,
# LIB / BASE_LIB is the noise of each measure itself.
# Usage: bench/gpu/torch_pairs.sh LIB [OUT_DIR]     (DEFAULT_ROUNDS: rounds of the second group, default 5)
# BASE_LIB: another build of the library, run in each round beside LIB's traced process, for the
# ratio of the two builds on the same loop (LIB / BASE_LIB within the round).
# PIN_CPUS: CPUs (taskset -c list) for every process of the run. Odd rounds run untraced, LIB,
# BASE_LIB; even rounds BASE_LIB, LIB, untraced: each comparison is of neighbours, in both orders, so
# that a drift along the run cancels out.
set -u
LIB=${1:?usage: torch_pairs.sh LIB [OUT_DIR]}
OUT=${2:-/tmp/vramtrace-torch-pairs}
mkdir -p "$OUT"
HERE=$(cd "$(dirname "$0")" && pwd)
export VRAMTRACE_SUMMARY=0 VRAMTRACE_OUTPUT=/tmp/vt-pairs-%p.json
T=(python3 "$HERE/train_step.py" --size small --steps "${STEPS:-150}")
if [ -n "${PIN_CPUS:-}" ]; then T=(taskset -c "$PIN_CPUS" "${T[@]}"); fi
# One process: "STEP_MS HOST_MS PROBE_MS" (train_step.py's median step, its host part before the
# synchronize, and its CPU probe).
run() {
  "$@" 2>/dev/null |
    sed -n 's/.* median_ms=\([0-9.]*\).* host_median_ms=\([0-9.]*\) probe_median_ms=\([0-9.]*\).*/\1 \2 \3/p' |
    tail -1
}
# KEY=STEP KEY_host=HOST KEY_probe=PROBE for one process (all empty when it printed no result).
keys() {
  local v step host probe
  v=$(run "${@:2}")
  read -r step host probe <<<"$v"
  echo "$1=${step:-} $1_host=${host:-} $1_probe=${probe:-}"
}
A=(env PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync)
: >"$OUT/torch_pairs.txt"
for r in $(seq "${ROUNDS:-10}"); do
  # Odd rounds: untraced, LIB, BASE_LIB; even rounds the reverse. LIB stays beside both.
  base=
  if [ $((r % 2)) = 1 ]; then
    a=$(keys async_untraced "${A[@]}" "${T[@]}")
    b=$(keys async_traced "${A[@]}" LD_PRELOAD="$LIB" "${T[@]}")
    if [ -n "${BASE_LIB:-}" ]; then base=" $(keys async_base "${A[@]}" LD_PRELOAD="$BASE_LIB" "${T[@]}")"; fi
  else
    if [ -n "${BASE_LIB:-}" ]; then base=" $(keys async_base "${A[@]}" LD_PRELOAD="$BASE_LIB" "${T[@]}")"; fi
    b=$(keys async_traced "${A[@]}" LD_PRELOAD="$LIB" "${T[@]}")
    a=$(keys async_untraced "${A[@]}" "${T[@]}")
  fi
  echo "ROUND $r $a $b$base" | tee -a "$OUT/torch_pairs.txt"
  if [ "$r" -le "${DEFAULT_ROUNDS:-5}" ]; then
    c=$(keys default_untraced "${T[@]}")
    d=$(keys default_recorder "${T[@]}" --record python)
    e=$(keys default_traced env LD_PRELOAD="$LIB" "${T[@]}")
    echo "ROUND $r $c $d $e" | tee -a "$OUT/torch_pairs.txt"
  fi
  rm -f /tmp/vt-pairs-*.json
done
python3 - "$OUT/torch_pairs.txt" <<'PY'
import statistics, sys, collections
rounds = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    p = line.split()
    for kv in p[2:]:
        k, v = kv.split("=")
        if v: rounds[int(p[1])][k] = float(v)
def show(name, num, den):
    for suffix, what in (("", "step"), ("_host", "host part"), ("_norm", "step / CPU probe")):
        r = [x[num + suffix] / x[den + suffix] for x in rounds.values() if num + suffix in x and den + suffix in x]
        if r:
            print("%s (%s): median %.3f, min %.3f, max %.3f over %d rounds" % (name, what, statistics.median(r), min(r), max(r), len(r)))
for x in rounds.values():
    for k in [k for k in x if k + "_probe" in x]:
        x[k + "_norm"] = x[k] / x[k + "_probe"]
show("cudaMallocAsync traced / untraced", "async_traced", "async_untraced")
show("cudaMallocAsync BASE_LIB traced / untraced", "async_base", "async_untraced")
show("cudaMallocAsync LIB / BASE_LIB", "async_traced", "async_base")
show("default allocator, PyTorch recorder / untraced", "default_recorder", "default_untraced")
show("default allocator, vramtrace / untraced", "default_traced", "default_untraced")
PY
