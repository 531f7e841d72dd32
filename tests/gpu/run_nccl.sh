#!/usr/bin/env bash
# NCCL on two GPUs (device kind nvidia-h200-x2): torchrun with 2 ranks, each traced into its own
# snapshot (%p in VRAMTRACE_OUTPUT). Usage: tests/gpu/run_nccl.sh BUILD_DIR OUT_DIR
set -u
B=$(cd "${1:-build}" && pwd)
OUT=${2:-/tmp/vramtrace-nccl}
mkdir -p "$OUT"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export PYTHONPATH="$SRC/tests/gpu/frameworks${PYTHONPATH:+:$PYTHONPATH}"
nvidia-smi --query-gpu=index,name,uuid,pci.bus_id --format=csv,noheader
VRAMTRACE_SUMMARY=0 VRAMTRACE_OUTPUT="$OUT/rank-%p.json" LD_PRELOAD="$B/lib/libvramtrace.so" \
  python3 -m torch.distributed.run --nproc-per-node 2 "$SRC/tests/gpu/frameworks/nccl_allreduce.py" \
  >"$OUT/nccl.out" 2>"$OUT/nccl.err"; rc=$?
grep -E '^(PASS|FAIL|INFO)|rank [01] value' "$OUT/nccl.out" "$OUT/nccl.err" | sed 's/^[^:]*://'
echo "exit status: $rc; snapshots: $(ls "$OUT" | grep -c '^rank-.*json$')"
for f in "$OUT"/rank-*.json; do "$B/bin/vramtrace" summary --top 4 "$f" | head -16; done
grep -q '^FAIL' "$OUT/nccl.err" && exit 1
exit $rc
