#!/usr/bin/env bash
# The merge benchmark of docs/performance.md ("Merging the ranks of a job"): RANKS rank snapshots
# as tests/cli/gen_rank_snapshots.cpp writes them (2,000 live allocations over 500 stacks of depth
# 32 and 65,536 events each, rank 17 with a planted 1 GiB call site), then `vramtrace merge` of all
# of them on one core (taskset -c 0) under /usr/bin/time -v: once printing the report, once also
# writing the merged snapshot. Not a test: it prints the figures and the report's imbalance part.
# Usage: bench/merge_ranks.sh [BUILD_DIR [OUT_DIR]]      (defaults: build, /tmp/vramtrace-merge-bench)
# Environment: RANKS (default 1024), SEED (default 1), VT (the vramtrace to time, default
#              BUILD_DIR/bin/vramtrace: another build's gives the figures before a change).
# The inputs take about 12.5 GB for 1024 ranks; they are kept in OUT_DIR/ranks-RANKS-SEED for the
# next run (delete the folder to make them again), the merged snapshot (about 450 MB) is deleted.
set -euo pipefail
B=$(cd "${1:-build}" && pwd)
OUT=${2:-/tmp/vramtrace-merge-bench}
RANKS=${RANKS:-1024}
SEED=${SEED:-1}
VT=${VT:-$B/bin/vramtrace}
RANKS_DIR=$OUT/ranks-$RANKS-$SEED
mkdir -p "$OUT"
if [ ! -f "$RANKS_DIR/done" ]; then
  rm -rf "$RANKS_DIR"
  echo "== writing $RANKS rank snapshots into $RANKS_DIR" >&2
  start=$(date +%s.%N)
  "$B/bin/vt_gen_ranks" "$RANKS_DIR" --ranks "$RANKS" --seed "$SEED" --outlier $((17 % RANKS)) \
    --extra-bytes 1073741824 >"$OUT/generated.txt"
  echo "wrote $(du -sh "$RANKS_DIR" | cut -f1) in $(echo "$(date +%s.%N) - $start" | bc) s" >&2
  touch "$RANKS_DIR/done"
fi
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "inputs: $RANKS files, $(du -sh --exclude done "$RANKS_DIR" | cut -f1)"
# Read once so that both runs find the files in the page cache alike.
cat "$RANKS_DIR"/*.json >/dev/null
figures() { # TIME_FILE
  awk -F': ' '/Elapsed \(wall clock\)/ { w = $2 } /User time/ { u = $2 } /System time/ { s = $2 }
              /Maximum resident set size/ { r = $2 }
              END { printf "wall %s, user %s s, system %s s, max RSS %.1f MiB\n", w, u, s, r / 1024 }' "$1"
}
taskset -c 0 /usr/bin/time -v -o "$OUT/time-report.txt" "$VT" merge "$RANKS_DIR" >"$OUT/report.txt"
echo "merge (report only):          $(figures "$OUT/time-report.txt")"
taskset -c 0 /usr/bin/time -v -o "$OUT/time-output.txt" "$VT" merge -q -o "$OUT/merged.json" "$RANKS_DIR"
echo "merge -o merged.json:         $(figures "$OUT/time-output.txt"), output $(du -h "$OUT/merged.json" | cut -f1)"
rm -f "$OUT/merged.json"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
sed -n '/^imbalance/,/^$/p' "$OUT/report.txt"
