#!/usr/bin/env bash
# The CUPTI backend against the preload hooks on a real GPU (issue: CUPTI injection backend). Each
# program runs untraced, under `vramtrace run` (preload) and under `vramtrace run --backend=cupti`:
# exit status and stdout must be the same three times, the CUPTI run must really have been recorded
# by CUPTI (VRAMTRACE_DEBUG's "CUPTI backend: subscribed" line, no fallback), and the two snapshots
# must list the same allocations (address, size, device, kind) with the same call sites
# (compare_backends.py). Then the wall time of each, best of 3, side by side.
# Programs: tests/gpu/coverage/families.cu (static and shared cudart) and PyTorch in its four
# allocator modes (tests/gpu/frameworks/torch_modes.py).
# Usage: tests/gpu/run_cupti.sh BUILD_DIR OUT_DIR [families|torch|all]. Prints PASS/FAIL/INFO;
# non-zero on failure. (Each torch mode runs 12 times: split the two halves under a 10-minute limit.)
set -u
B=$(cd "${1:-build}" && pwd)
OUT=${2:-/tmp/vramtrace-gpu}/cupti
WHICH=${3:-all}
mkdir -p "$OUT"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONPATH="$SRC/tests/gpu/frameworks${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
failures=0
timings=()
# Address space randomisation off for the compared runs, so that host-pinned (mmap'ed) addresses
# repeat from run to run as device addresses do (setarch from util-linux; plain runs without it).
NR=(); setarch "$(uname -m)" -R true 2>/dev/null && NR=(setarch "$(uname -m)" -R)

best_of_3() { # prints the best wall time of TIMING_RUNS (default 3) runs of "$@", in seconds
  python3 - "$@" <<'PY'
import os, subprocess, sys, time
best = None
for _ in range(int(os.environ.get("TIMING_RUNS", "3"))):
    t0 = time.monotonic()
    subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    d = time.monotonic() - t0
    best = d if best is None else min(best, d)
print("%.3f" % best)
PY
}

case_() { # name, env assignments..., --, command...
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  echo "== $name"
  env "${envs[@]}" "$@" >"$OUT/$name.plain.out" 2>"$OUT/$name.plain.err"; local prc=$?
  env "${envs[@]}" VRAMTRACE_SUMMARY=0 "${NR[@]}" "$B/bin/vramtrace" run --output "$OUT/$name.preload.json" -- "$@" \
    >"$OUT/$name.preload.out" 2>"$OUT/$name.preload.err"; local lrc=$?
  env "${envs[@]}" VRAMTRACE_SUMMARY=0 VRAMTRACE_DEBUG=1 "${NR[@]}" "$B/bin/vramtrace" run --backend=cupti \
    --output "$OUT/$name.cupti.json" -- "$@" >"$OUT/$name.cupti.out" 2>"$OUT/$name.cupti.err"; local crc=$?
  if [ $prc = 0 ] && [ $lrc = 0 ] && [ $crc = 0 ]; then echo "PASS $name: exit status 0 untraced, preload, cupti"
  else echo "FAIL $name: exit plain=$prc preload=$lrc cupti=$crc"; tail -5 "$OUT/$name.cupti.err"; failures=$((failures + 1)); fi
  if cmp -s "$OUT/$name.plain.out" "$OUT/$name.preload.out" && cmp -s "$OUT/$name.plain.out" "$OUT/$name.cupti.out"; then
    echo "PASS $name: stdout unchanged by either backend"
  else echo "FAIL $name: stdout differs"; failures=$((failures + 1)); fi
  local sub; sub=$(grep -m1 'CUPTI backend: subscribed' "$OUT/$name.cupti.err")
  if [ -n "$sub" ] && ! grep -q 'using the preload hooks instead\|not tracked' "$OUT/$name.cupti.err"; then
    echo "PASS $name: recorded by CUPTI (${sub#vramtrace: })"
  else
    echo "FAIL $name: the cupti run was not recorded by CUPTI"; grep -i 'cupti' "$OUT/$name.cupti.err" | head -3
    failures=$((failures + 1))
  fi
  python3 "$SRC/tests/gpu/compare_backends.py" "$name" "$OUT/$name.preload.json" "$OUT/$name.cupti.json" \
    || failures=$((failures + 1))
  local tp tl tc
  tp=$(best_of_3 env "${envs[@]}" "$@")
  tl=$(best_of_3 env "${envs[@]}" VRAMTRACE_SUMMARY=0 VRAMTRACE_OUTPUT="$OUT/t.json" "$B/bin/vramtrace" run -- "$@")
  tc=$(best_of_3 env "${envs[@]}" VRAMTRACE_SUMMARY=0 VRAMTRACE_OUTPUT="$OUT/t.json" "$B/bin/vramtrace" run --backend=cupti -- "$@")
  timings+=("$(printf '%-22s %8s %8s %8s' "$name" "$tp" "$tl" "$tc")")
}

for kind in static shared; do
  [ "$WHICH" = torch ] && break
  extra=""; [ $kind = shared ] && extra="-cudart shared"
  nvcc -g -O1 -Xcompiler -fno-omit-frame-pointer $extra "$SRC/tests/gpu/coverage/families.cu" -lcuda -o "$OUT/families_$kind" \
    || { echo "FAIL nvcc $kind"; failures=$((failures + 1)); continue; }
  case_ "families_$kind" -- "$OUT/families_$kind"
done
py=python3
if [ "$WHICH" != families ]; then
case_ torch_default -- $py "$SRC/tests/gpu/frameworks/torch_modes.py" default
case_ torch_expandable PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True -- $py "$SRC/tests/gpu/frameworks/torch_modes.py" expandable_segments
case_ torch_async PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync -- $py "$SRC/tests/gpu/frameworks/torch_modes.py" cudaMallocAsync
case_ torch_nocache PYTORCH_NO_CUDA_MEMORY_CACHING=1 -- $py "$SRC/tests/gpu/frameworks/torch_modes.py" no_caching
fi

echo "== wall time, best of ${TIMING_RUNS:-3} (s)"
printf '%-22s %8s %8s %8s\n' program untraced preload cupti
for t in "${timings[@]}"; do echo "$t"; done
echo "== $failures failure(s)"
exit $((failures > 0))
