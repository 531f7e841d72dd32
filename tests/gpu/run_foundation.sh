#!/usr/bin/env bash
# Foundation checks on a machine with a real NVIDIA GPU and driver (the device tool's H200):
#  (a) an example built with nvcc's default static cudart, (b) the same with -cudart shared: the
#      snapshot lists exactly what the program says it leaves live, with the right call sites, and
#      stdout / exit status are unchanged by the preload;
#  (c) PyTorch (default caching allocator): at a check point, tracked device bytes ==
#      torch.cuda.memory_reserved(), losses and exit status unchanged;
#  (d) which dlvsym / dlmopen calls cudart and torch make (a probe preloaded after vramtrace).
# Usage: tests/gpu/run_foundation.sh BUILD_DIR OUT_DIR   (BUILD_DIR holds bin/vramtrace and
# lib/libvramtrace.so built on the development machine). Prints PASS/FAIL lines; exits non-zero
# when any check failed.
set -u
B=$(cd "${1:-build}" && pwd)
OUT=${2:-/tmp/vramtrace-gpu}
mkdir -p "$OUT"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
failures=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

echo "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
nvcc --version | tail -1
python3 -c 'import torch; print("torch", torch.__version__, "devices", torch.cuda.device_count())'
"$B/bin/vramtrace" --version

echo "== build the example with nvcc (static and shared cudart)"
flags="-g -O1 -Xcompiler -fno-omit-frame-pointer -I$SRC/include"
nvcc $flags "$SRC/examples/leaky_pipeline.cpp" -o "$OUT/leaky_static" || fail "nvcc static build"
nvcc $flags -cudart shared "$SRC/examples/leaky_pipeline.cpp" -o "$OUT/leaky_shared" || fail "nvcc shared build"
echo "static cudart NEEDED: $(readelf -d "$OUT/leaky_static" | grep -c cudart) cudart entries"

for kind in static shared; do
  echo "== ($kind cudart) example under vramtrace"
  prog="$OUT/leaky_$kind"
  "$prog" >"$OUT/$kind.plain.out" 2>"$OUT/$kind.plain.err"; plain_rc=$?
  VRAMTRACE_DEBUG=1 "$B/bin/vramtrace" run --output "$OUT/$kind.json" -- "$prog" \
    >"$OUT/$kind.traced.out" 2>"$OUT/$kind.traced.err"; traced_rc=$?
  cat "$OUT/$kind.traced.err"
  [ "$plain_rc" = 0 ] && [ "$traced_rc" = "$plain_rc" ] && pass "$kind: exit status $traced_rc unchanged" \
    || fail "$kind: exit status plain=$plain_rc traced=$traced_rc"
  cmp -s "$OUT/$kind.plain.out" "$OUT/$kind.traced.out" && pass "$kind: stdout unchanged" || fail "$kind: stdout differs"
  extra=""; [ $kind = static ] && extra=--static-cudart
  python3 "$SRC/tests/gpu/check_snapshot.py" "$OUT/$kind.json" "$OUT/$kind.plain.out" $extra || failures=$((failures + 1))
  "$B/bin/vramtrace" summary "$OUT/$kind.json" | head -40
done

echo "== PyTorch, default caching allocator"
python3 "$SRC/tests/gpu/torch_checkpoint.py" >"$OUT/torch.plain.out" 2>"$OUT/torch.plain.err"; plain_rc=$?
"$B/bin/vramtrace" run --output "$OUT/torch.json" -- python3 "$SRC/tests/gpu/torch_checkpoint.py" \
  >"$OUT/torch.traced.out" 2>"$OUT/torch.traced.err"; traced_rc=$?
grep -E '^(PASS|FAIL)' "$OUT/torch.traced.err"
grep -q "^FAIL" "$OUT/torch.traced.err" && fail "torch: a check failed"
[ "$plain_rc" = 0 ] && [ "$traced_rc" = 0 ] && pass "torch: exit status 0 both" || fail "torch: exit plain=$plain_rc traced=$traced_rc"
cmp -s "$OUT/torch.plain.out" "$OUT/torch.traced.out" && pass "torch: stdout (losses) unchanged" || fail "torch: stdout differs"
grep -v '^PASS\|^FAIL' "$OUT/torch.traced.err" | head -40

echo "== dlvsym / dlmopen calls made by CUDA programs (probe preloaded after vramtrace)"
gcc -shared -fPIC -O1 "$SRC/tests/gpu/dl_probe.c" -o "$OUT/dl_probe.so" -ldl
for p in "$OUT/leaky_static" "$OUT/leaky_shared"; do
  echo "-- $(basename "$p")"
  LD_PRELOAD="$B/lib/libvramtrace.so $OUT/dl_probe.so" VRAMTRACE_SUMMARY=0 VRAMTRACE_OUTPUT="$OUT/no-such-dir/x.json" \
    "$p" 2>&1 >/dev/null | grep '^dl_probe' | sort | uniq -c
done
echo "-- torch"
LD_PRELOAD="$B/lib/libvramtrace.so $OUT/dl_probe.so" VRAMTRACE_SUMMARY=0 VRAMTRACE_OUTPUT="$OUT/no-such-dir/x.json" \
  python3 "$SRC/tests/gpu/torch_checkpoint.py" 2>&1 >/dev/null | grep '^dl_probe' | sort | uniq -c | sort -rn | head -20

echo "== $failures failure(s)"
exit $((failures > 0))
