#!/usr/bin/env bash
# ThreadSanitizer over the preload library inside running programs: the whole tree built with
# -fsanitize=thread in a build directory of its own, the e2e tests run with the TSan runtime
# preloaded in front of the library (VT_E2E_PRELOAD_FIRST, read by tests/e2e/harness.cpp: the
# runtime must be the first library of a process). What this adds to run_tsan_tracking.sh: the
# hooks on many threads, the reporter thread woken by futex from signal handlers and hooks, the
# OOM, signal, threshold, periodic and Prometheus triggers, the crash handler, the peak counters and
# the event ring as the library uses them, and TSan's check that signal handlers call nothing
# unsafe (malloc, locks).
#
#   tests/sanitizers/run_tsan_e2e.sh [E2E_TEST_SPEC...]
#
# E2E_TEST_SPEC: Catch2 test specs (separate arguments: and; commas: or; a comma inside a name is
# written "\,"). Default: the concurrent parts and the code added since round 1 (triggers, crash
# handler, peaks and the event ring, many threads, exit while threads allocate or from a signal
# handler, _exit, garbage settings, device identity/pools/NVML, dlclose and the module registry,
# internal limits, thread churn at a size TSan can hold).
# ("20000 short-lived threads" is left out: TSan cannot map the shadow for that many threads
# here, "ThreadSanitizer failed to allocate ... bytes (errno: 12)", before vramtrace does anything;
# "short-lived threads, a smaller wave" runs the same program with 5000 threads instead.)
#
# Environment: VRAMTRACE_TSAN_BUILD_DIR (default <repo>/build-tsan), JOBS (default: number of
# CPUs), SKIP_BUILD=1 (run what is built), TSAN_OPTIONS (appended), TSAN_FSIZE_TEST=1 (run the
# RLIMIT_FSIZE test too, see below).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${VRAMTRACE_TSAN_BUILD_DIR:-$repo/build-tsan}"
# Absolute: the e2e children run in temporary directories, and LD_LIBRARY_PATH below names a
# folder of the build (a relative one finds no stand-in driver there: cudaErrorInsufficientDriver).
mkdir -p "$build"
build="$(cd "$build" && pwd)"
jobs="${JOBS:-$(nproc)}"
tsan="-fsanitize=thread -fno-omit-frame-pointer"
default_spec='triggers:*,crash:*,peaks*,many threads*,exit() *,_exit()*,garbage*,arrays\, graph memory*'
default_spec="$default_spec"',without NVML*,stream-ordered allocations ask*,a dlclose*,a wrapped event ring*'
default_spec="$default_spec"',stacks the depot*,short-lived threads*'
spec=("$@")
[ ${#spec[@]} -gt 0 ] || spec=("$default_spec")
# The RLIMIT_FSIZE test is left out (a separate spec is "and") unless TSAN_FSIZE_TEST=1. Catch2
# ands it with the last comma-separated alternative of the spec only: the default selection does
# not match that test; a spec given here whose earlier alternatives match it would still run it. Its program starts under `ulimit -f 1`, and TSan's start-up (MapRodata in
# compiler-rt's tsan_platform_linux.cpp) writes a 512 KiB file of shadow markers, $TMPDIR (else /tmp)
# /tsan.rodata.PID, without checking the write, then maps it over the shadow of every read-only
# executable mapping: the limit cuts the file to 1 KiB, and reading the shadow of most code pages is
# SIGBUS (strace: write(3, ..., 524288) = 1024; the SIGBUS in __tsan_read8 under the stack
# capture's read of a code word). TSan's own, not vramtrace's (docs/reliability.md).
# TSAN_FSIZE_TEST=1 runs it with TMPDIR naming a folder that does not exist, where TSan cannot
# create that file and skips MapRodata (in every process of the run; lib/, tools/ and the e2e
# tests do not use TMPDIR):
#   TSAN_FSIZE_TEST=1 tests/sanitizers/run_tsan_e2e.sh 'file size limit (RLIMIT_FSIZE)*'
if [ "${TSAN_FSIZE_TEST:-0}" = 1 ]; then
  export TMPDIR="$build/no-such-dir-for-tsan-rodata"
  rm -rf "$TMPDIR"
else
  spec+=('~file size limit (RLIMIT_FSIZE)*')
fi

start=$(date +%s)
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS="$tsan" \
    -DCMAKE_CXX_FLAGS="$tsan" -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread \
    -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread >/dev/null
  cmake --build "$build" -j "$jobs" --target vramtrace_e2e_tests
fi
built=$(date +%s)

export VT_E2E_PRELOAD_FIRST="$(${CXX:-g++} -print-file-name=libtsan.so)"
# halt_on_error/exitcode: a report ends the program with status 66, which every test checks.
# die_after_fork=0: the fork tests' children start threads, which the stand-in driver allows.
# handle_*=0: the crash tests need the fatal signal to reach vramtrace's handler and then kill the
# process as it would without TSan. suppressions: reports that are not races in vramtrace, each
# with its reason (tsan_suppressions.txt).
tsan_opts="halt_on_error=1 exitcode=66 die_after_fork=0 second_deadlock_stack=1 handle_segv=0 handle_sigbus=0"
tsan_opts="$tsan_opts handle_sigfpe=0 handle_sigill=0 handle_abort=0"
tsan_opts="$tsan_opts suppressions=$repo/tests/sanitizers/tsan_suppressions.txt"
export TSAN_OPTIONS="$tsan_opts ${TSAN_OPTIONS:-}"
# TSan intercepts dlopen, so the stand-in runtime's dlopen("libcuda.so.1") searches as if called
# from libtsan.so, without the runtime's RUNPATH: the stand-in driver's directory goes in
# LD_LIBRARY_PATH (which would override the fork test's lock-free fixture driver: leave that test out).
export LD_LIBRARY_PATH="$build/standin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
run=("$build/bin/vramtrace_e2e_tests" --durations yes "${spec[@]}")
# TSan's shadow layout (gcc 12 / libtsan2) cannot cope with the largest ASLR settings of recent
# kernels ("unexpected memory mapping"); run without randomization there (inherited by children).
if [[ -r /proc/sys/vm/mmap_rnd_bits && $(cat /proc/sys/vm/mmap_rnd_bits) -gt 28 ]] && command -v setarch >/dev/null; then
  run=(setarch "$(uname -m)" -R "${run[@]}")
fi
status=0
"${run[@]}" || status=$?
end=$(date +%s)
echo "run_tsan_e2e: build $((built - start)) s, tests $((end - built)) s, exit status $status"
exit "$status"
