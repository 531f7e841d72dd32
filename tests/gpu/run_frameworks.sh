#!/usr/bin/env bash
# The framework matrix on a real GPU (issue: coverage). Each row runs a script twice, untraced and
# under vramtrace, and checks: stdout and exit status unchanged, and the PASS/FAIL lines the script
# prints against the framework's own figures (tests/gpu/frameworks/*.py say which oracle).
# Usage: tests/gpu/run_frameworks.sh BUILD_DIR OUT_DIR
set -u
B=$(cd "${1:-build}" && pwd)
OUT=${2:-/tmp/vramtrace-frameworks}
mkdir -p "$OUT"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export PYTHONPATH="$SRC/tests/gpu/frameworks${PYTHONPATH:+:$PYTHONPATH}"
failures=0

row() { # name, env assignments..., -- , command...
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  env "${envs[@]}" "$@" >"$OUT/$name.plain.out" 2>"$OUT/$name.plain.err"; local prc=$?
  env "${envs[@]}" VRAMTRACE_SUMMARY=0 "$B/bin/vramtrace" run --output "$OUT/$name.json" -- "$@" \
    >"$OUT/$name.traced.out" 2>"$OUT/$name.traced.err"; local trc=$?
  grep -E '^(PASS|FAIL|INFO)' "$OUT/$name.traced.err"
  grep -v -E '^(PASS|FAIL|INFO)' "$OUT/$name.traced.err" | grep -v '^\s*$' | tail -5 | sed 's/^/    stderr: /'
  if [ "$prc" != 0 ] || [ "$trc" != "$prc" ]; then echo "FAIL $name: exit plain=$prc traced=$trc"; failures=$((failures+1)); fi
  cmp -s "$OUT/$name.plain.out" "$OUT/$name.traced.out" || { echo "FAIL $name: stdout differs"; failures=$((failures+1)); }
  grep -q '^FAIL' "$OUT/$name.traced.err" && failures=$((failures+1))
}

py=python3
row torch_default -- $py "$SRC/tests/gpu/frameworks/torch_modes.py" default
row torch_expandable PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True -- $py "$SRC/tests/gpu/frameworks/torch_modes.py" expandable_segments
row torch_async PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync -- $py "$SRC/tests/gpu/frameworks/torch_modes.py" cudaMallocAsync
row torch_nocache PYTORCH_NO_CUDA_MEMORY_CACHING=1 -- $py "$SRC/tests/gpu/frameworks/torch_modes.py" no_caching
row cupy_default -- $py "$SRC/tests/gpu/frameworks/cupy_pools.py" default
row cupy_async -- $py "$SRC/tests/gpu/frameworks/cupy_pools.py" async
row jax_platform XLA_PYTHON_CLIENT_ALLOCATOR=platform -- $py "$SRC/tests/gpu/frameworks/jax_platform.py" platform
row jax_prealloc -- $py "$SRC/tests/gpu/frameworks/jax_platform.py" preallocate
echo "== $failures failure(s)"
exit $((failures > 0))
