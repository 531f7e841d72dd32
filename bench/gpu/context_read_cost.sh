#!/usr/bin/env bash
# The cost of owning records by context (one cached cuCtxGetCurrent per allocation in place of
# cuCtxGetDevice): bench/gpu/alloc_pairs.cu, 1 thread, 32 frames, cudaMalloc/cudaFree and
# cudaMallocAsync/cudaFreeAsync pairs (shared cudart), ROUNDS rounds that alternate untraced, the
# library before the change (OLD) and after it (NEW) in one run, in an order that rotates per round. Prints each round's ns per pair and
# the medians with their spread (min-max).
# Usage: bench/gpu/context_read_cost.sh OLD_LIB NEW_LIB [ROUNDS] [PAIRS]
set -u
OLD=$1 NEW=$2 ROUNDS=${3:-10} PAIRS=${4:-200000}
HERE=$(cd "$(dirname "$0")" && pwd)
W=${WORK:-/tmp/vt-ctx-cost}; mkdir -p "$W"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export VRAMTRACE_SUMMARY=0 VRAMTRACE_OUTPUT="$W/snap-%p.json"
nvcc -O2 -std=c++17 -cudart shared "$HERE/alloc_pairs.cu" -o "$W/alloc_pairs" -lcuda || exit 1
for api in sync async; do
  for r in $(seq "$ROUNDS"); do
    # The order rotates from round to round, so that a drift within a round (clocks, caches) falls
    # on each library alike.
    case $((r % 3)) in 0) order="none old new";; 1) order="old new none";; 2) order="new none old";; esac
    for which in $order; do
      lib=""; [ $which = old ] && lib=$OLD; [ $which = new ] && lib=$NEW
      n=$PAIRS; [ $api = sync ] && n=$((PAIRS / 10))
      ns=$(LD_PRELOAD=$lib "$W/alloc_pairs" $api "$n" 1 32 2>/dev/null | sed -n 's/.*ns_per_pair=\([0-9.]*\).*/\1/p')
      echo "ROUND api=$api round=$r lib=$which ns_per_pair=$ns"
    done
  done
done | tee "$W/rounds.txt"
python3 - "$W/rounds.txt" <<'PY'
import re, statistics, sys
rows = [dict(kv.split("=") for kv in l.split()[1:]) for l in open(sys.argv[1]) if l.startswith("ROUND")]
for api in ("sync", "async"):
    v = {w: [float(r["ns_per_pair"]) for r in rows if r["api"] == api and r["lib"] == w and r["ns_per_pair"]]
         for w in ("none", "old", "new")}
    med = {w: statistics.median(x) for w, x in v.items() if x}
    print("SUMMARY api=%s %s" % (api, " ".join("%s median %.0f ns (%.0f-%.0f)" % (w, med[w], min(v[w]), max(v[w]))
                                                for w in med)))
    # Per-round differences, paired in time (each round ran the three back to back).
    rounds = sorted({int(r["round"]) for r in rows if r["api"] == api})
    by = {(int(r["round"]), r["lib"]): float(r["ns_per_pair"]) for r in rows if r["api"] == api and r["ns_per_pair"]}
    d = [by[(k, "new")] - by[(k, "old")] for k in rounds if (k, "new") in by and (k, "old") in by]
    print("SUMMARY api=%s new-old per round: median %+.0f ns, min %+.0f, max %+.0f; traced overhead old %+.0f ns, new %+.0f ns"
          % (api, statistics.median(d), min(d), max(d), med["old"] - med["none"], med["new"] - med["none"]))
PY
