#!/usr/bin/env bash
# `vramtrace top` beside a GPU process it does not trace (docs/live.md, "GPU processes that are
# not traced"): two PyTorch processes hold a tensor on cuda:0 at a barrier, one under
# `vramtrace run`, one plain. `top --once --json` must list the traced one as traced, the other as
# not traced with NVML bytes equal to what nvidia-smi reports for that pid, and cuda:0's
# untraced_bytes must be the sum of the untraced processes' bytes there. Prints PASS/FAIL lines
# and "== N failure(s)".
# Usage: tests/gpu/run_top_untraced.sh BUILD_DIR OUT_DIR   (BUILD_DIR: a build, or .gpu-carry)
set -u
B=$(cd "${1:-build}" && pwd)
OUT=${2:-/tmp/vramtrace-top-untraced}
mkdir -p "$OUT"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
py=${PYTHON:-python3}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export XDG_RUNTIME_DIR="$OUT/xdg"
rm -rf "$XDG_RUNTIME_DIR" "$OUT"/ready-* "$OUT/go"; mkdir -m 700 "$XDG_RUNTIME_DIR"
. "$(dirname "${BASH_SOURCE[0]}")/../common/check_lines.sh"

"$py" "$SRC/tests/gpu/top_untraced/hold.py" "$OUT/ready-plain" "$OUT/go" 300 >"$OUT/plain.out" 2>"$OUT/plain.err" &
plain_runner=$!
VRAMTRACE_SUMMARY=0 "$B/bin/vramtrace" run --output "$OUT/traced.json" -- \
  "$py" "$SRC/tests/gpu/top_untraced/hold.py" "$OUT/ready-traced" "$OUT/go" 200 >"$OUT/traced.out" 2>"$OUT/traced.err" &
traced_runner=$!
for _ in $(seq 1200); do
  [ -f "$OUT/ready-plain" ] && [ -f "$OUT/ready-traced" ] && break
  sleep 0.1
done
if [ ! -f "$OUT/ready-plain" ] || [ ! -f "$OUT/ready-traced" ]; then
  fail "the processes never reached their barrier"; tail -3 "$OUT/plain.err" "$OUT/traced.err"
  touch "$OUT/go"; wait; finish
fi
plain=$(cat "$OUT/ready-plain"); traced=$(cat "$OUT/ready-traced")
sleep 1 # the traced process's reporter serves from its first allocation; give NVML's figures a moment
"$B/bin/vramtrace" top --once --json >"$OUT/list.json" 2>"$OUT/list.err" || fail "top --once --json: $(head -1 "$OUT/list.err")"
nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits >"$OUT/smi.csv" 2>&1 ||
  fail "nvidia-smi --query-compute-apps: $(head -1 "$OUT/smi.csv")"
"$B/bin/vramtrace" top --once >"$OUT/list.txt" 2>&1
cat "$OUT/list.txt"

"$py" - "$OUT/list.json" "$OUT/smi.csv" "$plain" "$traced" <<'PY' || failures=$((failures+1))
import json, sys
doc = json.load(open(sys.argv[1]))
smi = {}
for line in open(sys.argv[2]):
    parts = [p.strip() for p in line.split(",")]
    if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
        smi[int(parts[0])] = int(parts[1])
plain, traced = int(sys.argv[3]), int(sys.argv[4])
bad = 0
def check(ok, what):
    global bad
    print(("PASS " if ok else "FAIL ") + what)
    bad += 0 if ok else 1
procs = {p["pid"]: p for p in doc.get("processes", [])}
check(traced in procs and procs[traced].get("traced") is True, "the traced process %d is listed as traced" % traced)
check(plain in procs and procs[plain].get("traced") is False, "the plain process %d is listed as not traced" % plain)
check(not any(p["pid"] == traced and p.get("traced") is False for p in doc.get("processes", [])),
      "the traced process is not also listed as untraced")
if plain in procs and procs[plain].get("traced") is False:
    gpus = procs[plain]["gpus"]
    used = sum(g["used_bytes"] or 0 for g in gpus)
    print("INFO untraced %d: NVML %d bytes (%s); nvidia-smi %s MiB" % (plain, used, gpus, smi.get(plain)))
    check(plain in smi, "nvidia-smi lists the plain process")
    if plain in smi:
        # nvidia-smi prints NVML's usedGpuMemory in MiB (bytes // 2^20).
        check(used // 1048576 == smi[plain], "NVML bytes %d are nvidia-smi's %d MiB" % (used, smi[plain]))
        print("INFO NVML's figure %d is %sa whole number of MiB" % (used, "" if used % 1048576 == 0 else "not "))
    check(used >= 300 << 20, "the untraced process holds at least its 300 MiB tensor (%d)" % used)
    g0 = [g for g in doc.get("gpus", []) if any(x["uuid"] == g["uuid"] for x in gpus)]
    if g0:
        want = sum((x["used_bytes"] or 0) for p in doc["processes"] if p.get("traced") is False
                   for x in p["gpus"] if x["uuid"] == g0[0]["uuid"])
        check(g0[0]["untraced_bytes"] == want, "the GPU's untraced_bytes %d are the untraced processes' %d" % (g0[0]["untraced_bytes"], want))
        tr = [d for d in procs[traced]["devices"] if d.get("uuid") == g0[0]["uuid"]] if traced in procs else []
        want_tr = sum(d.get("process_used_bytes", d["current_bytes"]) for d in tr)
        check(g0[0]["traced_bytes"] >= want_tr and want_tr > 0, "the GPU's traced_bytes %d cover the traced process's %d" % (g0[0]["traced_bytes"], want_tr))
        if traced in smi and tr and "process_used_bytes" in tr[0]:
            check(tr[0]["process_used_bytes"] // 1048576 == smi[traced],
                  "the traced process's NVML figure %d is nvidia-smi's %d MiB" % (tr[0]["process_used_bytes"], smi[traced]))
    else:
        check(False, "the GPU of the untraced process is in gpus[]")
sys.exit(1 if bad else 0)
PY
# NVML names a process by its executable, a path or a name (nvidia-smi's "Process name").
grep -qE "^$plain +[^ ]*python[^ ]* +[0-9]+ +[0-9.]+ [KMG]iB +not traced$" "$OUT/list.txt" && pass "the text list shows $plain as not traced" ||
  fail "the text list lacks the untraced row for $plain"

touch "$OUT/go"
wait $plain_runner; rc=$?; [ "$rc" = 0 ] || fail "the plain process exited with $rc"
wait $traced_runner; rc=$?; [ "$rc" = 0 ] || fail "the traced process exited with $rc"
finish
