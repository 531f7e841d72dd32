#!/usr/bin/env bash
# GPU benchmarks of issue 6, on the device tool's H200 (16 cores), in 6 to 8 minutes:
#  (1) alloc_pairs.cu: cudaMallocAsync/cudaFreeAsync and cudaMalloc/cudaFree pairs, untraced and
#      under LD_PRELOAD=libvramtrace.so, static and shared cudart, 1 thread, 32 frames deep: ratio;
#  (2) train_step.py: PyTorch step time with backend:cudaMallocAsync untraced vs traced, and with the
#      default caching allocator untraced vs PyTorch's own _record_memory_history(stacks="python" /
#      "all") (that backend is the one the recorder supports) and vs vramtrace;
#  (3) 1..16 threads allocating at once (alloc_pairs, async), untraced vs traced, and the LiveTable
#      vs mutex + unordered_map scaling from bench_tracking built on the development machine;
#  (0) first, bench/run_cpu.sh on the carried stand-in driver: the CPU tables on 16 idle cores.
# Usage: [SECTIONS="1 2 3 0"] bench/gpu/run_all.sh CARRY_DIR OUT_DIR
#   SECTIONS: which sections run (default all four), e.g. SECTIONS="1 2 3" to skip the CPU suite.
#   CARRY_DIR: what bench/gpu/prepare_carry.sh packed (laid out like a build directory).
# Prints RESULT lines as it goes and the tables at the end (bench/gpu/summarize.py); all output
# also lands in OUT_DIR/results.txt (summarize.py RESULTS_TXT [TRACKING_JSON] makes the tables from
# it anywhere). Order: (1), (2), (3), then (0); traced runs also write their exit snapshot (and
# symbolize it), which takes wall time outside what is measured. Give the run up to 10 minutes.
set -u
B=$(cd "${1:?usage: run_all.sh CARRY_DIR OUT_DIR}" && pwd)
OUT=${2:-/tmp/vramtrace-gpu-bench}
# OUT gets only the results (results.txt, tables.md, cpu_tables.md, stderr.txt, tracking.json):
# binaries, snapshots and the CPU run's files (a 180 MB dump among them) go to WORK.
WORK=${WORK:-/tmp/vramtrace-gpu-bench-work}
mkdir -p "$OUT" "$WORK"
HERE=$(cd "$(dirname "$0")" && pwd)
LIB=$B/lib/libvramtrace.so
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export VRAMTRACE_SUMMARY=0 VRAMTRACE_OUTPUT="$WORK/snap-%p.json"
RES=$OUT/results.txt
: >"$RES"
say() { echo "$*" | tee -a "$RES"; }
# run TAGS TRACED CMD...: runs CMD untraced (TRACED=0) or under LD_PRELOAD=libvramtrace.so (1) and
# records its RESULT line with TAGS and vt=TRACED added.
run() {
  local tags=$1 traced=$2; shift 2
  local line
  if [ "$traced" = 1 ]; then
    line=$(LD_PRELOAD="$LIB" "$@" 2>>"$OUT/stderr.txt" | grep '^RESULT' | tail -1)
  else
    line=$("$@" 2>>"$OUT/stderr.txt" | grep '^RESULT' | tail -1)
  fi
  [ -n "$line" ] || line="RESULT failed=1 cmd=$(basename "$1")"
  say "RESULT $tags ${line#RESULT } vt=$traced"
}

say "== machine"
say "$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)"
say "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
say "$(nvcc --version | tail -1)"
say "$(python3 -c 'import torch; print("torch", torch.__version__)' 2>&1 | tail -1)"

SECTIONS=" ${SECTIONS:-1 2 3 0} "
want() { [[ "$SECTIONS" == *" $1 "* ]]; }

say "== (1) allocation pairs, 1 thread, 32 frames"
nvcc -O2 -std=c++17 "$HERE/alloc_pairs.cu" -o "$WORK/alloc_pairs_static" -lcuda || say "RESULT failed=1 nvcc static"
nvcc -O2 -std=c++17 -cudart shared "$HERE/alloc_pairs.cu" -o "$WORK/alloc_pairs_shared" -lcuda || say "RESULT failed=1 nvcc shared"
for cudart in static shared; do
  want 1 || break
  for api in async sync; do
    pairs=200000; [ $api = sync ] && pairs=20000
    for traced in 0 1 0 1; do   # alternated twice; the summary takes the better of each
      run "bench=pairs cudart=$cudart" $traced "$WORK/alloc_pairs_$cudart" $api $pairs 1 32
    done
  done
done

say "== (2) PyTorch training step"
for size in small medium; do
  want 2 || break
  steps=200; [ $size = medium ] && steps=60
  for traced in 0 1 0 1; do
    PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync run "bench=torch" $traced python3 "$HERE/train_step.py" --size $size --steps $steps
  done
  for traced in 0 1; do
    PYTORCH_CUDA_ALLOC_CONF= run "bench=torch" $traced python3 "$HERE/train_step.py" --size $size --steps $steps
  done
  for rec in python all; do
    PYTORCH_CUDA_ALLOC_CONF= run "bench=torch" 0 python3 "$HERE/train_step.py" --size $size --steps $steps --record $rec
  done
done
# Whether the cudaMallocAsync backend accepts PyTorch's recorder at all.
want 2 && PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync run "bench=torch" 0 python3 "$HERE/train_step.py" --size small --steps 5 --record python
rm -f "$WORK"/snap-*.json
python3 "$HERE/summarize.py" "$RES" >"$OUT/tables.md" 2>/dev/null # a checkpoint, should the run be cut short

say "== (3) threads allocating at once (async, shared cudart, 32 frames)"
for t in 1 2 4 8 16; do
  want 3 || break
  for traced in 0 1; do
    run "bench=threads cudart=shared" $traced "$WORK/alloc_pairs_shared" async 50000 $t 32
  done
done

say "== (0) the CPU benchmarks of bench/run_cpu.sh on the stand-in driver, on this machine (16 cores)"
if ! want 0; then
  say "run_cpu.sh: skipped (SECTIONS)"
elif [ -x "$B/bin/bench_hook_pair_nofp" ] && [ -d "$B/standin" ]; then
  REPS=3 ROUNDS=2 MIN_TIME=0.1 THREADS_MAX=16 bash "$HERE/../run_cpu.sh" "$B" "$WORK/cpu" >"$OUT/cpu_tables.md" 2>>"$OUT/stderr.txt" \
    && say "run_cpu.sh: ok (tables in cpu_tables.md)" || say "RESULT failed=1 run_cpu.sh (see stderr.txt)"
  cp "$WORK/cpu/tracking.json" "$OUT/tracking.json" 2>/dev/null
else
  say "run_cpu.sh: skipped (no bench binaries in $B)"
fi

rm -f "$WORK"/snap-*.json

python3 "$HERE/summarize.py" "$RES" "$OUT/tracking.json" | tee "$OUT/tables.md"
[ -f "$OUT/cpu_tables.md" ] && { echo; echo "## CPU benchmarks on this machine (bench/run_cpu.sh)"; echo; cat "$OUT/cpu_tables.md"; } | tee -a "$OUT/tables.md"
