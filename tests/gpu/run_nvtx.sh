#!/usr/bin/env bash
# NVTX on a real GPU (docs/nvtx.md): PyTorch with the cudaMallocAsync backend under `vramtrace run`
# (which sets NVTX_INJECTION64_PATH): per-range live bytes equal what the script allocated, the
# autograd thread's gradients under (no range) with their own thread, emit_nvtx()'s aten ranges;
# the same range_push loop under --backend=cupti, NVTX through CUPTI's NVTX callbacks, with the same
# per-range bytes as the preload run; vramtrace run leaves an NVTX_INJECTION64_PATH that another
# tool set alone; with nsys present, nsys still gets the ranges when it holds NVTX. Prints PASS/FAIL
# lines and a count.
# Usage: tests/gpu/run_nvtx.sh BUILD_DIR OUT_DIR   (BUILD_DIR: a build, or .gpu-carry)
set -u
B=$(cd "${1:-build}" && pwd)
OUT=${2:-/tmp/vramtrace-nvtx}
mkdir -p "$OUT"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
export PYTHONUNBUFFERED=1 PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync VRAMTRACE_SUMMARY=0
failures=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c 'import torch; print("torch", torch.__version__)'

for mode in ranges emit_nvtx; do
  env -u NVTX_INJECTION64_PATH "$B/bin/vramtrace" run --output "$OUT/exit-$mode-%p.json" -- \
    python3 "$SRC/tests/gpu/nvtx/torch_ranges.py" $mode "$OUT/$mode.json" >"$OUT/$mode.out" 2>"$OUT/$mode.err"
  rc=$?
  grep -E '^(PASS|FAIL|ranges:)' "$OUT/$mode.out"
  failures=$((failures + $(grep -c '^FAIL' "$OUT/$mode.out")))
  [ $rc = 0 ] && pass "$mode: exit status 0" || { fail "$mode: exit status $rc"; tail -5 "$OUT/$mode.err"; }
  [ -s "$OUT/$mode.json" ] && "$B/bin/vramtrace" summary "$OUT/$mode.json" 2>&1 | sed -n '/memory by NVTX range/,/^vramtrace: [a-z]/p' | head -20
done

# The CUPTI backend: the same range_push loop under `vramtrace run --backend=cupti`, where NVTX is
# handed to the libcupti the backend subscribes to and comes through CUPTI's NVTX callbacks
# (docs/nvtx.md). The script's own checks must pass again, the route must really be CUPTI's (the
# debug lines; no fallback), and the per-range live bytes must equal the preload run's exactly.
env -u NVTX_INJECTION64_PATH VRAMTRACE_DEBUG=1 "$B/bin/vramtrace" run --backend=cupti --output "$OUT/exit-cupti-%p.json" -- \
  python3 "$SRC/tests/gpu/nvtx/torch_ranges.py" ranges "$OUT/ranges-cupti.json" >"$OUT/ranges-cupti.out" 2>"$OUT/ranges-cupti.err"
rc=$?
grep -E '^(PASS|FAIL)' "$OUT/ranges-cupti.out" | sed 's/^\(PASS\|FAIL\) /\1 cupti: /'
failures=$((failures + $(grep -c '^FAIL' "$OUT/ranges-cupti.out")))
[ $rc = 0 ] && pass "cupti: exit status 0" || { fail "cupti: exit status $rc"; tail -5 "$OUT/ranges-cupti.err"; }
route=$(grep -m1 'NVTX: handed to CUPTI' "$OUT/ranges-cupti.err")
sub=$(grep -m1 'CUPTI backend: subscribed' "$OUT/ranges-cupti.err")
if [ -n "$route" ] && [ -n "$sub" ] && ! grep -q 'using the preload hooks instead\|not tracked\|NVTX calls are not followed\|takes NVTX.s calls itself' "$OUT/ranges-cupti.err"; then
  pass "cupti: NVTX through CUPTI (${route#vramtrace: debug: }; ${sub#vramtrace: debug: })"
else
  fail "cupti: NVTX did not go through CUPTI"; grep -i -E 'cupti|nvtx' "$OUT/ranges-cupti.err" | head -5
fi
if [ -s "$OUT/ranges.json" ] && [ -s "$OUT/ranges-cupti.json" ]; then
  python3 - "$OUT/ranges.json" "$OUT/ranges-cupti.json" <<'PY'
import json, sys
def by_range(path):
    s = json.load(open(path))
    names = {r["id"]: " > ".join((d + ":" if d else "") + n for d, n in zip(r["domains"], r["names"]))
             for r in s.get("nvtx_ranges", [])}
    out = {}
    for a in s["allocations"]:
        if a["kind"] != "device":
            continue
        key = names.get(a.get("range", 0), "(no range)")
        out[key] = out.get(key, 0) + a["size"]
    return out
pre, cup = by_range(sys.argv[1]), by_range(sys.argv[2])
named = {k: v for k, v in pre.items() if k != "(no range)"}
ok = bool(named) and all(cup.get(k) == v for k, v in named.items()) and set(named) == {k for k in cup if k != "(no range)"}
print(("PASS" if ok else "FAIL") + " cupti: per-range live bytes equal the preload run's: preload %s, cupti %s" %
      (sorted(named.items()), sorted((k, v) for k, v in cup.items() if k != "(no range)")))
sys.exit(0 if ok else 1)
PY
  [ $? = 0 ] || failures=$((failures + 1))
else
  fail "cupti: a snapshot is missing (ranges.json, ranges-cupti.json)"
fi
[ -s "$OUT/ranges-cupti.json" ] && "$B/bin/vramtrace" summary "$OUT/ranges-cupti.json" 2>&1 | sed -n '/memory by NVTX range/,/^vramtrace: [a-z]/p' | head -12

# Another tool holds NVTX: run says so in one line and leaves the variable alone.
other="$OUT/other-tool/libToolsInjection64.so"
NVTX_INJECTION64_PATH=$other "$B/bin/vramtrace" run --no-summary -- sh -c 'echo "[$NVTX_INJECTION64_PATH]"' \
  >"$OUT/held.out" 2>"$OUT/held.err"
grep -qxF "[$other]" "$OUT/held.out" && pass "an existing NVTX_INJECTION64_PATH is left alone" || fail "NVTX_INJECTION64_PATH replaced: $(cat "$OUT/held.out")"
grep -q "NVTX_INJECTION64_PATH is already set" "$OUT/held.err" && [ "$(wc -l <"$OUT/held.err")" = 1 ] \
  && pass "one line says so" || fail "stderr: $(cat "$OUT/held.err")"

if command -v nsys >/dev/null; then
  nsys profile -t nvtx,cuda -o "$OUT/nsys-run" --force-overwrite true "$B/bin/vramtrace" run --no-summary -- \
    python3 "$SRC/tests/gpu/nvtx/torch_ranges.py" ranges "$OUT/under-nsys.json" >"$OUT/nsys.out" 2>"$OUT/nsys.err"
  grep -q "NVTX_INJECTION64_PATH is already set" "$OUT/nsys.err" && pass "under nsys: run leaves NVTX to nsys" || fail "under nsys: no note"
  nsys stats --report nvtx_sum "$OUT/nsys-run.nsys-rep" 2>/dev/null | grep -q forward \
    && pass "nsys recorded the forward range" || fail "nsys has no forward range"
else
  echo "SKIP nsys not installed"
fi
echo "$failures failure(s)"
[ $failures = 0 ]
