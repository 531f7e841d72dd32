#!/usr/bin/env bash
# Device attribution on real GPUs (issue "Two GPUs"). With one GPU it runs what one GPU allows:
#   - a process that only calls torch.cuda.device_count() gets no context from vramtrace
#     (nvidia-smi --query-compute-apps lists it nowhere, traced and untraced alike);
#   - IPC between two processes on GPU 0: the importer lists the import (ipc_imported) and never
#     counts it; `vramtrace merge` of the two snapshots counts the memory once.
# With two GPUs, also:
#   - tests/e2e/programs/standin_prog_two_devices.cpp built by nvcc: `cross` (frees from another
#     device and from a thread with no context, a device-1 stream used from device 0, managed memory)
#     and `only1` (no context on GPU 0: nvidia-smi lists the process on GPU 1 only);
#   - IPC from GPU 0 to an importer on GPU 1.
# Usage: tests/gpu/run_two_gpus.sh CARRY OUT_DIR (CARRY with bin/vramtrace and lib/libvramtrace.so).
set -u
B=$(cd "${1:-.gpu-carry}" && pwd)
OUT=${2:-/tmp/vramtrace-gpu}/two_gpus
mkdir -p "$OUT"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
GPUS=$(nvidia-smi -L | grep -c '^GPU')
echo "INFO $GPUS GPU(s)"
failures=0
fail() { failures=$((failures + 1)); }
# The GPUs (by index) on which nvidia-smi lists a compute process with this pid.
gpus_of() { nvidia-smi --query-compute-apps=pid,gpu_bus_id --format=csv,noheader 2>/dev/null | awk -F', ' -v p="$1" '$1 == p {print $2}' |
  while read -r bus; do nvidia-smi --query-gpu=index,pci.bus_id --format=csv,noheader | awk -F', ' -v b="$bus" 'tolower($2) == tolower(b) {print $1}'; done | sort -u | tr '\n' ' '; }

for traced in 0 1; do
  pre=""; [ $traced = 1 ] && pre=$B/lib/libvramtrace.so
  LD_PRELOAD=$pre python3 -c 'import time, torch; print(torch.cuda.device_count()); time.sleep(6)' >"$OUT/count.$traced.out" 2>&1 &
  pid=$!; sleep 4; on=$(gpus_of $pid); wait $pid
  [ -z "$on" ] && echo "PASS device_count only (traced=$traced): no context on any GPU" || { echo "FAIL device_count only (traced=$traced): a context on GPU $on"; fail; }
done

ipc() { # ipc EXPORT_DEV IMPORT_DEV
  local d=$OUT/ipc-$1-$2; rm -rf "$d"; mkdir -p "$d"
  nvcc -O1 -cudart shared "$SRC/tests/gpu/two_gpus/ipc_pair.cu" -ldl -o "$OUT/ipc_pair" 2>/dev/null || { echo "FAIL nvcc ipc_pair"; fail; return; }
  (cd "$d" && LD_PRELOAD=$B/lib/libvramtrace.so VRAMTRACE_OUTPUT=$d/exporter.json "$OUT/ipc_pair" export $1 "$d" >exp.out 2>exp.err) &
  local e=$!
  (cd "$d" && LD_PRELOAD=$B/lib/libvramtrace.so VRAMTRACE_OUTPUT=$d/importer.json "$OUT/ipc_pair" import $2 "$d" >imp.out 2>imp.err)
  local irc=$?; wait $e; local erc=$?
  [ $irc = 0 ] && [ $erc = 0 ] || { echo "FAIL ipc $1->$2: exit exporter=$erc importer=$irc"; tail -n 3 "$d/exp.err" "$d/imp.err"; fail; return; }
  "$B/bin/vramtrace" merge --output "$d/merged.json" "$d/exporter.json" "$d/importer-open.json" >"$d/merge.out" 2>&1 || { echo "FAIL merge"; fail; }
  python3 - "$d" $1 $2 <<'PY' || failures=$((failures + 1))
import json, sys
d, e, i = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
exp = json.load(open(d + "/exporter.json")); imp = json.load(open(d + "/importer-open.json"))
uuid = {x["device"]: x.get("uuid") for x in exp["devices"]}
imports = [a for a in imp["allocations"] if a["kind"] == "ipc_imported"]
ok = len(imports) == 1 and imports[0]["size"] == 64 << 20 and imports[0]["device"] == e
ok &= all(x["current_bytes"] == 0 for x in imp["devices"])
print("%s ipc %d->%d: the importer lists one import of 64 MiB on device %d, counts nothing (%s)" %
      ("PASS" if ok else "FAIL", e, i, e, [(a["device"], a["size"]) for a in imports]))
m = json.load(open(d + "/merged.json"))
cur = sum(x["current_bytes"] for x in m["devices"])
ok2 = cur == 64 << 20
print("%s ipc %d->%d: merged current bytes %d == the exporter's 64 MiB (UUID %s)" % ("PASS" if ok2 else "FAIL", e, i, cur, uuid.get(e)))
sys.exit(0 if ok and ok2 else 1)
PY
}
ipc 0 0

if [ "$GPUS" -ge 2 ]; then
  nvcc -g -O1 -Xcompiler -fno-omit-frame-pointer -Xcompiler -fno-inline -cudart shared -I"$SRC/tests/e2e/programs" \
    "$SRC/tests/e2e/programs/standin_prog_two_devices.cpp" -lcuda -o "$OUT/two_devices" || { echo "FAIL nvcc"; fail; }
  for s in cross only1; do
    d=$OUT/$s; mkdir -p "$d"
    (cd "$d" && "$OUT/two_devices" $s >plain.out 2>plain.err) || { echo "FAIL $s untraced"; fail; }
    (cd "$d" && LD_PRELOAD=$B/lib/libvramtrace.so VRAMTRACE_OUTPUT=$d/snap.json "$OUT/two_devices" $s >traced.out 2>traced.err) || { echo "FAIL $s traced"; fail; }
    python3 "$SRC/tests/gpu/lifecycle/check_lifecycle.py" "two-devices-$s" "$d/traced.out" "$d/snap.json" "$d" || fail
  done
  ipc 0 1
else
  echo "INFO one GPU: the cross-device scenarios, only1 and IPC across GPUs need two (not run)"
fi
echo "two_gpus: $failures failure(s)"
exit $((failures > 0))
