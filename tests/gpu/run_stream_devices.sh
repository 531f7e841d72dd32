#!/usr/bin/env bash
# The stream devices that the hooks remember (device/stream_devices.h) on a real GPU: for the
# static and the shared cudart, cudaStreamDestroy's driver entry point is vramtrace's hook, and a
# stream-ordered allocation on a stream created after another was destroyed is recorded on the
# device, with stdout and exit status unchanged. Usage: tests/gpu/run_stream_devices.sh CARRY OUT_DIR.
# Prints PASS/FAIL lines; exits non-zero on any FAIL.
set -u
B=$(cd "${1:-.gpu-carry}" && pwd)
OUT=${2:-/tmp/vramtrace-gpu}/streams
mkdir -p "$OUT"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
failures=0
for kind in static shared; do
  extra=""; [ $kind = shared ] && extra="-cudart shared"
  nvcc -O1 $extra "$SRC/tests/gpu/streams/stream_route.cu" -o "$OUT/route_$kind" -ldl \
    || { echo "FAIL nvcc $kind"; failures=$((failures + 1)); continue; }
  d=$OUT/$kind; mkdir -p "$d"
  "$OUT/route_$kind" >"$d/plain.out" 2>"$d/plain.err"; prc=$?
  VRAMTRACE_SUMMARY=0 VRAMTRACE_OUTPUT=$d/snap.json LD_PRELOAD=$B/lib/libvramtrace.so "$OUT/route_$kind" \
    >"$d/traced.out" 2>"$d/traced.err"; trc=$?
  python3 - "$kind" "$d" "$prc" "$trc" <<'PY' || failures=$((failures + 1))
import json, sys
kind, d, prc, trc = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
plain = open(d + "/plain.out").read().split("\n")
traced = open(d + "/traced.out").read().split("\n")
bad = 0
def check(ok, what):
    global bad
    print(("PASS " if ok else "FAIL ") + kind + ": " + what)
    bad += not ok
check(prc == 0 and trc == 0, "exit status 0 untraced and traced (%d, %d)" % (prc, trc))
entry = [l for l in traced if l.startswith("entry ")]
check(entry == ["entry cuStreamDestroy libvramtrace.so"], "traced, cudaStreamDestroy's entry point is the hook: %s" % entry)
check([l for l in plain if l.startswith("entry ")] != entry, "untraced, it is the driver's: %s" % [l for l in plain if l.startswith("entry ")])
# stdout is the same but for the entry line (the same-handle line depends on the driver's heap).
strip = lambda ls: [l for l in ls if not l.startswith(("entry ", "same-handle "))]
check(strip(plain) == strip(traced), "stdout otherwise unchanged")
print("INFO %s: %s" % (kind, [l for l in traced if l.startswith("same-handle")]))
try:
    snap = json.load(open(d + "/snap.json"))
except (OSError, ValueError) as e:
    check(False, "snapshot: %s" % e)
    sys.exit(1)
live = [a for a in snap.get("allocations", []) if a.get("api") in ("cudaMallocAsync", "cuMemAllocAsync")]
check(len(live) == 1 and live[0].get("size") == 1 << 20 and live[0].get("device") == 0,
      "the leaked 1 MiB is the one live stream-ordered record, on device 0: %s" %
      [(a.get("size"), a.get("device")) for a in live])
sys.exit(1 if bad else 0)
PY
done
echo "== $failures failure(s)"
[ $failures = 0 ]
