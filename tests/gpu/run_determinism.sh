#!/usr/bin/env bash
# Issue 7, "the host's results are unchanged": a PyTorch training loop with a fixed seed and
# deterministic kernels (tests/gpu/determinism/train_fixed_seed.py) run untraced, under
# LD_PRELOAD=libvramtrace.so, and under `vramtrace run` (preload and CUPTI backends), with the
# default caching allocator and with backend:cudaMallocAsync. Every traced run must print the same
# per-step losses (float.hex, bit-exact) and final parameter hash as the untraced run of the same
# allocator, and end with the same exit status (the script exits 7 on purpose).
# Usage: tests/gpu/run_determinism.sh CARRY_DIR OUT_DIR     (CARRY_DIR from tests/gpu/prepare_carry.sh)
# Prints PASS/FAIL lines; exit status 1 when any row fails.
set -u
B=$(cd "${1:?usage: run_determinism.sh CARRY_DIR OUT_DIR}" && pwd)
OUT=${2:?usage: run_determinism.sh CARRY_DIR OUT_DIR}
mkdir -p "$OUT"
HERE=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CUBLAS_WORKSPACE_CONFIG=:4096:8 VRAMTRACE_SUMMARY=0
W=$(mktemp -d)
T=(python3 "$HERE/determinism/train_fixed_seed.py")
fail=0
# run NAME MODE: MODE untraced | preload | run-preload | run-cupti; output in $W/NAME.txt, status in $W/NAME.rc
run() {
  local name=$1 mode=$2
  case $mode in
    untraced) "${T[@]}" >"$W/$name.txt" 2>"$W/$name.err" ;;
    preload) VRAMTRACE_OUTPUT="$W/$name-%p.json" LD_PRELOAD="$B/lib/libvramtrace.so" "${T[@]}" >"$W/$name.txt" 2>"$W/$name.err" ;;
    run-preload) "$B/bin/vramtrace" run -o "$W/$name-%p.json" -- "${T[@]}" >"$W/$name.txt" 2>"$W/$name.err" ;;
    run-cupti) "$B/bin/vramtrace" run --backend=cupti -o "$W/$name-%p.json" -- "${T[@]}" >"$W/$name.txt" 2>"$W/$name.err" ;;
  esac
  echo $? >"$W/$name.rc"
}
for alloc in caching async; do
  if [ $alloc = async ]; then export PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync; else unset PYTORCH_CUDA_ALLOC_CONF; fi
  run "$alloc-untraced" untraced
  base_rc=$(cat "$W/$alloc-untraced.rc")
  steps=$(grep -c '^step ' "$W/$alloc-untraced.txt")
  hash=$(sed -n 's/^params sha256 //p' "$W/$alloc-untraced.txt")
  echo "$alloc untraced: exit status $base_rc, $steps steps, last $(grep '^step ' "$W/$alloc-untraced.txt" | tail -1), params sha256 ${hash:0:16}..."
  if [ "$steps" != 64 ] || [ -z "$hash" ]; then
    echo "FAIL $alloc untraced: the loop did not finish"; sed -n '1,20p' "$W/$alloc-untraced.err"; fail=1; continue
  fi
  for mode in preload run-preload run-cupti; do
    name="$alloc-$mode"
    run "$name" $mode
    rc=$(cat "$W/$name.rc")
    snaps=$(ls "$W/$name"-*.json 2>/dev/null | wc -l)
    # The run must also have traced something: device allocations counted in a snapshot (an exit
    # snapshot is written even when no hook fired, e.g. CUPTI injection that did not take).
    allocs=$(python3 -c 'import json,sys; print(sum(d.get("allocation_count", 0) for f in sys.argv[1:] for d in json.load(open(f)).get("devices", []) if d.get("device", -1) >= 0))' "$W/$name"-*.json 2>/dev/null || echo 0)
    if cmp -s "$W/$alloc-untraced.txt" "$W/$name.txt" && [ "$rc" = "$base_rc" ] && [ "$snaps" -ge 1 ] && [ "${allocs:-0}" -gt 0 ]; then
      echo "PASS $name: 64 losses and the parameter hash bit-identical to untraced, exit status $rc, $snaps snapshot(s) with $allocs device allocations"
    else
      echo "FAIL $name: exit status $rc (untraced $base_rc), snapshots $snaps, device allocations ${allocs:-0}, output diff:"
      diff "$W/$alloc-untraced.txt" "$W/$name.txt" | head -5; sed -n '1,10p' "$W/$name.err"; fail=1
    fi
    grep -h -i 'vramtrace' "$W/$name.err" | head -3
  done
done
cp "$W"/*.txt "$OUT/" 2>/dev/null
rm -rf "$W"
exit $fail
