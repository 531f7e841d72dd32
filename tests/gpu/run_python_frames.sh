#!/usr/bin/env bash
# Python frames on a real GPU (issue 9, docs/python-frames.md): a PyTorch training script in each
# allocator mode, driver allocations through ctypes with and without the GIL, a CuPy and a JAX
# script, each under vramtrace; the call site of the largest allocation at the peak must be the
# script line that made it (the script prints that line from its own frame as "EXPECT file:line").
# PyTorch, CuPy and ctypes.CDLL release the GIL around the call that allocates: their Python frames
# come from the struct reader. Prints PASS/FAIL/INFO lines and a failure count.
# Usage: tests/gpu/run_python_frames.sh BUILD_DIR OUT_DIR   (BUILD_DIR: a build, or .gpu-carry)
set -u
B=$(cd "${1:-build}" && pwd)
OUT=${2:-/tmp/vramtrace-python-frames}
mkdir -p "$OUT"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
D="$SRC/tests/gpu/python_frames"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
failures=0

row() { # name, env assignments..., --, script
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  env "${envs[@]}" VRAMTRACE_SUMMARY=0 "$B/bin/vramtrace" run --output "$OUT/$name.json" -- "$py" "$@" \
    >"$OUT/$name.out" 2>"$OUT/$name.err"
  local rc=$?
  if [ "$rc" != 0 ]; then
    echo "FAIL $name: exit status $rc"; tail -5 "$OUT/$name.err" | sed 's/^/    stderr: /'
    failures=$((failures+1)); return
  fi
  # The struct reader (docs/python-frames.md) must have a layout for this Python and agree with
  # the interpreter's API at its cross-check: either failing is one warning line on stderr.
  if grep -E "Python frames: (reading CPython|no struct layout)" "$OUT/$name.err" | sed "s/^/FAIL $name: /" | grep .; then
    failures=$((failures+1))
  fi
  "$py" "$D/check_call_site.py" "$name" "$OUT/$name.json" "$OUT/$name.out" || failures=$((failures+1))
  "$B/bin/vramtrace" summary --top 3 "$OUT/$name.json" >"$OUT/$name.summary" 2>&1
}

"$py" --version
row torch_default -- "$D/train_torch.py"
row torch_expandable PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True -- "$D/train_torch.py"
row torch_async PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync -- "$D/train_torch.py"
row torch_nocache PYTORCH_NO_CUDA_MEMORY_CACHING=1 -- "$D/train_torch.py"
row gil_frames -- "$D/gil_frames.py"
row cupy -- "$D/cupy_frames.py"
row jax XLA_PYTHON_CLIENT_ALLOCATOR=platform -- "$D/jax_frames.py"
# The cost switch: with VRAMTRACE_PYTHON=0 the same run has no Python frames at all.
VRAMTRACE_PYTHON=0 VRAMTRACE_SUMMARY=0 "$B/bin/vramtrace" run --output "$OUT/torch_off.json" -- "$py" "$D/train_torch.py" \
  >"$OUT/torch_off.out" 2>"$OUT/torch_off.err"
if "$py" -c 'import json,sys; s=json.load(open(sys.argv[1])); sys.exit(any(f.get("python") for f in s["frames"]) or "python" in s["process"])' "$OUT/torch_off.json"; then
  echo "PASS torch_off: VRAMTRACE_PYTHON=0 leaves no Python frame"
else
  echo "FAIL torch_off: Python frames with VRAMTRACE_PYTHON=0"; failures=$((failures+1))
fi
echo "== $failures failure(s)"
exit $((failures > 0))
