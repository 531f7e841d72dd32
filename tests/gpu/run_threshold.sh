#!/usr/bin/env bash
# The VRAMTRACE_WARN_BYTES warning on a real GPU while the program goes on allocating right after
# the crossing (lib/triggers/crossing_live_set.h): PyTorch without its caching allocator (one
# cudaMalloc per tensor) holds 768 MiB, then 512 MiB crosses 1 GiB; the script at once frees the
# 512 MiB and allocates and frees 64 MiB 200 times. The one warning must list both tensors of the
# crossing (the 512 MiB one is gone when the reporter reads the live table) under "top call sites:"
# (the rebuilt live set, not the later one). Prints PASS/FAIL lines and "== N failure(s)".
# Usage: tests/gpu/run_threshold.sh BUILD_DIR OUT_DIR   (BUILD_DIR as for run_foundation.sh)
set -u
B=$(cd "${1:-build}" && pwd)
OUT=${2:-/tmp/vramtrace-gpu}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
failures=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
VT="$B/bin/vramtrace"
d="$OUT/threshold"; mkdir -p "$d"
cat >"$d/churn.py" <<'PY'
import torch
MiB = 1 << 20
a = torch.empty(768 * MiB, dtype=torch.uint8, device="cuda")
b = torch.empty(512 * MiB, dtype=torch.uint8, device="cuda")
del b
for _ in range(200):
    c = torch.empty(64 * MiB, dtype=torch.uint8, device="cuda")
    del c
torch.cuda.synchronize()
print("done", a.numel())
PY
for events in 65536 0; do
  echo "== VRAMTRACE_EVENTS=$events"
  PYTORCH_NO_CUDA_MEMORY_CACHING=1 python3 "$d/churn.py" >"$d/plain.out" 2>"$d/plain.err"; prc=$?
  PYTORCH_NO_CUDA_MEMORY_CACHING=1 VRAMTRACE_WARN_BYTES=1GiB VRAMTRACE_SUMMARY=0 VRAMTRACE_EVENTS=$events \
    "$VT" run --output "$d/snap-$events.json" -- python3 "$d/churn.py" >"$d/traced.out" 2>"$d/traced-$events.err"; trc=$?
  [ $prc = 0 ] && [ $trc = 0 ] && pass "exit status 0 traced and untraced" || fail "exit plain=$prc traced=$trc"
  cmp -s "$d/plain.out" "$d/traced.out" && pass "stdout unchanged" || fail "stdout differs"
  grep -A6 'crossed VRAMTRACE_WARN_BYTES' "$d/traced-$events.err"
  n=$(grep -c 'crossed VRAMTRACE_WARN_BYTES=1.00 GiB (1073741824 B)' "$d/traced-$events.err")
  [ "$n" = 1 ] && pass "one threshold warning" || fail "$n threshold warnings"
  if [ $events = 0 ]; then
    # No history: the rebuild cannot be checked, and the warning must say that its sites are later.
    grep -q 'the live set moved on before it could be read, so these are the top call sites [0-9]* ms after the crossing' \
      "$d/traced-$events.err" && pass "without history: the warning says its sites are of a later moment" \
      || fail "without history: no 'moved on' text"
    continue
  fi
  grep -q 'live; top call sites:$' "$d/traced-$events.err" && pass "the crossing's live set was rebuilt" \
    || fail "the warning does not list the crossing's live set"
  # One site line each, or one line for both when their stacks are the same (no Python frames).
  if grep -q '^vramtrace:   768.00 MiB (805306368 B) in 1 allocation at ' "$d/traced-$events.err" &&
     grep -q '^vramtrace:   512.00 MiB (536870912 B) in 1 allocation at ' "$d/traced-$events.err"; then
    pass "768 MiB and 512 MiB tensors listed (the 512 MiB one freed right after the crossing)"
  elif grep -q '^vramtrace:   1.25 GiB (1342177280 B) in 2 allocations at ' "$d/traced-$events.err"; then
    pass "768 MiB and 512 MiB tensors listed as one site (the 512 MiB one freed right after the crossing)"
  else
    fail "the crossing's two tensors are not listed"
  fi
  grep -q '^vramtrace:   64.00 MiB' "$d/traced-$events.err" && fail "a 64 MiB tensor of after the crossing listed" \
    || pass "no allocation of after the crossing listed"
done
echo "== $failures failure(s)"
[ $failures = 0 ]
