#!/usr/bin/env bash
# NVTX on a real GPU (docs/nvtx.md): PyTorch with the cudaMallocAsync backend under `vramtrace run`
# (which sets NVTX_INJECTION64_PATH): per-range live bytes equal what the script allocated, the
# autograd thread's gradients under (no range) with their own thread, emit_nvtx()'s aten ranges;
# vramtrace run leaves an NVTX_INJECTION64_PATH that another tool set alone; with nsys present,
# nsys still gets the ranges when it holds NVTX. Prints PASS/FAIL lines and a count.
# Usage: tests/gpu/run_nvtx.sh BUILD_DIR OUT_DIR   (BUILD_DIR: a build, or .gpu-carry)
set -u
B=$(cd "${1:-build}" && pwd)
OUT=${2:-/tmp/vramtrace-nvtx}
mkdir -p "$OUT"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
export PYTHONUNBUFFERED=1 PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync VRAMTRACE_SUMMARY=0
failures=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c 'import torch; print("torch", torch.__version__)'

for mode in ranges emit_nvtx; do
  env -u NVTX_INJECTION64_PATH "$B/bin/vramtrace" run --output "$OUT/exit-$mode-%p.json" -- \
    python3 "$SRC/tests/gpu/nvtx/torch_ranges.py" $mode "$OUT/$mode.json" >"$OUT/$mode.out" 2>"$OUT/$mode.err"
  rc=$?
  grep -E '^(PASS|FAIL|ranges:)' "$OUT/$mode.out"
  failures=$((failures + $(grep -c '^FAIL' "$OUT/$mode.out")))
  [ $rc = 0 ] && pass "$mode: exit status 0" || { fail "$mode: exit status $rc"; tail -5 "$OUT/$mode.err"; }
  [ -s "$OUT/$mode.json" ] && "$B/bin/vramtrace" summary "$OUT/$mode.json" 2>&1 | sed -n '/memory by NVTX range/,/^vramtrace: [a-z]/p' | head -20
done

# Another tool holds NVTX: run says so in one line and leaves the variable alone.
other="$OUT/other-tool/libToolsInjection64.so"
NVTX_INJECTION64_PATH=$other "$B/bin/vramtrace" run --no-summary -- sh -c 'echo "[$NVTX_INJECTION64_PATH]"' \
  >"$OUT/held.out" 2>"$OUT/held.err"
grep -qxF "[$other]" "$OUT/held.out" && pass "an existing NVTX_INJECTION64_PATH is left alone" || fail "NVTX_INJECTION64_PATH replaced: $(cat "$OUT/held.out")"
grep -q "NVTX_INJECTION64_PATH is already set" "$OUT/held.err" && [ "$(wc -l <"$OUT/held.err")" = 1 ] \
  && pass "one line says so" || fail "stderr: $(cat "$OUT/held.err")"

if command -v nsys >/dev/null; then
  nsys profile -t nvtx,cuda -o "$OUT/nsys-run" --force-overwrite true "$B/bin/vramtrace" run --no-summary -- \
    python3 "$SRC/tests/gpu/nvtx/torch_ranges.py" ranges "$OUT/under-nsys.json" >"$OUT/nsys.out" 2>"$OUT/nsys.err"
  grep -q "NVTX_INJECTION64_PATH is already set" "$OUT/nsys.err" && pass "under nsys: run leaves NVTX to nsys" || fail "under nsys: no note"
  nsys stats --report nvtx_sum "$OUT/nsys-run.nsys-rep" 2>/dev/null | grep -q forward \
    && pass "nsys recorded the forward range" || fail "nsys has no forward range"
else
  echo "SKIP nsys not installed"
fi
echo "$failures failure(s)"
[ $failures = 0 ]
