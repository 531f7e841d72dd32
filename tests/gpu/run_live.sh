#!/usr/bin/env bash
# The live view on a real GPU (docs/live.md): a PyTorch training loop (default caching allocator)
# waits at a barrier while `vramtrace top` reads it. At the barrier the call sites whose stacks
# pass through the caching allocator must hold exactly torch.cuda.memory_reserved() bytes (the
# script prints it), and the TUI, run in tmux, must show the loop's Python lines. Also the
# reading's cost in the program (serve_cpu_ns), as INFO. Prints PASS/FAIL/INFO lines and a count.
# Usage: tests/gpu/run_live.sh BUILD_DIR OUT_DIR   (BUILD_DIR: a build, or .gpu-carry)
set -u
B=$(cd "${1:-build}" && pwd)
OUT=${2:-/tmp/vramtrace-live}
mkdir -p "$OUT"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
D="$SRC/tests/gpu/live"
py=${PYTHON:-python3}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export XDG_RUNTIME_DIR="$OUT/xdg"
rm -rf "$XDG_RUNTIME_DIR" "$OUT/ready" "$OUT/go"; mkdir -m 700 "$XDG_RUNTIME_DIR"
failures=0
fail() { echo "FAIL $*"; failures=$((failures+1)); }

VRAMTRACE_SUMMARY=0 "$B/bin/vramtrace" run --output "$OUT/train.json" -- "$py" "$D/train_barrier.py" "$OUT/ready" "$OUT/go" \
  >"$OUT/train.out" 2>"$OUT/train.err" &
runner=$!
for _ in $(seq 1200); do [ -f "$OUT/ready" ] && break; kill -0 $runner 2>/dev/null || break; sleep 0.1; done
if [ ! -f "$OUT/ready" ]; then
  fail "the training script never reached its barrier"; tail -5 "$OUT/train.err"
  echo "== $failures failure(s)"; exit 1
fi
pid=$(cat "$OUT/ready")
"$B/bin/vramtrace" top --once --json --top 1000 --pid "$pid" >"$OUT/reading.json" 2>"$OUT/reading.err" ||
  fail "top --once --json: $(head -1 "$OUT/reading.err")"
"$py" "$D/check_reading.py" "$OUT/reading.json" "$OUT/train.out" || failures=$((failures+1))
"$B/bin/vramtrace" top --once --pid "$pid" >"$OUT/reading.txt" 2>&1

# The TUI in a 160x50 terminal: the loop's lines are on its screen.
if command -v tmux >/dev/null; then
  T="tmux -S $OUT/tmux.sock -f /dev/null"
  $T new-session -d -x 160 -y 50 -e "XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR" "$B/bin/vramtrace top --pid $pid --top 30; sleep 30"
  sleep 4
  $T capture-pane -p >"$OUT/tui.txt"
  for l in $(awk '/^line /{print $3}' "$OUT/train.out"); do
    base=${l##*/}
    if grep -qF "$base" "$OUT/tui.txt"; then echo "PASS the TUI shows $base"; else echo "INFO the TUI does not show $base"; fi
  done
  grep -qF "train_barrier.py:" "$OUT/tui.txt" || fail "the TUI shows no line of train_barrier.py (screen in $OUT/tui.txt)"
  $T send-keys q; $T kill-server 2>/dev/null
else
  fail "tmux not found: the TUI check cannot run"
fi

touch "$OUT/go"
wait $runner; rc=$?
[ "$rc" = 0 ] || fail "the training script exited with $rc"
[ -z "$(ls -A "$XDG_RUNTIME_DIR/vramtrace" 2>/dev/null)" ] || fail "socket left after exit: $(ls -A "$XDG_RUNTIME_DIR/vramtrace")"
echo "== $failures failure(s)"
exit $((failures > 0))
