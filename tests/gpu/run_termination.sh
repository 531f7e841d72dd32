#!/usr/bin/env bash
# How a run ends on a real GPU (docs/triggers.md, "How a run ends"):
#   - a PyTorch loop ended by Ctrl-C on a pseudo-terminal (KeyboardInterrupt) and by
#     `timeout -s TERM`: death by the same signal traced and untraced; the exit snapshot holds the
#     tensors the script said it held, by their Python lines (termination/check_held.py);
#   - the same under `vramtrace run`: its status and its verdict line;
#   - a CUDA C++ program (tests/e2e/programs/standin_prog_terminate.cpp, built by nvcc) holding
#     100,002 allocations, sent SIGTERM then SIGKILL 5 s later as Slurm does: it must have died by
#     SIGTERM, its report complete, before the SIGKILL.
# Usage: tests/gpu/run_termination.sh CARRY OUT_DIR. PASS/FAIL/INFO lines; non-zero on any FAIL.
set -u
B=$(cd "${1:-.gpu-carry}" && pwd)
OUT=${2:-/tmp/vramtrace-gpu}/termination
rm -rf "$OUT"; mkdir -p "$OUT"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
T=$SRC/tests/gpu/termination
PTY=$SRC/tests/e2e/pty_interrupt.py
LIB=$B/lib/libvramtrace.so
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
failures=0
fail() { failures=$((failures + 1)); }
same() { if [ "$2" = "$3" ]; then echo "PASS $1: $2 traced and untraced"; else echo "FAIL $1: untraced $2, traced $3"; fail; fi; }

echo "== torch: Ctrl-C on a terminal"
d=$OUT/torch-sigint; mkdir -p "$d"; cd "$d"
plain=$(python3 "$PTY" r1 plain.out python3 "$T/torch_loop.py" r1)
traced=$(python3 "$PTY" r2 traced.out env LD_PRELOAD="$LIB" VRAMTRACE_OUTPUT="$d/snap.json" python3 "$T/torch_loop.py" r2)
same torch-sigint "$plain" "$traced"
grep -q KeyboardInterrupt traced.out && echo "PASS torch-sigint: KeyboardInterrupt traceback" || { echo "FAIL torch-sigint: no KeyboardInterrupt"; fail; }
tr -d '\r' <traced.out >traced.txt
python3 "$T/check_held.py" torch-sigint snap.json traced.txt SIGINT "$T/torch_loop.py" || fail
grep "taken at exit" traced.txt | sed 's/^/INFO torch-sigint: /'

echo "== torch: timeout -s TERM"
d=$OUT/torch-sigterm; mkdir -p "$d"; cd "$d"
# 15 s: the loop holds everything within a few seconds of its start, then sleeps.
timeout -s TERM 15 python3 "$T/torch_loop.py" r1 >plain.out 2>plain.err; prc=$?
LD_PRELOAD="$LIB" VRAMTRACE_OUTPUT="$d/snap.json" timeout -s TERM 15 python3 "$T/torch_loop.py" r2 >traced.out 2>traced.err; trc=$?
[ -e r2 ] || { echo "FAIL torch-sigterm: the loop was not ready within 15 s"; fail; }
same torch-sigterm "exit $prc" "exit $trc"
python3 "$T/check_held.py" torch-sigterm snap.json traced.out SIGTERM "$T/torch_loop.py" || fail

echo "== torch: vramtrace run, Ctrl-C"
d=$OUT/torch-run; mkdir -p "$d"; cd "$d"
run=$(python3 "$PTY" r1 run.out "$B/bin/vramtrace" run -o "$d/snap.json" -- python3 "$T/torch_loop.py" r1)
[ "$run" = "exited 130" ] && echo "PASS torch-run: run returned 130" || { echo "FAIL torch-run: $run"; fail; }
tr -d '\r' <run.out >run.txt
python3 "$T/check_held.py" torch-run snap.json run.txt SIGINT "$T/torch_loop.py" || fail
grep "^vramtrace: wrote" run.txt | sed 's/^/INFO torch-run verdict: /'
grep -q "^vramtrace: wrote $d/snap.json (peak .* on cuda:0; 1 process traced); python3 was ended by SIGINT$" run.txt &&
  echo "PASS torch-run: verdict line" || { echo "FAIL torch-run: no verdict line"; tail -n 2 run.txt; fail; }

echo "== CUDA C++: SIGTERM, then SIGKILL 5 s later (Slurm's KillWait)"
d=$OUT/cpp-slurm; mkdir -p "$d"; cd "$d"
nvcc -g -O1 -cudart shared -Xcompiler -fno-omit-frame-pointer -Xcompiler -fno-inline -I"$SRC/tests/e2e/programs" \
  -x cu "$SRC/tests/e2e/programs/standin_prog_terminate.cpp" -o prog || { echo "FAIL nvcc"; fail; }
export STANDIN_TERMINATE_EXTRA=100000
for kind in plain traced; do
  rm -f ready
  if [ $kind = traced ]; then LD_PRELOAD="$LIB" VRAMTRACE_OUTPUT="$d/snap.json" ./prog many ready >$kind.out 2>$kind.err &
  else ./prog many ready >$kind.out 2>$kind.err & fi
  pid=$!
  for i in $(seq 600); do [ -e ready ] && break; sleep 0.1; done
  t0=$(date +%s%N); kill -TERM "$pid"; ( sleep 5; kill -KILL "$pid" 2>/dev/null ) & killer=$!
  wait "$pid"; rc=$?; ms=$(( ($(date +%s%N) - t0) / 1000000 )); kill "$killer" 2>/dev/null
  eval "${kind}_rc=$rc"; echo "INFO cpp-slurm $kind: status $rc, $ms ms from SIGTERM to death"
done
same cpp-slurm "status $plain_rc" "status $traced_rc"
[ "$traced_rc" = 143 ] && echo "PASS cpp-slurm: died by SIGTERM before the SIGKILL" || { echo "FAIL cpp-slurm: status $traced_rc"; fail; }
python3 "$T/check_held.py" cpp-slurm snap.json traced.out SIGTERM || fail
unset STANDIN_TERMINATE_EXTRA
echo "== $failures failure(s)"
exit $((failures > 0))
