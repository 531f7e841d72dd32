#!/usr/bin/env bash
# Exact accounting when the driver frees or keeps memory without a free call (docs/coverage.md,
# "Context teardown, VMM lifetimes, graph memory"), on a real GPU:
#   - tests/e2e/programs/standin_prog_lifecycle.cpp built by nvcc (shared and static cudart):
#     reset, a destroyed context among two, the last primary release, VMM released while mapped
#     twice / kept by a retained reference / exported and imported, graph memory launched and
#     trimmed, a leak at exit: check_lifecycle.py against the program's own lines; stdout and exit
#     status unchanged;
#   - PyTorch with torch.cuda.graph (default, cudaMallocAsync) and expandable segments: torch_graphs.py;
#   - the nvidia-smi remainder, held vs freed (check_smi.py), for a CUDA C++ program and PyTorch.
# Usage: tests/gpu/run_lifecycle.sh CARRY OUT_DIR [BOUND_MIB]. Prints PASS/FAIL/INFO; exits non-zero
# on any FAIL.
set -u
B=$(cd "${1:-.gpu-carry}" && pwd)
OUT=${2:-/tmp/vramtrace-gpu}/lifecycle
BOUND=$(( ${3:-8} * 1048576 ))
mkdir -p "$OUT"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
L=$SRC/tests/gpu/lifecycle
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
failures=0
fail() { failures=$((failures + 1)); }
for kind in shared static; do
  extra=""; [ $kind = shared ] && extra="-cudart shared"
  nvcc -g -O1 -Xcompiler -fno-omit-frame-pointer -Xcompiler -fno-inline $extra -I"$SRC/tests/e2e/programs" \
    "$SRC/tests/e2e/programs/standin_prog_lifecycle.cpp" -lcuda -ldl -o "$OUT/lifecycle_$kind" \
    || { echo "FAIL nvcc lifecycle $kind"; fail; continue; }
  for s in reset destroy release vmm graph exit; do
    d=$OUT/$kind-$s; mkdir -p "$d"
    (cd "$d" && "$OUT/lifecycle_$kind" $s >plain.out 2>plain.err); prc=$?
    (cd "$d" && VRAMTRACE_OUTPUT=$d/snap.json LD_PRELOAD=$B/lib/libvramtrace.so "$OUT/lifecycle_$kind" $s >traced.out 2>traced.err); trc=$?
    # Whether the driver handed an ended address out again varies from run to run: not compared.
    if [ $prc = 0 ] && [ $trc = 0 ] && cmp -s <(grep -v reused-address "$d/plain.out") <(grep -v reused-address "$d/traced.out"); then
      echo "PASS $kind $s: exit 0 and stdout unchanged"
    else echo "FAIL $kind $s: exit plain=$prc traced=$trc"; tail -n 3 "$d/plain.err" "$d/traced.err"; diff "$d/plain.out" "$d/traced.out" | head -5; fail; fi
    st=""; [ $kind = static ] && st=--static-cudart
    python3 "$L/check_lifecycle.py" "$kind-$s" "$d/traced.out" "$d/snap.json" "$d" $st || fail
    grep -h "reused-address" "$d/traced.out" | sed "s/^/INFO $kind $s: /"
    if [ $kind = shared ]; then # the CUPTI backend: the library loaded by the driver alone
      c=$d/cupti; mkdir -p "$c"
      (cd "$c" && VRAMTRACE_OUTPUT=$c/snap.json CUDA_INJECTION64_PATH=$B/lib/libvramtrace.so VRAMTRACE_DEBUG=1 \
         "$OUT/lifecycle_$kind" $s >traced.out 2>traced.err); crc=$?
      grep -q "CUPTI backend: subscribed" "$c/traced.err" || { echo "FAIL cupti $s: not subscribed"; grep -i cupti "$c/traced.err" | head -3; fail; }
      [ $crc = 0 ] || { echo "FAIL cupti $s: exit $crc"; fail; }
      python3 "$L/check_lifecycle.py" "cupti-$s" "$c/traced.out" "$c/snap.json" "$c" --static-cudart || fail
    fi
  done
done
echo "== the nvidia-smi remainder, CUDA C++"
nvcc -O1 -cudart shared "$L/smi_program.cu" -ldl -o "$OUT/smi_program" || { echo "FAIL nvcc smi"; fail; }
(cd "$OUT" && LD_PRELOAD=$B/lib/libvramtrace.so VRAMTRACE_OUTPUT=$OUT/smi-exit.json ./smi_program >smi.out 2>smi.err) || { echo "FAIL smi_program"; tail -5 "$OUT/smi.err"; fail; }
python3 "$L/check_smi.py" cuda-cpp "$OUT/smi-A.json" "$OUT/smi-B.json" $BOUND || fail
for mode in default cudaMallocAsync expandable; do
  echo "== torch $mode"
  conf=""; [ $mode = cudaMallocAsync ] && conf="backend:cudaMallocAsync"; [ $mode = expandable ] && conf="expandable_segments:True"
  d=$OUT/torch-$mode; mkdir -p "$d"
  (cd "$d" && PYTORCH_CUDA_ALLOC_CONF=$conf python3 "$L/torch_graphs.py" $mode >plain.out 2>plain.err); prc=$?
  (cd "$d" && PYTORCH_CUDA_ALLOC_CONF=$conf VRAMTRACE_OUTPUT=$d/exit.json LD_PRELOAD=$B/lib/libvramtrace.so \
     python3 "$L/torch_graphs.py" $mode >traced.out 2>traced.err); trc=$?
  grep -h "^PASS\|^FAIL\|^INFO" "$d/traced.err"
  grep -q "^FAIL" "$d/traced.err" && fail
  if [ $prc = 0 ] && [ $trc = 0 ] && [ "$(grep checksum "$d/plain.out")" = "$(grep checksum "$d/traced.out")" ]; then
    echo "PASS torch $mode: exit 0, checksum unchanged ($(grep checksum "$d/traced.out"))"
  else echo "FAIL torch $mode: exit plain=$prc traced=$trc"; tail -5 "$d/traced.err"; fail; fi
  grep torch-figure "$d/traced.out" | sed "s/^/INFO torch $mode: /"
  python3 "$L/check_smi.py" torch-$mode "$d/smi-torch-$mode-A.json" "$d/smi-torch-$mode-B.json" $BOUND || fail
done
echo "lifecycle: $failures failure(s)"
exit $((failures > 0))
