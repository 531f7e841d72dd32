#!/usr/bin/env bash
# The Prometheus textfile on a real GPU (docs/monitoring.md): a PyTorch process without the caching
# allocator reads its own textfile while it runs (tests/gpu/prometheus/torch_textfile.py: capacity,
# NVML's figure and the untracked gap against the driver, the Python call sites at their lines,
# the sums); after its normal exit the file says process_up 0 with an end time; a second process
# killed with SIGKILL is marked gone by a third one's sweep. Prints PASS/FAIL lines and a count.
# Usage: tests/gpu/run_prometheus.sh BUILD_DIR OUT_DIR   (BUILD_DIR: a build, or .gpu-carry)
set -u
B=$(cd "${1:-build}" && pwd)
OUT=${2:-/tmp/vramtrace-prometheus}
mkdir -p "$OUT/textfile"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
failures=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
export LD_PRELOAD="$B/lib/libvramtrace.so" VRAMTRACE_SUMMARY=0 VRAMTRACE_PROMETHEUS_PERIOD=0.5 \
  VRAMTRACE_OUTPUT="$OUT/snap-%p.json" PYTORCH_NO_CUDA_MEMORY_CACHING=1
tf="$OUT/textfile/vt-%p.prom"

VRAMTRACE_PROMETHEUS_TEXTFILE=$tf python3 "$SRC/tests/gpu/prometheus/torch_textfile.py" "$tf" \
  >"$OUT/self.out" 2>"$OUT/self.err" &
pid=$!
wait $pid; rc=$?
grep -E '^(PASS|FAIL)' "$OUT/self.out"
failures=$((failures + $(grep -c '^FAIL' "$OUT/self.out")))
[ $rc = 0 ] && pass "torch process exit status 0" || { fail "torch process exit status $rc"; tail -5 "$OUT/self.err"; }
grep -q "^vramtrace_process_up{.*} 0$" "$OUT/textfile/vt-$pid.prom" && pass "after exit: process_up 0" || fail "after exit: no process_up 0"
grep -q "^vramtrace_process_end_time_seconds{" "$OUT/textfile/vt-$pid.prom" && pass "after exit: an end time" || fail "after exit: no end time"

# SIGKILL, then a sweep by the next traced process.
VRAMTRACE_PROMETHEUS_TEXTFILE=$tf python3 -c 'import torch, time; x = torch.empty(1 << 20, device="cuda"); time.sleep(60)' &
victim=$!
for i in $(seq 1 300); do grep -qs "^vramtrace_process_up{.*} 1$" "$OUT/textfile/vt-$victim.prom" && break; sleep 0.1; done
kill -9 $victim; wait $victim 2>/dev/null
grep -q "^vramtrace_process_up{.*} 1$" "$OUT/textfile/vt-$victim.prom" && pass "after SIGKILL: the file still says up 1" || fail "after SIGKILL: file missing or not up 1"
VRAMTRACE_PROMETHEUS_TEXTFILE=$tf python3 -c 'import torch, time; x = torch.empty(1 << 20, device="cuda"); time.sleep(2)'
grep -q "^vramtrace_process_up{.*} 0$" "$OUT/textfile/vt-$victim.prom" && pass "the sweep marked the killed process up 0" || fail "the killed process's file was not marked"
updated=$(sed -n 's/^vramtrace_process_last_update_time_seconds{.*} //p' "$OUT/textfile/vt-$victim.prom")
ended=$(sed -n 's/^vramtrace_process_end_time_seconds{.*} //p' "$OUT/textfile/vt-$victim.prom")
[ -n "$updated" ] && [ "$updated" = "$ended" ] && pass "its end time is its last update ($ended)" || fail "end time $ended, last update $updated"
cp "$OUT/textfile/vt-$pid.prom" "$OUT/torch-final.prom" 2>/dev/null
echo "$failures failure(s)"
[ $failures = 0 ]
