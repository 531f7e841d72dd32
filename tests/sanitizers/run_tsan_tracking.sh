#!/usr/bin/env bash
# Builds the tracking unit tests (live table, stack depot, raw memory) with ThreadSanitizer in a build
# directory of their own and runs them. Exits non-zero on any test failure or TSan report.
#
#   tests/sanitizers/run_tsan_tracking.sh [catch2 arguments...]
#
# Environment:
#   VRAMTRACE_TSAN_BUILD_DIR  build directory (default: <repo>/build-tsan-tracking)
#   JOBS                      parallel build jobs (default: number of CPUs)
#   VRAMTRACE_STRESS_CYCLES   cycles of the live-table stress test; under TSan the test's default is
#                             1,000,000 instead of 10,000,000
#   TSAN_OPTIONS              appended to the options set below
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${VRAMTRACE_TSAN_BUILD_DIR:-$repo/build-tsan-tracking}"
jobs="${JOBS:-$(nproc)}"
tsan_flags="-fsanitize=thread -fno-omit-frame-pointer"

start=$(date +%s)
cmake -S "$repo" -B "$build" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS="$tsan_flags" \
  -DCMAKE_CXX_FLAGS="$tsan_flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread"
cmake --build "$build" --target vramtrace_tracking_tests -j "$jobs"
built=$(date +%s)

exe="$build/bin/vramtrace_tracking_tests"
# halt_on_error: the first report fails the run; exitcode: a report is never mistaken for a pass.
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"

run() { "$exe" --durations yes "$@"; }
# TSan's shadow layout (gcc 12 / libtsan2) cannot cope with the largest ASLR settings of recent
# kernels ("unexpected memory mapping"); run without randomization there.
if [[ -r /proc/sys/vm/mmap_rnd_bits && $(cat /proc/sys/vm/mmap_rnd_bits) -gt 28 ]] && command -v setarch >/dev/null; then
  run() { setarch "$(uname -m)" -R "$exe" --durations yes "$@"; }
fi

status=0
run "$@" || status=$?
end=$(date +%s)
echo "run_tsan_tracking: build $((built - start)) s, tests $((end - built)) s, exit status $status"
exit "$status"
