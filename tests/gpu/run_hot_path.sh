#!/usr/bin/env bash
# Issue 39's wall-clock figures on a real GPU, from bench/gpu/alloc_pairs.cu (cudaMallocAsync +
# cudaFreeAsync, each thread its own stream, timed inside the process around the threads):
#   one: 1 thread x PAIRS_ONE pairs (default 200,000) at the bottom of 32 frames, pinned to one CPU
#        (PIN_ONE, default 2) so that traced and untraced processes run on the same core;
#        the figure is traced - untraced ns per pair (target <= +250 ns);
#   churn: 16 threads x PAIRS_CHURN pairs (default 2,000) of 24 frames; the figure is traced /
#        untraced wall time per pair (target <= 1.25x).
# ROUNDS alternated rounds (default 10); within a round the order of traced and untraced flips
# from one round to the next, so that a drift of the machine falls on both. Once per round each
# shape also runs under compute-sanitizer --leak-check full (PAIRS_ONE / 10 pairs for the single
# thread), the peer the figures are read beside.
# Prints one RESULT line per process, then per shape the median, minimum and maximum over the
# rounds, PASS/FAIL against the targets and "== N failure(s)".
# Usage: tests/gpu/run_hot_path.sh CARRY OUT_DIR   (CARRY with lib/libvramtrace.so)
set -u
B=$(cd "${1:-.gpu-carry}" && pwd)
OUT=${2:-/tmp/vramtrace-gpu}/hot_path
mkdir -p "$OUT"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
LIB=$B/lib/libvramtrace.so
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export VRAMTRACE_SUMMARY=0 VRAMTRACE_OUTPUT="$OUT/snap-%p.json"
ROUNDS=${ROUNDS:-10} PAIRS_ONE=${PAIRS_ONE:-200000} PAIRS_CHURN=${PAIRS_CHURN:-2000} PIN_ONE=${PIN_ONE:-2}
RES=$OUT/results.txt
: >"$RES"
failures=0
fail() { failures=$((failures + 1)); }
echo "INFO $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1); $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
[ -f "$LIB" ] || { echo "FAIL no $LIB"; echo "== 1 failure(s)"; exit 1; }
nvcc -O2 -std=c++17 -arch=sm_90 "$SRC/bench/gpu/alloc_pairs.cu" -o "$OUT/alloc_pairs" -lcuda 2>"$OUT/nvcc.err" ||
  { echo "FAIL nvcc alloc_pairs: $(tail -3 "$OUT/nvcc.err")"; echo "== 1 failure(s)"; exit 1; }
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)

# run SHAPE VARIANT ROUND [PREFIX...]: one process; appends "SHAPE VARIANT ROUND ns_per_pair".
run() {
  local shape=$1 variant=$2 round=$3; shift 3
  local args line ns
  if [ "$shape" = one ]; then args=(async "$PAIRS_ONE" 1 32); else args=(async "$PAIRS_CHURN" 16 24); fi
  [ "$variant" = sanitizer ] && [ "$shape" = one ] && args=(async $((PAIRS_ONE / 10)) 1 32)
  line=$("$@" "$OUT/alloc_pairs" "${args[@]}" 2>>"$OUT/stderr.txt" | grep '^RESULT' | tail -1)
  rm -f "$OUT"/snap-*.json
  ns=$(sed -n 's/.* ns_per_pair=\([0-9.]*\).*/\1/p' <<<"$line")
  echo "RESULT shape=$shape variant=$variant round=$round ${line#RESULT }"
  [ -n "$ns" ] && echo "$shape $variant $round $ns" >>"$RES" || { echo "FAIL $shape $variant round $round: no RESULT line"; fail; }
}
pin=(taskset -c "$PIN_ONE")
taskset -c "$PIN_ONE" true 2>/dev/null || pin=()
for round in $(seq "$ROUNDS"); do
  for shape in one churn; do
    p=(); [ "$shape" = one ] && p=("${pin[@]}")
    if [ $((round % 2)) = 1 ]; then
      run $shape untraced "$round" env "${p[@]}"
      run $shape traced "$round" env LD_PRELOAD="$LIB" "${p[@]}"
    else
      run $shape traced "$round" env LD_PRELOAD="$LIB" "${p[@]}"
      run $shape untraced "$round" env "${p[@]}"
    fi
    [ -n "$SAN" ] && run $shape sanitizer "$round" "$SAN" --leak-check full --print-limit 1
  done
done

# Per round: one's traced - untraced, churn's traced / untraced, and the sanitizer's ratio.
figures=$(python3 - "$RES" <<'EOF'

import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    shape, variant, rnd, ns = line.split()
    rows[(shape, variant, int(rnd))] = float(ns)
rounds = sorted({r for (_, _, r) in rows})
def spread(name, values, unit, target):
    if not values:
        print("FAIL %s: no complete round" % name); return
    med = statistics.median(values)
    print("FIGURE %s median=%.2f%s min=%.2f%s max=%.2f%s rounds=%d" % (name, med, unit, min(values), unit, max(values), unit, len(values)))
    if target is not None:
        ok = med <= target
        print("%s %s median %.2f%s <= %g%s" % ("PASS" if ok else "FAIL", name, med, unit, target, unit))
def per_round(shape, f):
    return [f(rows[(shape, 'traced', r)], rows[(shape, 'untraced', r)], rows.get((shape, 'sanitizer', r)))
            for r in rounds if (shape, 'traced', r) in rows and (shape, 'untraced', r) in rows]
spread("one_thread_depth32_extra_ns", per_round('one', lambda t, u, s: t - u), "ns", 250)
spread("one_thread_untraced_ns", per_round('one', lambda t, u, s: u), "ns", None)
spread("churn16_depth24_ratio", per_round('churn', lambda t, u, s: t / u), "x", 1.25)
for shape in ('one', 'churn'):
    san = [s / u for t, u, s in [(0, rows[(shape, 'untraced', r)], rows.get((shape, 'sanitizer', r))) for r in rounds
                                 if (shape, 'untraced', r) in rows] if s is not None]
    if san:
        spread("%s_compute_sanitizer_ratio" % shape, san, "x", None)
EOF
)
echo "$figures"
failures=$((failures + $(grep -c '^FAIL' <<<"$figures")))
echo "== $failures failure(s)"
[ "$failures" = 0 ]
