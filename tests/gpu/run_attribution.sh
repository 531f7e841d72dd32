#!/usr/bin/env bash
# Framework attribution on a real GPU (docs/attribution.md): PyTorch in three allocator modes, CuPy
# and JAX, each under vramtrace with a snapshot at a checkpoint. Prints the summary of each
# checkpoint (call sites, categories) and, for PyTorch, checks the categories of the tensors the
# script knows (tests/gpu/attribution/check_categories.py).
# Usage: tests/gpu/run_attribution.sh BUILD_DIR OUT_DIR
set -u
B=$(cd "${1:-build}" && pwd)
OUT=${2:-/tmp/vramtrace-attribution}
mkdir -p "$OUT"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
A=$SRC/tests/gpu/attribution
export PYTHONUNBUFFERED=1 VRAMTRACE_SUMMARY=0 VRAMTRACE_EVENTS=4096
failures=0
run() { # name, env..., --, command...
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  env "${envs[@]}" "$B/bin/vramtrace" run --output "$OUT/$name.exit.json" -- "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
  local rc=$?
  echo "== $name: exit $rc"; grep -E '^(PASS|FAIL|INFO)' "$OUT/$name.err"
  [ "$rc" = 0 ] || { failures=$((failures+1)); tail -5 "$OUT/$name.err"; }
  if [ -f "$OUT/$name.checkpoint.json" ]; then
    "$B/bin/vramtrace" summary --top 12 "$OUT/$name.checkpoint.json" >"$OUT/$name.summary.txt" 2>&1
    grep -A12 'top call sites\|memory by category' "$OUT/$name.summary.txt" | grep -v '^--$' | head -60
  fi
}
run torch_nocache PYTORCH_NO_CUDA_MEMORY_CACHING=1 -- python3 "$A/torch_categories.py" "$OUT" torch_nocache
run torch_async PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync -- python3 "$A/torch_categories.py" "$OUT" torch_async
run torch_default -- python3 "$A/torch_categories.py" "$OUT" torch_default
run cupy -- python3 "$A/cupy_jax_stacks.py" "$OUT" cupy
run jax XLA_PYTHON_CLIENT_ALLOCATOR=platform -- python3 "$A/cupy_jax_stacks.py" "$OUT" jax
for m in torch_nocache torch_async torch_default; do
  python3 "$A/check_categories.py" "$OUT/$m.checkpoint.json" "$OUT/$m.truth.json" "$OUT/$m.summary.txt" ||
    failures=$((failures+1))
done
# The categories in the memory_viz pickle: PyTorch's own viewer code opens it.
"$B/bin/vramtrace" export --format pickle -o "$OUT/torch_default.pickle" "$OUT/torch_default.checkpoint.json" &&
  python3 "$SRC/tests/gpu/check_memory_viz.py" "$OUT/torch_default.pickle" "$OUT" || failures=$((failures+1))
echo "== $failures failure(s)"
exit $((failures > 0))
