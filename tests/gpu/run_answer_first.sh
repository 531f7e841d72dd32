#!/usr/bin/env bash
# The summary's headline on a real GPU (issue 35, docs/cli.md "The summary"): a PyTorch loop whose
# cache grows every step (answer_first/torch_grow.py), with the default caching allocator and with
# PYTORCH_NO_CUDA_MEMORY_CACHING=1. In each mode the headline must name the cache's line as grew,
# the model's line as held since start and the last step's mark at the peak; the caching mode must
# carry the caching-allocator hint, the other must not. Without the cache the tensors go back to the
# driver as the interpreter ends, so that mode reads a snapshot the script takes at the end of its
# loop (vramtrace_dump) and its exit summary must say the loop's lines are no longer live.
# Prints PASS/FAIL lines and a failure count.
# Usage: tests/gpu/run_answer_first.sh BUILD_DIR OUT_DIR   (BUILD_DIR: a build, or .gpu-carry)
set -u
B=$(cd "${1:-build}" && pwd)
OUT=${2:-/tmp/vramtrace-answer-first}
mkdir -p "$OUT"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
D="$SRC/tests/gpu/answer_first"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
failures=0
fail() { echo "FAIL $1"; failures=$((failures+1)); }

mode() { # name, whether the caching-allocator hint is expected (1/0), whether the exit keeps the
         # loop's memory (1/0: else the snapshot of the loop's end is read), env assignments...
  local name=$1 want_hint=$2 kept=$3; shift 3
  local read="$OUT/$name.json"
  [ "$kept" = 1 ] || read="$OUT/$name.end.json"
  env "$@" VT_DUMP_AT_END="$( [ "$kept" = 1 ] || echo "$OUT/$name.end.json")" \
    "$B/bin/vramtrace" run --output "$OUT/$name.json" -- "$py" "$D/torch_grow.py" \
    >"$OUT/$name.out" 2>"$OUT/$name.err"
  local rc=$?
  if [ "$rc" != 0 ]; then fail "$name: exit status $rc"; tail -5 "$OUT/$name.err" | sed 's/^/    stderr: /'; return; fi
  "$B/bin/vramtrace" summary "$read" >"$OUT/$name.summary" 2>&1 || { fail "$name: summary failed"; return; }
  sed '/---- details ----/q' "$OUT/$name.summary" >"$OUT/$name.headline"
  sed 's/^/    /' "$OUT/$name.headline"
  local held grew mark
  held=$(awk '$1 == "EXPECT" && $2 == "held" {print $3}' "$OUT/$name.out")
  grew=$(awk '$1 == "EXPECT" && $2 == "grew" {print $3}' "$OUT/$name.out")
  mark=$(awk '$1 == "EXPECT" && $2 == "mark" {print $3 " " $4}' "$OUT/$name.out")
  [ -n "$held" ] && [ -n "$grew" ] && [ -n "$mark" ] || { fail "$name: the script printed no EXPECT lines"; return; }
  if grep -q "^vramtrace:   grew: .*$grew" "$OUT/$name.headline"; then echo "PASS $name: grew names $grew"
  else fail "$name: the headline's grew line does not name $grew"; fi
  if grep -q "^vramtrace:   held since start: .*$held" "$OUT/$name.headline"; then echo "PASS $name: held since start names $held"
  else fail "$name: the headline's held-since-start line does not name $held"; fi
  if grep -q "^vramtrace: peak cuda:0: .*during mark '$mark'" "$OUT/$name.headline"; then echo "PASS $name: the peak is during mark '$mark'"
  else fail "$name: the peak is not placed during mark '$mark'"; fi
  local hint=0
  grep -q "^vramtrace: PyTorch's caching allocator: call sites are its segments" "$OUT/$name.headline" && hint=1
  if [ "$hint" = "$want_hint" ]; then echo "PASS $name: caching-allocator hint $( [ "$hint" = 1 ] && echo present || echo absent)"
  else fail "$name: caching-allocator hint $( [ "$hint" = 1 ] && echo present || echo absent), expected the opposite"; fi
  # The library's own summary at exit (stderr): the same headline where the exit keeps the memory;
  # else the loop's lines are not live at exit.
  if [ "$kept" = 1 ]; then
    if grep -q "^vramtrace:   grew: .*$grew" "$OUT/$name.err"; then echo "PASS $name: the exit summary names $grew as grew"
    else fail "$name: the exit summary on stderr does not name $grew as grew"; fi
  else
    if sed -n '/vramtrace: live at exit/,/---- details ----/p' "$OUT/$name.err" | grep -q "$grew\|$held"; then
      fail "$name: the exit summary's live-at-exit lines still name $grew or $held"
    else echo "PASS $name: at exit neither $grew nor $held is live (the tensors went back to the driver)"; fi
  fi
}

"$py" -c 'import torch; print("torch", torch.__version__, torch.cuda.get_device_name(0))'
mode torch_default 1 1
mode torch_nocache 0 0 PYTORCH_NO_CUDA_MEMORY_CACHING=1
echo "== $failures failure(s)"
exit $((failures > 0))
