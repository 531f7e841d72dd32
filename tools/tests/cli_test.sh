#!/bin/sh
# One CLI test case: cli_test.sh CASE. Environment (set by CMake): VT (the built vramtrace),
# VT_STUB (a copy beside a stub libvramtrace.so), VT_NOLIB (a copy with no library beside it),
# VT_DATA (tests/unit/report/data), VT_WORK (a scratch directory for this case).
set -u
case_name=$1
rm -rf "$VT_WORK" && mkdir -p "$VT_WORK" || exit 1
out=$VT_WORK/stdout
err=$VT_WORK/stderr

fail() {
    echo "FAIL [$case_name]: $*"
    echo "--- stdout:"; cat "$out" 2>/dev/null
    echo "--- stderr:"; cat "$err" 2>/dev/null
    exit 1
}
# run EXPECTED_STATUS COMMAND...: runs COMMAND with stdout/stderr captured, checks the status.
run() {
    expected=$1; shift
    "$@" >"$out" 2>"$err" </dev/null
    status=$?
    [ "$status" -eq "$expected" ] || fail "exit status $status, expected $expected: $*"
}
stderr_is_one_line() { [ "$(wc -l <"$err")" -eq 1 ] || fail "stderr is not exactly one line"; }
stderr_has() { grep -qF -- "$1" "$err" || fail "stderr lacks: $1"; }
stdout_has() { grep -qF -- "$1" "$out" || fail "stdout lacks: $1"; }
stdout_empty() { [ ! -s "$out" ] || fail "stdout is not empty"; }
stderr_empty() { [ ! -s "$err" ] || fail "stderr is not empty"; }

case $case_name in
version)
    run 0 "$VT" --version; stdout_has "vramtrace 0."; stderr_empty
    run 0 "$VT" -V; stdout_has "vramtrace 0." ;;
help)
    run 0 "$VT" --help; stdout_has "usage: vramtrace <command>"; stderr_empty
    run 0 "$VT" -h; stdout_has "usage: vramtrace <command>"
    run 0 "$VT" help; stdout_has "usage: vramtrace <command>" ;;
help_command)
    run 0 "$VT" help run; stdout_has "usage: vramtrace run"
    run 0 "$VT" run --help; stdout_has "usage: vramtrace run"
    run 0 "$VT" help summary; stdout_has "usage: vramtrace summary"
    run 0 "$VT" summary --help; stdout_has "usage: vramtrace summary"
    run 2 "$VT" help frobnicate; stderr_is_one_line; stderr_has "vramtrace: error: unknown command 'frobnicate'" ;;
unknown_command)
    run 2 "$VT" frobnicate; stdout_empty; stderr_is_one_line
    stderr_has "vramtrace: error: unknown command 'frobnicate' (see 'vramtrace --help')" ;;
unknown_option)
    run 2 "$VT" --frobnicate; stderr_is_one_line; stderr_has "vramtrace: error: unknown option '--frobnicate'"
    run 2 "$VT" summary --frobnicate x.json; stderr_is_one_line
    stderr_has "vramtrace: error: summary: unknown option '--frobnicate' (see 'vramtrace summary --help')"
    run 2 "$VT" run --frobnicate -- true; stderr_is_one_line; stderr_has "run: unknown option '--frobnicate'" ;;
no_command)
    run 2 "$VT"; stderr_is_one_line; stderr_has "vramtrace: error: no command given" ;;
summary_golden)
    # The CLI prints exactly what the unit test's golden file holds for the same snapshot.
    run 0 "$VT" summary "$VT_DATA/summary_input.json"; stderr_empty
    cmp -s "$out" "$VT_DATA/summary_golden.txt" || { diff "$VT_DATA/summary_golden.txt" "$out"; fail "differs from summary_golden.txt"; }
    run 0 "$VT" summary --top 10 -- "$VT_DATA/summary_input.json"
    cmp -s "$out" "$VT_DATA/summary_golden.txt" || fail "--top 10 differs from the default" ;;
summary_top)
    run 0 "$VT" summary --top 2 "$VT_DATA/summary_input.json"
    stdout_has "vramtrace:   ... and 4 more call sites: 3.07 MiB (3216360 B) in 4 allocations"
    run 0 "$VT" summary --top=0 "$VT_DATA/summary_input.json"
    cmp -s "$out" "$VT_DATA/summary_golden.txt" || fail "--top=0 (all) differs from the golden (6 call sites)"
    bad=$(grep -vc '^vramtrace: ' "$out"); [ "$bad" -eq 0 ] || fail "a line without the prefix" ;;
summary_bad_top)
    run 2 "$VT" summary --top x "$VT_DATA/summary_input.json"; stderr_is_one_line; stderr_has "--top needs a number, got 'x'"
    run 2 "$VT" summary --top -1 "$VT_DATA/summary_input.json"; stderr_is_one_line
    run 2 "$VT" summary --top; stderr_is_one_line
    run 2 "$VT" summary; stderr_is_one_line; stderr_has "summary: no snapshot file given" ;;
summary_missing_file)
    run 1 "$VT" summary "$VT_WORK/nope.json"; stdout_empty; stderr_is_one_line
    stderr_has "vramtrace: error: $VT_WORK/nope.json: cannot open: No such file or directory" ;;
summary_truncated)
    head -c 700 "$VT_DATA/summary_input.json" >"$VT_WORK/cut.json"
    run 1 "$VT" summary "$VT_WORK/cut.json"; stdout_empty; stderr_is_one_line
    stderr_has "vramtrace: error: $VT_WORK/cut.json: truncated JSON" ;;
summary_foreign)
    printf '{"name": "not a snapshot", "items": [1, 2, 3]}\n' >"$VT_WORK/foreign.json"
    run 1 "$VT" summary "$VT_WORK/foreign.json"; stderr_is_one_line
    stderr_has "vramtrace: error: $VT_WORK/foreign.json: not a vramtrace snapshot"
    printf '\211PNG\r\n\032\n\000\000\000\rIHDR' >"$VT_WORK/binary.json"
    run 1 "$VT" summary "$VT_WORK/binary.json"; stderr_is_one_line
    stderr_has "vramtrace: error: $VT_WORK/binary.json: not JSON"
    : >"$VT_WORK/empty.json"
    run 1 "$VT" summary "$VT_WORK/empty.json"; stderr_is_one_line
    stderr_has "vramtrace: error: $VT_WORK/empty.json: empty file" ;;
summary_newer_schema)
    sed 's/"schema_version": 1,/"schema_version": 999,/' "$VT_DATA/summary_input.json" >"$VT_WORK/new.json"
    run 1 "$VT" summary "$VT_WORK/new.json"; stderr_is_one_line
    stderr_has "$VT_WORK/new.json: schema_version 999 is newer than this vramtrace reads (1)" ;;
summary_two_files)
    run 2 "$VT" summary a.json b.json; stderr_is_one_line; stderr_has "more than one snapshot" ;;
summary_directory)
    run 1 "$VT" summary "$VT_WORK"; stderr_is_one_line; stderr_has "$VT_WORK: is a directory" ;;
run_library_missing)
    lib=$(dirname "$(dirname "$VT_NOLIB")")/lib/libvramtrace.so
    run 125 "$VT_NOLIB" run -- true; stdout_empty; stderr_is_one_line
    stderr_has "vramtrace: error: preload library not found: $lib" ;;
run_true)
    run 0 "$VT_STUB" run -- true; stderr_empty
    run 0 "$VT_STUB" run true ;;
run_exit_status)
    run 3 "$VT_STUB" run -- sh -c 'exit 3'
    run 1 "$VT_STUB" run -- false
    run 0 "$VT_STUB" run -- sh -c 'echo out; echo err >&2'; stdout_has out; stderr_has err ;;
run_not_found)
    run 127 "$VT_STUB" run -- vramtrace-no-such-program-xyz; stderr_is_one_line
    stderr_has "vramtrace: error: vramtrace-no-such-program-xyz: command not found"
    run 127 "$VT_STUB" run -- "$VT_WORK/missing"; stderr_is_one_line
    stderr_has "cannot run $VT_WORK/missing: No such file or directory" ;;
run_not_executable)
    printf 'data\n' >"$VT_WORK/plain"; chmod 644 "$VT_WORK/plain"
    if [ "$(id -u)" -eq 0 ]; then : ; fi  # root still cannot exec a file with no x bit
    run 126 "$VT_STUB" run -- "$VT_WORK/plain"; stderr_is_one_line; stderr_has "cannot run $VT_WORK/plain" ;;
run_signal)
    run 143 "$VT_STUB" run -- sh -c 'kill -TERM $$'; stderr_is_one_line; stderr_has "killed by signal 15"
    run 137 "$VT_STUB" run -- sh -c 'kill -KILL $$' ;;
run_environment)
    lib=$(dirname "$(dirname "$VT_STUB")")/lib/libvramtrace.so
    run 0 env -u LD_PRELOAD -u VRAMTRACE_OUTPUT -u VRAMTRACE_SUMMARY "$VT_STUB" run --output "$VT_WORK/snap-%p.json" --no-summary -- \
        sh -c 'echo "[$LD_PRELOAD][$VRAMTRACE_OUTPUT][$VRAMTRACE_SUMMARY]"'
    stdout_has "[$lib][$VT_WORK/snap-%p.json][0]"
    run 0 env -u LD_PRELOAD VRAMTRACE_OUTPUT=keep.json VRAMTRACE_SUMMARY=1 "$VT_STUB" run -- \
        sh -c 'echo "[$LD_PRELOAD][$VRAMTRACE_OUTPUT][$VRAMTRACE_SUMMARY]"'
    stdout_has "[$lib][keep.json][1]"
    run 0 env -u VRAMTRACE_OUTPUT "$VT_STUB" run --output=x.json true sh -c 'exit 0' ;;
run_keeps_preload)
    lib=$(dirname "$(dirname "$VT_STUB")")/lib/libvramtrace.so
    run 0 env "LD_PRELOAD=libm.so.6 $lib" "$VT_STUB" run -- sh -c 'echo "[$LD_PRELOAD]"'
    stdout_has "[$lib:libm.so.6]" ;;
run_usage)
    run 2 "$VT_STUB" run; stderr_is_one_line; stderr_has "run: no program given (see 'vramtrace run --help')"
    run 2 "$VT_STUB" run --output; stderr_is_one_line; stderr_has "run: --output needs a path"
    run 2 "$VT_STUB" run --output= -- true; stderr_is_one_line
    run 2 "$VT_STUB" run --no-summary --; stderr_is_one_line ;;
# --- against the real library (VRAMTRACE_CLI_TESTS_WITH_PRELOAD=ON) ---
preload_run_true)
    run 0 "$VT" run --output "$VT_WORK/snap-%p.json" -- true ;;
preload_run_exit_status)
    run 3 "$VT" run --no-summary -- sh -c 'exit 3' ;;
preload_run_not_found)
    run 127 "$VT" run -- vramtrace-no-such-program-xyz; stderr_has "command not found" ;;
*)
    echo "unknown case: $case_name"; exit 2 ;;
esac
exit 0
