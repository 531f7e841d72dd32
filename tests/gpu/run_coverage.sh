#!/usr/bin/env bash
# The allocation families of the coverage issue on a real GPU: tests/gpu/coverage/families.cu built
# with the static and the shared cudart, run under vramtrace; the snapshot must list exactly what the
# program says it left live (check_snapshot.py), graph memory listed but not counted, the created
# pool's used bytes read at dump time, and the counted device bytes equal to the sum of the program's
# own list. Usage: tests/gpu/run_coverage.sh BUILD_DIR OUT_DIR. Prints PASS/FAIL; non-zero on failure.
set -u
B=$(cd "${1:-build}" && pwd)
OUT=${2:-/tmp/vramtrace-gpu}/coverage
mkdir -p "$OUT"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
failures=0
for kind in static shared; do
  echo "== coverage families ($kind cudart)"
  extra=""; [ $kind = shared ] && extra="-cudart shared"
  nvcc -g -O1 -Xcompiler -fno-omit-frame-pointer $extra "$SRC/tests/gpu/coverage/families.cu" -lcuda -o "$OUT/families_$kind" \
    || { echo "FAIL nvcc $kind"; failures=$((failures + 1)); continue; }
  "$OUT/families_$kind" >"$OUT/$kind.plain.out" 2>&1; prc=$?
  "$B/bin/vramtrace" run --output "$OUT/$kind.json" -- "$OUT/families_$kind" >"$OUT/$kind.traced.out" 2>"$OUT/$kind.traced.err"; trc=$?
  [ $prc = 0 ] && [ $trc = 0 ] && echo "PASS $kind: exit status 0 traced and untraced" || { echo "FAIL $kind: exit plain=$prc traced=$trc"; cat "$OUT/$kind.plain.out" "$OUT/$kind.traced.err" | tail -20; failures=$((failures + 1)); }
  cmp -s "$OUT/$kind.plain.out" "$OUT/$kind.traced.out" && echo "PASS $kind: stdout unchanged" || { echo "FAIL $kind: stdout differs"; failures=$((failures + 1)); }
  s=""; [ $kind = static ] && s=--static-cudart
  python3 "$SRC/tests/gpu/check_snapshot.py" "$OUT/$kind.json" "$OUT/$kind.plain.out" $s || failures=$((failures + 1))
  python3 - "$OUT/$kind.json" "$OUT/$kind.plain.out" <<'PY' || failures=$((failures + 1))
import json, sys
snap = json.load(open(sys.argv[1])); out = open(sys.argv[2]).read().splitlines()
want_used = [int(l.split()[1]) for l in out if l.startswith("pool-used ")][0]
pools = snap.get("pools", [])
for p in pools: print("   pool", p)
created = [p for p in pools if not p.get("is_default") and not p.get("is_graph_memory") and p["device"] == 0]
ok = len(created) == 1 and created[0]["used_bytes"] == want_used
print("%s created pool: used_bytes %s == %d (read from the pool's attributes at the dump)" % ("PASS" if ok else "FAIL", [p["used_bytes"] for p in created], want_used))
dev0 = [d for d in snap["devices"] if d["device"] == 0][0]
want = sum(int(l.split()[1]) for l in out if l.startswith("expect-live ") and l.split()[3] == "0")
ok2 = dev0["current_bytes"] == want
print("%s device 0 current_bytes %d == sum of the program's expect-live lines %d (graph memory not counted)" % ("PASS" if ok2 else "FAIL", dev0["current_bytes"], want))
est = sorted(a["api"] for a in snap["allocations"] if a.get("size_is_estimate"))
print("INFO size_is_estimate on:", est)
sys.exit(0 if ok and ok2 else 1)
PY
  "$B/bin/vramtrace" summary "$OUT/$kind.json" | head -60
done
echo "== $failures failure(s)"
exit $((failures > 0))
