#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer over the whole tree, in one build directory built
# with -fsanitize=address,undefined (no recovery: the first report fails the run):
#
#  1. the unit tests (tracking, report, symbolize, analysis, export, triggers) and the fuzz
#     replays (every seed and kept crashing input of fuzz/, through the commands' input paths);
#  2. the end-to-end tests, with the preload library itself sanitized. The ASan runtime must be the
#     first library of a process, so the tests preload it in front of libvramtrace.so
#     (VT_E2E_PRELOAD_FIRST, read by tests/e2e/harness.cpp); the programs under test, the stand-in
#     driver and the CLI are sanitized as well. What the library does inside other people's
#     processes (hooks, event ring, peak counters, the reporter thread and its futex, the signal,
#     OOM and crash handlers, the snapshot writer) is then checked too.
#
#   tests/sanitizers/run_asan_ubsan.sh [E2E_TEST_SPEC...]
#
# E2E_TEST_SPEC: Catch2 test specs selecting the e2e tests (separate arguments: and; commas: or;
# default: all but those listed in E2E_EXCLUDED below, which cannot work with a sanitized
# library). Example, the round-1 parts:
#   tests/sanitizers/run_asan_ubsan.sh 'triggers:*,crash:*,peaks*,garbage*,many threads*'
#
# Environment: VRAMTRACE_ASAN_BUILD_DIR (default <repo>/build-asan), JOBS (default: number of
# CPUs), SKIP_BUILD=1 (run what is built).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${VRAMTRACE_ASAN_BUILD_DIR:-$repo/build-asan}"
jobs="${JOBS:-$(nproc)}"
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1:exitcode=66 ${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1 ${UBSAN_OPTIONS:-}"

start=$(date +%s)
status=0
units=(vramtrace_tracking_tests vramtrace_python_tests vramtrace_snapshot_tests vramtrace_dump_tests vramtrace_report_tests vramtrace_symbolize_tests vramtrace_analysis_tests
  vramtrace_export_tests vramtrace_triggers_tests)

if [ "${SKIP_BUILD:-0}" != 1 ]; then
  cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS="$san" -DCMAKE_CXX_FLAGS="$san" \
    -DCMAKE_EXE_LINKER_FLAGS="$san" -DCMAKE_SHARED_LINKER_FLAGS="$san" >/dev/null
  cmake --build "$build" -j "$jobs" --target "${units[@]}" vramtrace_fuzz_replay_reader \
    vramtrace_fuzz_replay_commands vramtrace vramtrace_e2e_tests
fi

# 1. Unit tests and fuzz replays.
for t in "${units[@]}"; do
  echo "== $t (ASan+UBSan)"
  opts=$ASAN_OPTIONS
  # The symbolize tests run a non-PIE fixture (vt_symbolize_nopie); LeakSanitizer's tracer crashes
  # on non-PIE executables here ("Tracer caught signal 11 ... LeakSanitizer has encountered a fatal
  # error") before any leak check, so leak detection is off for that executable and what it runs.
  if [ "$t" = vramtrace_symbolize_tests ]; then opts="$opts:detect_leaks=0"; fi
  ASAN_OPTIONS=$opts "$build/bin/$t" || status=$?
done
for t in reader:snapshot_reader commands:command_input; do
  echo "== fuzz replay ${t#*:} (ASan+UBSan)"
  "$build/bin/vramtrace_fuzz_replay_${t%%:*}" "$repo/fuzz/corpus/${t#*:}" "$repo/fuzz/regressions/${t#*:}" || status=$?
done

# 2. End-to-end tests, library sanitized, the ASan runtime preloaded in front of it.
#    - detect_leaks=0: the programs under test and the stand-in driver leak on purpose (what they
#      leave is what the tests look for); the library's own storage is mmap'd, never freed.
#    - handle_segv/sigbus/sigfpe/sigill/abort=0: the crash tests need the fatal signal to reach
#      vramtrace's handler and then kill the process as it would without ASan.
#    - a report still ends the program with status 66, which every test checks (or its stderr).
export VT_E2E_PRELOAD_FIRST="$(${CXX:-g++} -print-file-name=libasan.so)"
e2e_asan="detect_leaks=0:halt_on_error=1:exitcode=66:handle_segv=0:handle_sigbus=0:handle_sigfpe=0"
e2e_asan="$e2e_asan:handle_sigill=0:handle_abort=0"
# Cannot work with a sanitized library, whatever the library does:
#  - `vramtrace run` and the installed tree set LD_PRELOAD to the library alone, without the ASan
#    runtime in front ("ASan runtime does not come first in initial library list");
#  - the fork test's lock-free fixture driver is found through the program's RUNPATH, which
#    LD_LIBRARY_PATH (below) overrides.
# The ASan runtime intercepts dlopen, so the stand-in runtime's dlopen("libcuda.so.1") searches as
# if called from libasan.so, without the runtime's RUNPATH: the stand-in driver's directory goes in
# LD_LIBRARY_PATH.
export LD_LIBRARY_PATH="$build/standin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
#  - the tests that compare LD_PRELOAD itself (the ASan runtime is in it) or whether RTLD_NEXT finds
#    libc's malloc (it finds the ASan runtime's, without the library too).
# (The coverage test with the NVML stand-in puts its folder in front of the inherited LD_LIBRARY_PATH,
# so it runs here too.)
E2E_EXCLUDED=('~*vramtrace run*' '~an installed vramtrace*' '~fork while*' '~exec children are followed*'
  '~VRAMTRACE_FOLLOW=0 traces the first*' '~the dlsym hook keeps RTLD_NEXT*')
spec=("$@")
[ ${#spec[@]} -gt 0 ] || spec=("${E2E_EXCLUDED[@]}")
echo "== vramtrace_e2e_tests (library, programs and CLI ASan+UBSan): ${spec[*]}"
ASAN_OPTIONS=$e2e_asan "$build/bin/vramtrace_e2e_tests" --durations yes "${spec[@]}" || status=$?

end=$(date +%s)
echo "run_asan_ubsan: $((end - start)) s, exit status $status"
exit "$status"
