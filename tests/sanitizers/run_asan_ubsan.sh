#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer over what can carry them, in two build directories:
#
#  1. <build-asan>: the unit tests (tracking, report, symbolize) and the CLI, built with
#     -fsanitize=address,undefined (no recovery: the first report fails the run), and run.
#  2. <build-asan-e2e>: the end-to-end tests. The preload library is built normally there: an
#     ASan-instrumented library cannot be preloaded into programs that are not built with ASan
#     (the ASan runtime must be the first library loaded), and the programs under test stand for
#     other people's binaries, which are not. The CLI that the e2e tests run (`vramtrace run`,
#     `vramtrace summary`) is the sanitized one: the CLI built in step 1 replaces bin/vramtrace
#     there before the tests run. The e2e test driver and the programs are built normally.
#
#   tests/sanitizers/run_asan_ubsan.sh
#
# Environment: VRAMTRACE_ASAN_BUILD_DIR (default <repo>/build-asan), VRAMTRACE_ASAN_E2E_BUILD_DIR
# (default <repo>/build-asan-e2e), JOBS (default: number of CPUs).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${VRAMTRACE_ASAN_BUILD_DIR:-$repo/build-asan}"
build_e2e="${VRAMTRACE_ASAN_E2E_BUILD_DIR:-$repo/build-asan-e2e}"
jobs="${JOBS:-$(nproc)}"
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1:exitcode=66 ${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1 ${UBSAN_OPTIONS:-}"

start=$(date +%s)
status=0

# 1. Unit tests and CLI, sanitized. The shared linker flags stay clean: the preload library is
#    not built in this directory.
cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS="$san" -DCMAKE_CXX_FLAGS="$san" -DCMAKE_EXE_LINKER_FLAGS="$san" >/dev/null
unit_targets=(vramtrace_tracking_tests vramtrace_report_tests vramtrace_symbolize_tests vramtrace)
cmake --build "$build" -j "$jobs" --target "${unit_targets[@]}"
for t in vramtrace_tracking_tests vramtrace_report_tests vramtrace_symbolize_tests; do
  echo "== $t (ASan+UBSan)"
  opts=$ASAN_OPTIONS
  # The symbolize tests run a non-PIE fixture (vt_symbolize_nopie); LeakSanitizer's tracer crashes
  # on non-PIE executables here ("Tracer caught signal 11 ... LeakSanitizer has encountered a fatal
  # error") before any leak check, so leak detection is off for that executable and what it runs.
  if [ "$t" = vramtrace_symbolize_tests ]; then opts="$opts:detect_leaks=0"; fi
  ASAN_OPTIONS=$opts "$build/bin/$t" || status=$?
done

# 2. End-to-end tests: library, programs and test driver normal; the sanitized CLI from step 1 is
#    the one the tests run.
cmake -S "$repo" -B "$build_e2e" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build_e2e" -j "$jobs" --target vramtrace_e2e_tests
cp "$build/bin/vramtrace" "$build_e2e/bin/vramtrace"
echo "== vramtrace_e2e_tests (library normal, CLI ASan+UBSan)"
# The sanitized CLI is a child of the tests: its reports go to stderr and fail the test that ran it
# through a non-zero exit status (exitcode=66), which every CLI test checks.
"$build_e2e/bin/vramtrace_e2e_tests" || status=$?

end=$(date +%s)
echo "run_asan_ubsan: $((end - start)) s, exit status $status"
exit "$status"
