#!/usr/bin/env bash
# Runs every CPU benchmark of bench/ against a build and prints the result tables (markdown) that
# docs/performance.md records. Takes about 5 minutes on 2 cores.
# Usage: bench/run_cpu.sh [BUILD_DIR [OUT_DIR]]     (defaults: build-perf, /tmp/vramtrace-bench)
# Environment: REPS (repetitions per benchmark, default 5), MIN_TIME (seconds each, default 0.2),
#              ROUNDS (alternated untraced/traced processes of the hook benchmark, default 3),
#              THREADS_MAX (table scaling, default: the number of cores).
set -euo pipefail
B=$(cd "${1:-build-perf}" && pwd)
OUT=${2:-/tmp/vramtrace-bench}
SRC=$(cd "$(dirname "$0")/.." && pwd)
REPS=${REPS:-5}
MIN_TIME=${MIN_TIME:-0.2}
THREADS_MAX=${THREADS_MAX:-$(nproc)}
mkdir -p "$OUT"
gb=(--benchmark_repetitions="$REPS" --benchmark_report_aggregates_only=true --benchmark_min_time="$MIN_TIME"
    --benchmark_format=json)
export VRAMTRACE_SUMMARY=0 VRAMTRACE_OUTPUT="$OUT/exit-%p.json"
# The stand-in driver and runtime: found through the programs' RUNPATH in a build tree; in a tree
# packed by bench/gpu/prepare_carry.sh (on a machine with a real driver) they must come first.
export LD_LIBRARY_PATH="$B/standin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

{
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
  echo "kernel: $(uname -r); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "build: $(grep -m1 CMAKE_BUILD_TYPE: "$B/CMakeCache.txt" | cut -d= -f2); commit: $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$SRC" diff --quiet 2>/dev/null || echo ' + local changes')"
} >"$OUT/machine.txt"
cat "$OUT/machine.txt"

echo "== stack capture alone (cached walk vs libunwind), check + timings" >&2
for fp in fp nofp; do
  "$B/bin/bench_capture_$fp" "${gb[@]}" >"$OUT/capture_$fp.json" 2>"$OUT/capture_$fp.err"
  grep -h '^check' "$OUT/capture_$fp.json" >&2 || true
  # the program prints its check line before the JSON document; keep the JSON alone
  sed -i -n '/^{/,$p' "$OUT/capture_$fp.json"
done

echo "== hook path: alloc+free pairs, plain and under LD_PRELOAD, depth 0/16/32/64" >&2
# Untraced and traced processes alternate, ROUNDS times: the report takes the fastest of each, so a
# burst of load from other work on the machine does not land on one side only.
for round in $(seq 1 "${ROUNDS:-3}"); do
  for fp in fp nofp; do
    for d in 0 16 32 64; do
      "$B/bin/bench_hook_pair_$fp" "${gb[@]}" --benchmark_filter="/frames:$d/" >"$OUT/hook_${fp}_plain_${d}_r$round.json"
      LD_PRELOAD="$B/lib/libvramtrace.so" VRAMTRACE_STACK_DEPTH=$d "$B/bin/bench_hook_pair_$fp" "${gb[@]}" \
        --benchmark_filter="/frames:$d/" >"$OUT/hook_${fp}_traced_${d}_r$round.json"
    done
  done
done

echo "== tracking core: table scaling 1..$THREADS_MAX threads, mutex baseline, memory" >&2
"$B/bin/bench_tracking" --threads-max="$THREADS_MAX" "${gb[@]}" >"$OUT/tracking.json"

echo "== dump of 1,000,000 live allocations from 100,000 unique stacks" >&2
rm -f "$OUT/dump.json"
STANDIN_CUDA_DEVICE_BYTES=$((64 << 30)) LD_PRELOAD="$B/lib/libvramtrace.so" \
  "$B/bin/bench_dump_program" 1000000 100000 "$OUT/dump.json" 256 >"$OUT/dump.txt"
ls -l "$OUT/dump.json" | awk '{print "snapshot_bytes=" $5}' >>"$OUT/dump.txt"
start=$(date +%s%N)
"$B/bin/vramtrace" summary "$OUT/dump.json" >"$OUT/summary.txt" 2>&1
end=$(date +%s%N)
echo "summary_s=$(( (end - start) / 1000000 ))e-3" >>"$OUT/dump.txt"
cat "$OUT/dump.txt" >&2

echo "== symbolization of 100,000 unique frames" >&2
"$B/bin/bench_symbolize" "$B/lib/libvramtrace.so" 100000 >"$OUT/symbolize.txt"
cat "$OUT/symbolize.txt" >&2
rm -f "$OUT"/exit-*.json
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/machine.txt"

python3 "$SRC/bench/report.py" "$OUT"
