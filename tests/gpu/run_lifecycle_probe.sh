#!/usr/bin/env bash
# Facts about context teardown and graph memory, asked of the real driver with no vramtrace loaded
# (docs/coverage.md, "What a context teardown ends"): tests/gpu/lifecycle/teardown_probe.cu per
# teardown route and memory kind, and the driver calls PyTorch makes with torch.cuda.graph capture
# (tests/gpu/lifecycle/driver_call_counts.c, a CUPTI injection library).
# Usage: tests/gpu/run_lifecycle_probe.sh OUT_DIR
set -u
OUT=${1:-/tmp/vramtrace-gpu}/probe
mkdir -p "$OUT"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
L=$SRC/tests/gpu/lifecycle
nvcc -cudart shared "$L/teardown_probe.cu" -lcuda -ldl -o "$OUT/teardown_probe" || exit 1
cc -shared -fPIC -I/usr/local/cuda/include "$L/driver_call_counts.c" -ldl -o "$OUT/dcc.so" || exit 1
for route in cudaDeviceReset cuDevicePrimaryCtxReset last-cuDevicePrimaryCtxRelease cuCtxDestroy; do
  for kind in device managed host_pinned host_pinned_portable host_registered array async_default_pool \
      async_created_pool vmm_handle vmm_mapped vmm_released_mapped va_reservation ipc_import graph_memory; do
    timeout 60 "$OUT/teardown_probe" $route $kind 2>&1 | grep -v '^cupti-call'; echo "exit $route $kind ${PIPESTATUS[0]}" | grep -v ' 0$'
  done
done
"$OUT/teardown_probe" exit 2>&1; echo "teardown_probe exit: status $?"
for mode in default cudaMallocAsync; do
  conf=""; [ $mode = cudaMallocAsync ] && conf="backend:cudaMallocAsync"
  echo "== driver calls, torch graphs $mode"
  PYTORCH_CUDA_ALLOC_CONF=$conf CUDA_INJECTION64_PATH=$OUT/dcc.so python3 "$L/torch_graphs.py" $mode 2>&1 | grep -v '^PASS\|^FAIL'
done
echo "== driver calls, cudaDeviceReset program"
cat > "$OUT/rt_reset.cu" <<'CU'
#include <cuda_runtime.h>
#include <cstdio>
int main() { void *p; cudaMalloc(&p, 1 << 20); cudaDeviceReset(); cudaMalloc(&p, 1 << 20); printf("ok\n"); return 0; }
CU
nvcc "$OUT/rt_reset.cu" -o "$OUT/rt_reset_static" && CUDA_INJECTION64_PATH=$OUT/dcc.so "$OUT/rt_reset_static" 2>&1
