#!/bin/sh
# One CLI test case: cli_test.sh CASE. Environment (set by CMake): VT (the built vramtrace),
# VT_STUB (a copy beside a stub libvramtrace.so), VT_NOLIB (a copy with no library beside it),
# VT_DATA (tests/unit/report/data), VT_CLI_DATA (tests/cli/data), VT_DIFF_PROG (the program of
# the diff test, tests/cli/diff_prog.cpp), VT_ANSWER_PROG (the summary headline's,
# tests/cli/answer_prog.cpp), VT_README (the README), VT_WORK (a scratch directory for this case).
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
# jq_is FILE FILTER EXPECTED: the compact output of jq FILTER on FILE is exactly EXPECTED.
jq_is() {
    got=$(jq -c "$2" "$1") || fail "jq cannot read $1 ($2)"
    [ "$got" = "$3" ] || fail "jq '$2' on $1: got $got, expected $3"
}
# same_text A B: the two files are identical.
same_text() { cmp -s "$1" "$2" || { diff "$1" "$2"; fail "$1 and $2 differ"; }; }
# A copy of a snapshot with its top-level members in reverse order (allocations first).
reversed() { jq '{allocations, stacks, frames, modules, dropped, devices, process, schema_version, format}' "$1"; }
# The files of a directory, one per line (to check that nothing was left behind).
listing() { ls -A "$1"; }
# A summary with what varies from run to run made fixed: the pid and host, times since start, and
# the directories of source files (the build's own relative paths).
normalized() {
    sed -E 's/pid [0-9]+ on [^ ]+ ====/pid PID on HOST ====/; s/[0-9]+(\.[0-9]+)? (ms|s|min)( [0-9]+ s)? after start/T after start/g' |
        sed -E 's# at [^ ]*/([^/ ]+:[0-9]+)# at \1#g'
}
# The parts of a summary the answer-first goldens hold: the headline and the live allocations.
answer_text() { { sed '/---- details ----/q' "$1"; sed -n '/^vramtrace: leaked at exit/,$p' "$1"; } | normalized; }

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
    run 2 "$VT" help frobnicate; stderr_is_one_line; stderr_has "vramtrace: error: unknown command 'frobnicate'"
    # Every help text is wrapped at 100 columns.
    for c in "" run summary diff merge export top view; do
        run 0 "$VT" help $c
        long=$(awk 'length > 100' "$out"); [ -z "$long" ] || fail "help $c: a line over 100 columns: $long"
    done ;;
unknown_command)
    run 2 "$VT" frobnicate; stdout_empty; stderr_is_one_line
    stderr_has "vramtrace: error: unknown command 'frobnicate' (see 'vramtrace --help')" ;;
unknown_option)
    run 2 "$VT" --frobnicate; stderr_is_one_line; stderr_has "vramtrace: error: unknown option '--frobnicate'"
    run 2 "$VT" summary --frobnicate x.json; stderr_is_one_line
    stderr_has "vramtrace: error: summary: unknown option '--frobnicate' (see 'vramtrace summary --help')"
    run 2 "$VT" run --frobnicate -- true; stderr_is_one_line; stderr_has "run: unknown option '--frobnicate'" ;;
no_command)
    # A bare vramtrace prints the usage, as `vramtrace help` and `vramtrace --help` do.
    run 0 "$VT"; stderr_empty; stdout_has "usage: vramtrace <command> [options] [arguments]"
    cp "$out" "$VT_WORK/bare.txt"
    run 0 "$VT" help; cmp -s "$out" "$VT_WORK/bare.txt" || fail "vramtrace help differs from a bare vramtrace"
    run 0 "$VT" help help; cmp -s "$out" "$VT_WORK/bare.txt" || fail "vramtrace help help differs from a bare vramtrace"
    run 0 "$VT" help summary; stdout_has "usage: vramtrace summary [--top N] [--frames N] SNAPSHOT" ;;
summary_golden)
    # The CLI prints exactly what the unit test's golden file holds for the same snapshot.
    run 0 "$VT" summary "$VT_DATA/summary_input.json"; stderr_empty
    cmp -s "$out" "$VT_DATA/summary_golden.txt" || { diff "$VT_DATA/summary_golden.txt" "$out"; fail "differs from summary_golden.txt"; }
    run 0 "$VT" summary --top 10 -- "$VT_DATA/summary_input.json"
    cmp -s "$out" "$VT_DATA/summary_golden.txt" || fail "--top 10 differs from the default" ;;
summary_top)
    run 0 "$VT" summary --top 2 "$VT_DATA/summary_input.json"
    stdout_has "vramtrace:     ... and 4 more call sites: 3.07 MiB (3216360 B) in 4 allocations"
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
    # The stub library writes no notes: the verdict says the library was not loaded.
    run 0 "$VT_STUB" run -- true; stderr_is_one_line
    stderr_has "vramtrace: no CUDA allocation was seen in true: nothing to report (the library was not loaded: a set-user-ID program or a static binary ignores LD_PRELOAD)"
    run 0 "$VT_STUB" run --quiet true; stderr_empty ;;
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
    run 143 "$VT_STUB" run -- sh -c 'kill -TERM $$'; stderr_is_one_line; stderr_has "; sh was ended by SIGTERM"
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
run_nvtx_injection)
    # run sets NVTX_INJECTION64_PATH to the library, and leaves another tool's value alone with
    # one line on stderr.
    lib=$(dirname "$(dirname "$VT_STUB")")/lib/libvramtrace.so
    run 0 env -u NVTX_INJECTION64_PATH "$VT_STUB" run -q -- sh -c 'echo "[$NVTX_INJECTION64_PATH]"'
    stdout_has "[$lib]"; stderr_empty
    run 0 env "NVTX_INJECTION64_PATH=$lib" "$VT_STUB" run -q -- sh -c 'echo "[$NVTX_INJECTION64_PATH]"'
    stdout_has "[$lib]"; stderr_empty
    other="$VT_WORK/other-tool/libToolsInjection64.so"
    run 0 env "NVTX_INJECTION64_PATH=$other" "$VT_STUB" run -q -- sh -c 'echo "[$NVTX_INJECTION64_PATH]"'
    stdout_has "[$other]"; stderr_is_one_line
    stderr_has "NVTX_INJECTION64_PATH is already set ($other): NVTX goes to that tool; this run records no NVTX ranges" ;;
run_usage)
    run 2 "$VT_STUB" run; stderr_is_one_line; stderr_has "run: no program given (see 'vramtrace run --help')"
    run 2 "$VT_STUB" run --output; stderr_is_one_line; stderr_has "run: --output needs a path"
    run 2 "$VT_STUB" run --output= -- true; stderr_is_one_line
    run 2 "$VT_STUB" run --no-summary --; stderr_is_one_line
    run 2 "$VT_STUB" run --log x.log -- true; stderr_is_one_line; stderr_has "run: --log goes with --live"
    run 2 "$VT_STUB" run --live -- true; stderr_is_one_line
    stderr_has "run: --live needs a terminal (its live view is drawn there) (see 'vramtrace run --help')" ;;
top_usage)
    run 0 "$VT" top --help; stdout_has "usage: vramtrace top [--pid PID] [--top N]"
    run 2 "$VT" top --json; stderr_is_one_line; stderr_has "top: --json goes with --once (see 'vramtrace top --help')"
    run 2 "$VT" top --snapshot; stderr_is_one_line; stderr_has "top: --snapshot needs --pid"
    run 2 "$VT" top --pid x; stderr_is_one_line; stderr_has "top: --pid needs a process id, got 'x'"
    run 2 "$VT" top --pid 0; stderr_is_one_line; stderr_has "top: --pid needs a process id, got '0'"
    run 2 "$VT" top --top; stderr_is_one_line; stderr_has "top: --top needs a value"
    run 2 "$VT" top extra; stderr_is_one_line; stderr_has "top: takes no operand, got 'extra'"
    run 2 "$VT" top --frobnicate; stderr_is_one_line; stderr_has "top: unknown option '--frobnicate'"
    # Not a terminal (the run helper's stdin is not one): the UI says so; --once needs none.
    run 1 "$VT" top; stderr_is_one_line; stderr_has "vramtrace: error: top: the terminal UI needs a terminal (for scripts: --once)"
    mkdir -m 700 "$VT_WORK/xdg"
    XDG_RUNTIME_DIR=$VT_WORK/xdg run 0 "$VT" top --once; stderr_empty
    stdout_has "no traced process serves a live view on this host"
    XDG_RUNTIME_DIR=$VT_WORK/xdg run 0 "$VT" top --once --json; stderr_empty; jq_is "$out" '.processes' '[]' ;;
every_command_reads_every_schema)
    # tests/cli/data keeps a snapshot of every schema version (schema-vN.json) and what it holds
    # (schema-vN.expect); every command reads every one of them.
    n=0
    for f in "$VT_CLI_DATA"/schema-v*.json; do
        n=$((n + 1))
        expect_live_bytes=; expect_live_allocations=; expect_sites=
        . "${f%.json}.expect"
        run 0 "$VT" summary "$f"; stderr_empty
        stdout_has "vramtrace: leaked at exit: $expect_live_allocations allocation"
        run 0 "$VT" diff --json --all "$f" "$f"; stderr_empty
        jq_is "$out" '.totals.live_bytes' "{\"base\":$expect_live_bytes,\"new\":$expect_live_bytes,\"change\":0}"
        jq_is "$out" '[.changed_sites, .unchanged_sites]' "[0,$expect_sites]"
        run 0 "$VT" merge --output "$VT_WORK/merged.json" "$f" "$f"; stderr_is_one_line; stderr_has "is counted twice: $f has the same snapshot of it"
        stdout_has "live at the dumps: "
        jq_is "$VT_WORK/merged.json" '[(.allocations | length), (.allocations | map(.size) | add // 0)]' \
            "[$((2 * expect_live_allocations)),$((2 * expect_live_bytes))]"
        run 0 "$VT" summary "$VT_WORK/merged.json"; stderr_empty
        run 0 "$VT" diff --json "$f" "$VT_WORK/merged.json"
        jq_is "$out" '.totals.live_bytes.change' "$expect_live_bytes"
    done
    [ "$n" -ge 1 ] || fail "no schema-v*.json in $VT_CLI_DATA" ;;
diff_same)
    run 0 "$VT" diff "$VT_DATA/summary_input.json" "$VT_DATA/summary_input.json"; stderr_empty
    stdout_has "call sites: 0 changed (0 grew, 0 shrank, 0 new, 0 gone), 6 unchanged"
    run 0 "$VT" diff --fail-if-growth 0 "$VT_DATA/summary_input.json" "$VT_DATA/summary_input.json"; stderr_empty
    stdout_has "gate: live bytes changed by 0 B, +0.00%: within the limit 0: passed"
    run 0 "$VT" diff --fail-if-growth 0% --metric peak "$VT_DATA/summary_input.json" "$VT_DATA/summary_input.json" ;;
diff_text_golden)
    # Two runs of one program built in different directories, loaded at different addresses, whose
    # frames and stacks are listed in another order: call sites still match by key.
    cd "$VT_CLI_DATA" || fail "cd"
    run 0 "$VT" diff diff_base.json diff_new.json; stderr_empty
    same_text diff_golden.txt "$out" ;;
diff_json)
    run 0 "$VT" diff --json "$VT_CLI_DATA/diff_base.json" "$VT_CLI_DATA/diff_new.json"; stderr_empty
    jq_is "$out" '[.format, .version, .match.frames, .match.lines]' '["vramtrace-diff",1,1,true]'
    jq_is "$out" '.totals' '{"live_bytes":{"base":5247588,"new":6300260,"change":1052672},"live_allocations":{"base":6,"new":6,"change":0},"peak_bytes":{"base":8392804,"new":10494052,"change":2101248},"oom_count":null}'
    jq_is "$out" '[.sites[] | [.status, .key, .live_bytes.change, .live_allocations.change, .bytes_at_peak]]' \
        '[["grew","alloc_a() at model.cpp:10 (train)",1048576,1,null],["new","alloc_d() at data.cpp:40 (train)",8192,1,null],["shrank","alloc_b() at model.cpp:20 (train)",0,-1,null],["gone","alloc_c() at data.cpp:30 (train)",-4096,-1,null]]'
    jq_is "$out" '[.changed_sites, .unchanged_sites, .gate]' '[4,2,null]'
    jq_is "$out" '[.devices[] | [.device, .current_bytes.change, .peak_bytes.change]]' '[[0,1048576,2097152],[1,4096,4096],[-1,0,0]]'
    jq_is "$out" '[.base.pid, .new.pid, .base.host, .new.host]' '[100,200,"nodeA","nodeB"]'
    run 0 "$VT" diff --json --all --top 5 "$VT_CLI_DATA/diff_base.json" "$VT_CLI_DATA/diff_new.json"
    jq_is "$out" '[.sites[] | .status]' '["grew","new","shrank","gone","same"]'
    run 0 "$VT" diff --top 1 "$VT_CLI_DATA/diff_base.json" "$VT_CLI_DATA/diff_new.json"
    stdout_has "  ... and 3 more (--top 0 lists all)" ;;
diff_frames)
    run 0 "$VT" diff --json --all --frames 2 "$VT_CLI_DATA/diff_base.json" "$VT_CLI_DATA/diff_new.json"
    jq_is "$out" '[.sites[] | .key]' '["alloc_a() at model.cpp:10 (train) <- main at main.cpp:5 (train)","alloc_d() at data.cpp:40 (train) <- main at main.cpp:5 (train)","alloc_b() at model.cpp:20 (train) <- main at main.cpp:5 (train)","alloc_c() at data.cpp:30 (train) <- main at main.cpp:5 (train)","(no stack captured)","foo_alloc (libfoo.so+0x400) <- main at main.cpp:5 (train)"]'
    run 0 "$VT" diff --json --all --no-lines "$VT_CLI_DATA/diff_base.json" "$VT_CLI_DATA/diff_new.json"
    jq_is "$out" '[.sites[] | .key]' '["alloc_a() at model.cpp (train)","alloc_d() at data.cpp (train)","alloc_b() at model.cpp (train)","alloc_c() at data.cpp (train)","(no stack captured)","foo_alloc (libfoo.so)"]'
    jq_is "$out" '.match' '{"frames":1,"lines":false}'
    # A frame count beyond the stacks' depth takes what there is.
    run 0 "$VT" diff --json --frames=9 "$VT_CLI_DATA/diff_base.json" "$VT_CLI_DATA/diff_new.json"
    jq_is "$out" '.sites[0].key' '"alloc_a() at model.cpp:10 (train) <- main at main.cpp:5 (train)"' ;;
diff_gate)
    # Live bytes grew by exactly 1052672 B (20.06%), the sum of the device peaks by 2101248 B.
    B="$VT_CLI_DATA/diff_base.json"; N="$VT_CLI_DATA/diff_new.json"
    run 0 "$VT" diff --fail-if-growth 1052672 "$B" "$N"; stderr_empty
    stdout_has "gate: live bytes changed by +1.00 MiB (+1052672 B), +20.06%: within the limit 1052672: passed"
    run 3 "$VT" diff --fail-if-growth 1052671 "$B" "$N"; stderr_is_one_line
    stderr_has "vramtrace: error: diff: live bytes changed by +1.00 MiB (+1052672 B), +20.06%: more than the limit 1052671"
    stdout_has "gate: live bytes changed by +1.00 MiB (+1052672 B), +20.06%: more than the limit 1052671: FAILED"
    run 3 "$VT" diff --fail-if-growth 1MiB "$B" "$N"; stderr_is_one_line
    run 0 "$VT" diff --fail-if-growth=1.004MiB "$B" "$N"
    run 3 "$VT" diff --fail-if-growth 1.003MiB "$B" "$N"
    run 3 "$VT" diff --fail-if-growth 1MB "$B" "$N"
    run 0 "$VT" diff --fail-if-growth 1.1MB "$B" "$N"
    # Shrinking never fails the gate.
    run 0 "$VT" diff --fail-if-growth 0 "$N" "$B"
    run 3 "$VT" diff --metric peak --fail-if-growth 2MiB "$B" "$N"; stderr_has "sum of the devices' peak bytes changed by +2.00 MiB (+2101248 B)"
    run 0 "$VT" diff --metric peak --fail-if-growth 2101248 "$B" "$N"
    run 3 "$VT" diff --json --fail-if-growth 1MiB "$B" "$N"
    jq_is "$out" '.gate' '{"limit":"1MiB","limit_bytes":1048576,"subject":"live bytes","measured":{"base":5247588,"new":6300260,"change":1052672},"failed":true}' ;;
diff_gate_percent)
    B="$VT_CLI_DATA/diff_base.json"; N="$VT_CLI_DATA/diff_new.json"
    run 3 "$VT" diff --fail-if-growth 20% "$B" "$N"; stderr_has "more than the limit 20% of the base"
    run 3 "$VT" diff --fail-if-growth 20.06% "$B" "$N"
    run 0 "$VT" diff --fail-if-growth 20.061% "$B" "$N"; stdout_has "within the limit 20.061% of the base: passed"
    run 0 "$VT" diff --fail-if-growth 25.04% --metric peak "$B" "$N"
    run 3 "$VT" diff --fail-if-growth 25% --metric peak "$B" "$N"
    run 3 "$VT" diff --json --fail-if-growth 5% "$B" "$N"
    jq_is "$out" '[.gate.limit, .gate.limit_micro_percent, .gate.failed]' '["5%",5000000,true]'
    # A site that is new has a base of 0: any growth is more than any percentage.
    run 3 "$VT" diff --site 'alloc_d() at data.cpp:40 (train)' --fail-if-growth 1000000% "$B" "$N" ;;
diff_gate_site)
    B="$VT_CLI_DATA/diff_base.json"; N="$VT_CLI_DATA/diff_new.json"
    run 0 "$VT" diff --site 'alloc_a() at model.cpp:10 (train)' --fail-if-growth 1MiB "$B" "$N"
    stdout_has "gate: live bytes of call site 'alloc_a() at model.cpp:10 (train)' changed by +1.00 MiB (+1048576 B), +100.00%: within the limit 1MiB: passed"
    run 3 "$VT" diff --site 'alloc_a() at model.cpp:10 (train)' --fail-if-growth 1048575 "$B" "$N"; stderr_is_one_line
    # Not an exact key: every key containing it (alloc_a +1048576, alloc_b 0, alloc_c -4096, alloc_d +8192).
    run 3 "$VT" diff --site 'alloc_' --fail-if-growth 1052671 "$B" "$N"
    stderr_has "live bytes of the 4 call sites containing 'alloc_' changed by +1.00 MiB (+1052672 B)"
    run 0 "$VT" diff --site 'alloc_' --fail-if-growth 1052672 "$B" "$N"
    run 0 "$VT" diff --site 'alloc_b()' --fail-if-growth 0 "$B" "$N"
    run 2 "$VT" diff --site 'no_such_function' --fail-if-growth 1 "$B" "$N"; stderr_is_one_line
    stderr_has "diff: --site 'no_such_function' matches no call site of either snapshot (see 'vramtrace diff --help')"
    run 2 "$VT" diff --site 'alloc_a' --metric peak --fail-if-growth 1 "$B" "$N"; stderr_is_one_line
    stderr_has "needs the bytes each call site held at the peak, which these snapshots do not record (written before vramtrace recorded peaks)" ;;
diff_usage)
    B="$VT_CLI_DATA/diff_base.json"
    run 0 "$VT" diff --help; stdout_has "usage: vramtrace diff"; stdout_has "Exit status: 0 success"
    run 0 "$VT" help diff; stdout_has "usage: vramtrace diff"
    run 2 "$VT" diff; stderr_is_one_line; stderr_has "diff: needs two snapshots, BASE and NEW (see 'vramtrace diff --help')"
    run 2 "$VT" diff "$B"; stderr_is_one_line
    run 2 "$VT" diff "$B" "$B" "$B"; stderr_is_one_line; stderr_has "more than two snapshots"
    run 2 "$VT" diff --frames 0 "$B" "$B"; stderr_is_one_line; stderr_has "--frames needs a number from 1 to 256, got '0'"
    run 2 "$VT" diff --frames "$B" "$B"; stderr_is_one_line
    run 2 "$VT" diff --fail-if-growth abc "$B" "$B"; stderr_is_one_line; stderr_has "--fail-if-growth: expected a byte count"
    run 2 "$VT" diff --fail-if-growth 1.5 "$B" "$B"; stderr_is_one_line; stderr_has "a byte count has no fraction"
    run 2 "$VT" diff --fail-if-growth 10XB "$B" "$B"; stderr_is_one_line; stderr_has "unknown unit 'XB'"
    run 2 "$VT" diff --fail-if-growth -5 "$B" "$B"; stderr_is_one_line
    run 2 "$VT" diff --fail-if-growth 99999999999999999999 "$B" "$B"; stderr_is_one_line
    run 2 "$VT" diff --fail-if-growth 20000PiB "$B" "$B"; stderr_is_one_line; stderr_has "byte count too large"
    run 2 "$VT" diff --metric max --fail-if-growth 1 "$B" "$B"; stderr_is_one_line; stderr_has "--metric is live or peak"
    run 2 "$VT" diff --site x "$B" "$B"; stderr_is_one_line; stderr_has "--metric and --site go with --fail-if-growth"
    run 2 "$VT" diff --top x "$B" "$B"; stderr_is_one_line
    run 2 "$VT" diff --fail-if-growth; stderr_is_one_line; stderr_has "diff: --fail-if-growth needs a value"
    run 2 "$VT" diff --frobnicate "$B" "$B"; stderr_is_one_line; stderr_has "diff: unknown option '--frobnicate'"
    # "--" ends the options: a file may start with a dash.
    cp "$B" "$VT_WORK/-base.json"
    (cd "$VT_WORK" && "$VT" diff -- -base.json -base.json >/dev/null 2>&1) || fail "diff -- -base.json" ;;
diff_bad_input)
    B="$VT_CLI_DATA/diff_base.json"
    head -c 900 "$B" >"$VT_WORK/cut.json"
    printf '{"name": "not a snapshot"}\n' >"$VT_WORK/foreign.json"
    sed 's/"schema_version": 1,/"schema_version": 2,/' "$B" >"$VT_WORK/v2.json"
    sed 's/"frames": \[1, 4\]/"frames": [1, 44]/' "$B" >"$VT_WORK/badframe.json"
    sed 's/"stack": 3}/"stack": 33}/' "$B" >"$VT_WORK/dangling.json"
    sed 's/"id": 3,/"id": 2,/' "$B" >"$VT_WORK/dupstack.json"
    sed 's/"module": 1,/"module": 5,/' "$B" >"$VT_WORK/badmodule.json"
    sed 's/"size": 4096,/"size": "4096",/' "$B" >"$VT_WORK/badsize.json"
    for pos in first second; do
        check_bad() { # FILE MESSAGE
            if [ $pos = first ]; then run 1 "$VT" diff "$1" "$B"; else run 1 "$VT" diff "$B" "$1"; fi
            stdout_empty; stderr_is_one_line; stderr_has "vramtrace: error: $1: $2"
        }
        check_bad "$VT_WORK/missing.json" "cannot open: No such file or directory"
        check_bad "$VT_WORK/cut.json" "truncated JSON"
        check_bad "$VT_WORK/foreign.json" "not a vramtrace snapshot"
        check_bad "$VT_WORK/v2.json" "schema_version 2 is newer than this vramtrace reads (1); use a newer vramtrace"
        check_bad "$VT_WORK/badframe.json" "stacks[1].frames[1]: 44 is not an index into frames (5 entries)"
        check_bad "$VT_WORK/dangling.json" "allocations[3].stack: 33 is not the id of an entry in stacks"
        check_bad "$VT_WORK/dupstack.json" "stacks: id 2 appears more than once"
        check_bad "$VT_WORK/badmodule.json" "frames[3].module: 5 is not an index into modules (2 entries)"
        check_bad "$VT_WORK/badsize.json" "allocations[3].size: expected an unsigned integer, got a string"
        check_bad "$VT_WORK" "is a directory, not a snapshot file"
    done
    # Standard output that cannot be written: status 1 too.
    "$VT" diff "$B" "$B" >/dev/full 2>"$err"; status=$?
    [ "$status" -eq 1 ] || fail "diff >/dev/full: status $status, expected 1"
    stderr_is_one_line; stderr_has "cannot write to standard output" ;;
diff_out_of_order)
    # Readers must not depend on member order: allocations before the stacks they name read the same.
    reversed "$VT_CLI_DATA/diff_new.json" >"$VT_WORK/new-reversed.json" || fail "jq"
    run 0 "$VT" diff --json --all "$VT_CLI_DATA/diff_new.json" "$VT_WORK/new-reversed.json"
    jq_is "$out" '[.changed_sites, .unchanged_sites, .totals.live_bytes.new]' '[0,5,6300260]'
    run 0 "$VT" diff --json "$VT_CLI_DATA/diff_base.json" "$VT_WORK/new-reversed.json"
    jq_is "$out" '.totals.live_bytes.change' '1052672' ;;
merge_tables)
    cd "$VT_CLI_DATA" || fail "cd"
    run 0 "$VT" merge diff_base.json diff_new.json; stderr_empty
    same_text merge_golden.txt "$out"
    run 0 "$VT" merge --top 2 diff_base.json diff_new.json
    stdout_has "  ... and 4 more (--top 0 lists all)"
    run 0 "$VT" merge --frames 2 --top 0 diff_base.json diff_new.json
    stdout_has "1.00 KiB (1024 B)     2            2 of 2  foo_alloc (libfoo.so+0x400) <- main at main.cpp:5 (train)" ;;
merge_output_roundtrip)
    B="$VT_CLI_DATA/diff_base.json"; N="$VT_CLI_DATA/diff_new.json"; M="$VT_WORK/o/merged.json"
    mkdir -p "$VT_WORK/o"
    run 0 "$VT" merge --quiet --output "$M" "$B" "$N"; stdout_empty; stderr_empty
    [ "$(listing "$VT_WORK/o")" = "merged.json" ] || fail "left behind: $(listing "$VT_WORK/o")"
    jq_is "$M" '[.format, .schema_version, .process.pid, .process.reason, .process.host]' '["vramtrace-snapshot",1,0,"merge",""]'
    jq_is "$M" '[.modules, .frames, .stacks, .allocations, .merged_processes, .merged_devices] | map(length)' '[3,9,8,12,2,6]'
    jq_is "$M" '[(.allocations | map(.size) | add), (.allocations | map(.stack) | max)]' '[11547848,8]'
    jq_is "$M" '.devices' '[{"device":-1,"current_bytes":200,"peak_bytes":200,"allocation_count":2,"free_count":0,"total_allocated_bytes":200,"total_freed_bytes":0},{"device":0,"current_bytes":11535360,"peak_bytes":18874368,"allocation_count":12,"free_count":4,"total_allocated_bytes":19923968,"total_freed_bytes":8388608},{"device":1,"current_bytes":12288,"peak_bytes":12288,"allocation_count":2,"free_count":0,"total_allocated_bytes":12288,"total_freed_bytes":0}]'
    jq_is "$M" '[.merged_processes[] | [.input, .file, .pid, .host, .live_bytes, .live_allocations]]' \
        "[[0,\"$B\",100,\"nodeA\",5247588,6],[1,\"$N\",200,\"nodeB\",6300260,6]]"
    # Every command reads it.
    run 0 "$VT" summary "$M"; stderr_empty
    stdout_has "vramtrace: top call sites by live bytes, of 11.01 MiB (11547848 B) live in 12 allocations:"
    run 0 "$VT" diff --json "$B" "$M"
    jq_is "$out" '[.totals.live_bytes.change, .totals.live_allocations.change, .new.merged_processes]' '[6300260,6,2]'
    jq_is "$out" '[.sites[] | [.key, .live_bytes.change]]' '[["alloc_b() at model.cpp:20 (train)",4194304],["alloc_a() at model.cpp:10 (train)",2097152],["alloc_d() at data.cpp:40 (train)",8192],["foo_alloc (libfoo.so+0x400)",512],["(no stack captured)",100]]'
    run 0 "$VT" merge --quiet --output "$VT_WORK/again.json" "$B" "$N"
    run 0 "$VT" diff --json "$M" "$VT_WORK/again.json"
    jq_is "$out" '[.changed_sites, .totals.live_bytes.change]' '[0,0]'
    # The merge of one file is that file again, per call site.
    run 0 "$VT" merge -q -o "$VT_WORK/one.json" "$B"
    run 0 "$VT" diff --json "$B" "$VT_WORK/one.json"
    jq_is "$out" '[.changed_sites, .unchanged_sites, .totals.peak_bytes.change]' '[0,5,0]' ;;
merge_directory)
    mkdir -p "$VT_WORK/ranks"
    for r in 1 2 10; do sed "s/\"pid\": 100,/\"pid\": $((1000 + r)),/" "$VT_CLI_DATA/diff_base.json" >"$VT_WORK/ranks/rank$r.json"; done
    echo 'not json' >"$VT_WORK/ranks/notes.txt"
    echo 'not json' >"$VT_WORK/ranks/.hidden.json"
    mkdir "$VT_WORK/ranks/sub.json"
    run 0 "$VT" merge --output "$VT_WORK/ranks/all.json" "$VT_WORK/ranks"; stderr_empty
    stdout_has "merged 3 snapshots: 3 processes on 1 host, 3 devices"
    stdout_has "  nodeA cuda:0  3          15.00 MiB  24.00 MiB   8.00 MiB"
    jq_is "$VT_WORK/ranks/all.json" '[.merged_processes[] | .pid]' '[1001,1002,1010]'
    # Run again: the merged file in the directory is not an input of itself.
    run 0 "$VT" merge --output "$VT_WORK/ranks/all.json" "$VT_WORK/ranks/"
    stdout_has "merged 3 snapshots: 3 processes on 1 host, 3 devices"
    jq_is "$VT_WORK/ranks/all.json" '[.merged_processes[] | .file]' "[\"$VT_WORK/ranks/rank1.json\",\"$VT_WORK/ranks/rank2.json\",\"$VT_WORK/ranks/rank10.json\"]"
    jq_is "$VT_WORK/ranks/all.json" '[(.allocations | length), (.allocations | map(.size) | add)]' '[18,15742764]'
    # Without --output, the merged file left in the directory is an input like the others: each
    # rank's process is then met twice, and merge says so for each.
    run 0 "$VT" merge "$VT_WORK/ranks"
    stdout_has "merged 4 snapshots: 6 processes on 1 host"
    [ "$(grep -c 'is counted twice' "$err")" = 3 ] || fail "expected 3 'counted twice' warnings: $(cat "$err")"
    stderr_has "vramtrace: warning: $VT_WORK/ranks/rank1.json: process 1001 on host 'nodeA' is counted twice: $VT_WORK/ranks/all.json has the same snapshot of it" ;;
merge_of_merged)
    # Merging merged snapshots lists the processes they were made of, and gives what merging the
    # originals gives.
    cd "$VT_CLI_DATA" || fail "cd"
    run 0 "$VT" merge -q -o "$VT_WORK/m1.json" diff_base.json
    run 0 "$VT" merge -q -o "$VT_WORK/m2.json" diff_new.json
    run 0 "$VT" merge "$VT_WORK/m1.json" "$VT_WORK/m2.json"; stderr_empty
    same_text merge_golden.txt "$out"
    run 0 "$VT" merge -q -o "$VT_WORK/m12.json" "$VT_WORK/m1.json" "$VT_WORK/m2.json"
    run 0 "$VT" merge -q -o "$VT_WORK/direct.json" diff_base.json diff_new.json
    jq_is "$VT_WORK/m12.json" '[.merged_processes, .merged_devices, .devices, (.allocations | map(.size) | add)]' \
        "$(jq -c '[.merged_processes, .merged_devices, .devices, (.allocations | map(.size) | add)]' "$VT_WORK/direct.json")"
    run 0 "$VT" diff --json --all "$VT_WORK/direct.json" "$VT_WORK/m12.json"
    jq_is "$out" '[.changed_sites, .unchanged_sites]' '[0,6]' ;;
merge_bad_input)
    B="$VT_CLI_DATA/diff_base.json"
    mkdir -p "$VT_WORK/out" "$VT_WORK/empty" "$VT_WORK/in"
    head -c 900 "$B" >"$VT_WORK/in/cut.json"
    cp "$B" "$VT_WORK/in/good.json"
    run 1 "$VT" merge --output "$VT_WORK/out/m.json" "$B" "$VT_WORK/in/cut.json"; stderr_is_one_line
    stderr_has "vramtrace: error: $VT_WORK/in/cut.json: truncated JSON"
    [ -z "$(listing "$VT_WORK/out")" ] || fail "left behind: $(listing "$VT_WORK/out")"
    run 1 "$VT" merge "$VT_WORK/in"; stderr_is_one_line; stderr_has "$VT_WORK/in/cut.json: truncated JSON"
    run 1 "$VT" merge "$B" "$VT_WORK/nope.json"; stderr_is_one_line
    stderr_has "vramtrace: error: $VT_WORK/nope.json: cannot open: No such file or directory"
    run 1 "$VT" merge "$VT_WORK/empty"; stderr_is_one_line; stderr_has "$VT_WORK/empty: no snapshot files (*.json) in this directory"
    sed 's/"stack": 3}/"stack": 33}/' "$B" >"$VT_WORK/dangling.json"
    run 1 "$VT" merge -q -o "$VT_WORK/out/m.json" "$VT_WORK/dangling.json"; stderr_is_one_line
    stderr_has "$VT_WORK/dangling.json: allocations[3].stack: 33 is not the id of an entry in stacks"
    run 1 "$VT" merge "$VT_WORK/dangling.json" "$B"; stderr_is_one_line
    run 1 "$VT" merge -o "$VT_WORK/no-such-dir/m.json" "$B"; stderr_is_one_line; stderr_has "cannot create a temporary file in $VT_WORK/no-such-dir"
    printf '{"format": "vramtrace-snapshot", "schema_version": 1, "merged_processes": [{"input": "x"}]}' >"$VT_WORK/badext.json"
    run 1 "$VT" merge "$VT_WORK/badext.json"; stderr_is_one_line
    stderr_has "$VT_WORK/badext.json: merged_processes[0].input: expected an unsigned integer, got a string"
    # A merged file whose device rows name a process it does not list.
    run 0 "$VT" merge -q -o "$VT_WORK/m.json" "$B"
    sed 's/{"input": 0, "device": 1,/{"input": 7, "device": 1,/' "$VT_WORK/m.json" >"$VT_WORK/m-bad.json"
    run 1 "$VT" merge "$VT_WORK/m-bad.json"; stderr_is_one_line
    stderr_has "$VT_WORK/m-bad.json: merged_devices[2].input: 7 is not the input of an entry in merged_processes" ;;
merge_usage)
    run 0 "$VT" merge --help; stdout_has "usage: vramtrace merge"
    run 0 "$VT" help merge; stdout_has "usage: vramtrace merge"
    run 2 "$VT" merge; stderr_is_one_line; stderr_has "merge: no snapshot files or directories given (see 'vramtrace merge --help')"
    run 2 "$VT" merge --quiet x.json; stderr_is_one_line; stderr_has "--quiet without --output"
    run 2 "$VT" merge --output; stderr_is_one_line; stderr_has "merge: --output needs a value"
    run 2 "$VT" merge --output= x.json; stderr_is_one_line; stderr_has "--output needs a non-empty path"
    run 2 "$VT" merge --top -1 x.json; stderr_is_one_line
    run 2 "$VT" merge --frames 0 x.json; stderr_is_one_line
    run 2 "$VT" merge --frobnicate x.json; stderr_is_one_line; stderr_has "merge: unknown option '--frobnicate'" ;;
merge_out_of_order)
    reversed "$VT_CLI_DATA/diff_new.json" >"$VT_WORK/diff_new.json" || fail "jq"
    cp "$VT_CLI_DATA/diff_base.json" "$VT_WORK/diff_base.json"
    cd "$VT_WORK" || fail "cd"
    # The file is read twice (its allocations come before its stacks); the result is the same.
    run 0 "$VT" merge -o "$VT_WORK/m.json" diff_base.json diff_new.json; stderr_empty
    same_text "$VT_CLI_DATA/merge_golden.txt" "$out"
    run 0 "$VT" merge -q -o "$VT_WORK/direct.json" "$VT_CLI_DATA/diff_base.json" "$VT_CLI_DATA/diff_new.json"
    jq_is "$VT_WORK/m.json" '[(.allocations | length), (.allocations | map(.size) | add)]' '[12,11547848]'
    run 0 "$VT" diff --json --all "$VT_WORK/direct.json" "$VT_WORK/m.json"
    jq_is "$out" '[.changed_sites, .unchanged_sites]' '[0,6]' ;;
merge_many)
    # 2000 rank files: one row each, the merged tables stay those of one program, memory stays small.
    mkdir -p "$VT_WORK/ranks"
    awk -v dir="$VT_WORK/ranks" 'BEGIN { while ((getline line < ARGV[1]) > 0) doc = doc line "\n";
        for (r = 0; r < 2000; r++) { d = doc; sub(/"pid": 100,/, "\"pid\": " (5000 + r) ",", d);
            f = dir "/rank" r ".json"; printf "%s", d > f; close(f) } }' "$VT_CLI_DATA/diff_base.json"
    run 0 /usr/bin/time -f 'maxrss_kib %M' -o "$VT_WORK/time.txt" "$VT" merge --output "$VT_WORK/all.json" "$VT_WORK/ranks"
    stdout_has "merged 2000 snapshots: 2000 processes on 1 host, 3 devices"
    stdout_has "live at the dumps: 9.77 GiB (10495176000 B) in 12000 allocations"
    run 0 "$VT" diff --json "$VT_CLI_DATA/diff_base.json" "$VT_WORK/all.json"
    jq_is "$out" '[.sites[] | [.key, .live_bytes.new, .live_allocations.new]] | sort' '[["(no stack captured)",200000,2000],["alloc_a() at model.cpp:10 (train)",2097152000,2000],["alloc_b() at model.cpp:20 (train)",8388608000,4000],["alloc_c() at data.cpp:30 (train)",8192000,2000],["foo_alloc (libfoo.so+0x400)",1024000,2000]]'

    jq_is "$VT_WORK/all.json" '[.modules, .frames, .stacks, .merged_processes, .merged_devices, .allocations] | map(length)' '[2,5,4,2000,6000,12000]'
    jq_is "$VT_WORK/all.json" '[.merged_processes[0].pid, .merged_processes[1999].pid]' '[5000,6999]'
    rss=$(awk '/maxrss_kib/ { print $2 }' "$VT_WORK/time.txt")
    [ "$rss" -lt 32768 ] || fail "merge of 2000 files used $rss KiB, more than 32 MiB" ;;
merge_ranks_imbalance)
    # 16 ranks of one job (vt_gen_ranks), rank 5 holding 1 GiB more at cache_activations(int):
    # merge names rank 5, that call site and exactly those bytes; the min/median/max figures are
    # those the input files give (jq over them: the lower median of 16 is the 8th smallest).
    run 0 "$VT_GEN_RANKS" "$VT_WORK/ranks" --ranks 16 --events 1000 --outlier 5 --extra-bytes 1073741824
    for what in current peak; do
        jq -s -c "[.[].devices[0].${what}_bytes] | sort | [.[0], .[7], .[15]]" "$VT_WORK"/ranks/*.json >"$VT_WORK/$what.txt"
    done
    [ "$(cat "$VT_WORK/current.txt")" = "[1998213120,2023901184,3087769600]" ] || fail "inputs' current: $(cat "$VT_WORK/current.txt")"
    [ "$(cat "$VT_WORK/peak.txt")" = "[2266648576,2292336640,3356205056]" ] || fail "inputs' peaks: $(cat "$VT_WORK/peak.txt")"
    mkdir -p "$VT_WORK/o"
    run 0 "$VT" merge -o "$VT_WORK/o/m.json" "$VT_WORK/ranks"; stderr_empty
    stdout_has "imbalance: each rank's GPU, 16 ranks"
    stdout_has "  current  1.86 GiB (1998213120 B), rank 1  1.88 GiB (2023901184 B)  2.88 GiB (3087769600 B), rank 5"
    stdout_has "  peak     2.11 GiB (2266648576 B), rank 1  2.13 GiB (2292336640 B)  3.13 GiB (3356205056 B), rank 5"
    stdout_has "  outliers: 1 (peak with |0.6745 (peak - median) / scale| > 3.5; scale 21.86 MiB (22923366 B) = max(median absolute deviation 7.09 MiB (7436288 B), 1% of the median, 1 MiB))"
    stdout_has "  rank 5 (node0 cuda:5): peak 3.13 GiB (3356205056 B), 1014.58 MiB (1063868416 B) above the median, z +31.3"
    stdout_has "    +1.00 GiB (1073741824 B)  1                    cache_activations(int) at checkpoint.cpp:77 (train)"
    [ "$(grep -c '^    +' "$out")" -eq 1 ] || fail "rank 5 should have one call site above the median"
    M=$VT_WORK/o/m.json
    jq_is "$M" '.imbalance | map([.role, .role_index, .ranks, .current_min_bytes, .current_min_rank, .current_median_bytes, .current_max_bytes, .current_max_rank, .peak_min_bytes, .peak_min_rank, .peak_median_bytes, .peak_max_bytes, .peak_max_rank, .peak_mad_bytes, .scale_bytes, .outliers])' \
        '[["gpu",0,16,1998213120,1,2023901184,3087769600,5,2266648576,1,2292336640,3356205056,5,7436288,22923366,1]]'
    jq_is "$M" '.imbalance_outliers | map([.imbalance, .input, .rank, .host, .device, .peak_bytes, .sites_known, (.sites | map([.bytes, .count]))])' \
        '[[0,5,5,"node0",5,3356205056,true,[[1073741824,1]]]]'
    # The site's stack: cudaMalloc, then the planted call site.
    jq_is "$M" '(.imbalance_outliers[0].sites[0].stack) as $s | [.stacks[] | select(.id == $s)][0] as $st | .frames[$st.frames[$st.call_site]] | [.function, .file, .line]' \
        '["cache_activations(int)","src/model/checkpoint.cpp",77]'
    # summary of the merged file: the same section, each line after "vramtrace: ".
    run 0 "$VT" summary "$M"; stderr_empty
    stdout_has "vramtrace: imbalance: each rank's GPU, 16 ranks"
    stdout_has "vramtrace:   peak     2.11 GiB (2266648576 B), rank 1  2.13 GiB (2292336640 B)  3.13 GiB (3356205056 B), rank 5"
    stdout_has "vramtrace:   rank 5 (node0 cuda:5): peak 3.13 GiB (3356205056 B), 1014.58 MiB (1063868416 B) above the median, z +31.3"
    stdout_has "vramtrace:     +1.00 GiB (1073741824 B)  1                    cache_activations(int) at checkpoint.cpp:77 (train)"
    # The HTML export shows it.
    run 0 "$VT" export -f html -o "$VT_WORK/o/m.html" "$M"
    grep -qF '<h4>rank 5 (node0 cuda:5): peak 3.00 GiB' "$VT_WORK/o/m.html" && fail "wrong peak in the html"
    grep -qF '<h4>rank 5 (node0 cuda:5): peak 3.13 GiB (3356205056 B), z +31.3</h4>' "$VT_WORK/o/m.html" || fail "no outlier in the html"
    grep -qF '<tr><td class="n">+1.00 GiB (1073741824 B)</td><td class="n">1</td><td>cache_activations(int) at src/model/checkpoint.cpp:77 (train)</td></tr>' \
        "$VT_WORK/o/m.html" || fail "no outlier call site in the html"
    # Merging the merged file again: the same figures; rank 5's call sites are no longer known.
    run 0 "$VT" merge -q -o "$VT_WORK/o/mm.json" "$M"
    jq_is "$VT_WORK/o/mm.json" '.imbalance' "$(jq -c '.imbalance' "$M")"
    jq_is "$VT_WORK/o/mm.json" '.imbalance_outliers | map([.rank, .peak_bytes, .sites_known, (.sites | length)])' '[[5,3356205056,false,0]]'
    run 0 "$VT" merge "$VT_WORK/o/mm.json"
    stdout_has "  peak     2.11 GiB (2266648576 B), rank 1  2.13 GiB (2292336640 B)  3.13 GiB (3356205056 B), rank 5"
    stdout_has "    (its call sites at the peak are not known: it came from a merged snapshot)" ;;
merge_ranks_identical)
    # 12 identical ranks (no jitter, no outlier): min, median and max agree and nothing is an outlier.
    run 0 "$VT_GEN_RANKS" "$VT_WORK/ranks" --ranks 12 --events 200 --jitter 0
    mkdir -p "$VT_WORK/o"
    run 0 "$VT" merge -o "$VT_WORK/o/m.json" "$VT_WORK/ranks"
    jq_is "$VT_WORK/ranks/rank0.json" '.devices[0].peak_bytes' 2257268736
    [ "$(jq -s -c '[.[].devices[0].peak_bytes] | unique' "$VT_WORK"/ranks/*.json)" = "[2257268736]" ] || fail "the ranks differ"
    stdout_has "  current  1.85 GiB (1988833280 B), rank 0  1.85 GiB (1988833280 B)  1.85 GiB (1988833280 B), rank 0"
    stdout_has "  peak     2.10 GiB (2257268736 B), rank 0  2.10 GiB (2257268736 B)  2.10 GiB (2257268736 B), rank 0"
    stdout_has "  outliers: 0 (peak with |0.6745 (peak - median) / scale| > 3.5; scale 21.53 MiB (22572687 B) = max(median absolute deviation 0 B, 1% of the median, 1 MiB))"
    [ "$(grep -c '^  rank ' "$out")" -eq 0 ] || fail "an identical rank is listed as an outlier"
    jq_is "$VT_WORK/o/m.json" '[.imbalance[0].peak_mad_bytes, .imbalance[0].outliers, (.imbalance_outliers | length)]' '[0,0,0]' ;;
merge_event_check)
    # The events are checked at parse speed; a record the check cannot vouch for sends the file to
    # the reader alone, which gives the same result, or the same message, as without the check.
    run 0 "$VT_GEN_RANKS" "$VT_WORK/ranks" --ranks 3 --events 400
    R=$VT_WORK/ranks/rank1.json; mkdir -p "$VT_WORK/o" "$VT_WORK/v"
    run 0 "$VT" merge -q -o "$VT_WORK/o/plain.json" "$R"
    strip() { jq -c 'del(.process.command_line, .merged_processes[].file)' "$1"; }
    # Accepted either way: a member the check does not know, records over several lines, a tab.
    awk 'e && ++n == 60 { sub(/\{/, "{\"extra\": [1, {\"a\": 2}], ") } /"events": \[/ { e = 1 } { print }' "$R" >"$VT_WORK/v/extra.json"
    grep -q '"extra"' "$VT_WORK/v/extra.json" || fail "no extra member planted"
    jq . "$R" >"$VT_WORK/v/pretty.json"
    jq -c . "$R" >"$VT_WORK/v/oneline.json"
    for v in extra pretty oneline; do
        run 0 "$VT" merge -q -o "$VT_WORK/o/$v.json" "$VT_WORK/v/$v.json"
        [ "$(strip "$VT_WORK/o/$v.json")" = "$(strip "$VT_WORK/o/plain.json")" ] || fail "$v.json merges differently"
    done
    # Refused with the reader's own message, the record's index included.
    jq '.events[7].type = "bogus"' "$R" >"$VT_WORK/v/type.json"
    run 1 "$VT" merge "$VT_WORK/v/type.json"; stderr_has "events[7].type: \"bogus\" is not one of \"alloc\", \"free\", \"mark\", \"oom\""
    awk 'e && ++n == 1 { sub(/"time_ns": [0-9]*/, "\"time_ns\": -0") } /"events": \[/ { e = 1 } { print }' "$R" >"$VT_WORK/v/minus0.json"
    grep -q '"time_ns": -0,' "$VT_WORK/v/minus0.json" || fail "no -0 planted"
    run 1 "$VT" merge "$VT_WORK/v/minus0.json"; stderr_has "events[0].time_ns: expected an unsigned integer, got 0"
    jq '.events[300].device = 4096' "$R" >"$VT_WORK/v/device.json"
    run 1 "$VT" merge "$VT_WORK/v/device.json"; stderr_has "events[300].device: 4096 is not a device ordinal (-2 to 1023)"
    jq 'del(.events[399].time_ns)' "$R" >"$VT_WORK/v/missing.json"
    run 1 "$VT" merge "$VT_WORK/v/missing.json"; stderr_has "events[399]: missing field \"time_ns\""
    jq '.events[250].stack = 900' "$R" >"$VT_WORK/v/stack.json"
    run 1 "$VT" merge "$VT_WORK/v/stack.json"; stderr_has "events[250].stack: 900 is not the id of an entry in stacks"
    sed '0,/"type": "free"/s/"type": "free", /"type": "free" /' "$R" >"$VT_WORK/v/comma.json"
    run 1 "$VT" merge "$VT_WORK/v/comma.json"; stderr_has "malformed JSON"
    head -c -300 "$R" >"$VT_WORK/v/cut.json"
    run 1 "$VT" merge "$VT_WORK/v/cut.json"; stderr_has "truncated JSON"
    # A syntax error after records simdjson parsed: the message names the line and column of the
    # file, as summary (the reader alone) gives it.
    sed 's/^  "events": \[$/  "events" [/' "$R" >"$VT_WORK/v/syntax.json"
    run 1 "$VT" summary "$VT_WORK/v/syntax.json"; cp "$err" "$VT_WORK/summary.err"
    grep -q 'at line [0-9]*, column 12' "$VT_WORK/summary.err" || fail "no line and column: $(cat "$VT_WORK/summary.err")"
    run 1 "$VT" merge "$VT_WORK/v/syntax.json"; same_text "$VT_WORK/summary.err" "$err" ;;
merge_nvtx_ranges)
    # Three ranks: A and B share the range stack "step > forward" (A's id 1, B's id 2), each has one
    # of its own (A "loader"; B "step > ml:forward": the same names in another domain), C has none.
    cd "$VT_CLI_DATA" || fail "cd"
    M=$VT_WORK/m.json
    run 0 "$VT" merge -o "$M" nvtx_merge_a.json nvtx_merge_b.json nvtx_merge_c.json; stderr_empty
    sed -n '/^by NVTX range/,$p' "$out" >"$VT_WORK/got.txt"
    cat >"$VT_WORK/want.txt" <<'EOF'
by NVTX range, all inputs (the push/pop ranges open on the allocating thread, outermost first; at peak: what each held at each input's peak of the device, summed)
  each rank's GPU
    live                   allocations  at peak               range
    4.00 MiB (4194304 B)   2            8.00 MiB (8388608 B)  step > forward
    4.00 MiB (4194304 B)   1            6.00 MiB (6291456 B)  step > ml:forward
    2.00 MiB (2097152 B)   1            3.00 MiB (3145728 B)  loader
    768.00 KiB (786432 B)  2            2.00 MiB (2097152 B)  (no range)
  host-pinned memory of each rank
    live   allocations  at peak  range
    100 B  1            100 B    (no range)
EOF
    same_text "$VT_WORK/want.txt" "$VT_WORK/got.txt"
    # One merged id per distinct (domains, names), in order of first use; every id renumbered.
    jq_is "$M" '.nvtx_ranges' '[{"id":1,"domains":["",""],"names":["step","forward"]},{"id":2,"domains":[""],"names":["loader"]},{"id":3,"domains":["","ml"],"names":["step","forward"]}]'
    jq_is "$M" '[.allocations[] | [.size, .range // 0]]' '[[1048576,1],[2097152,2],[524288,0],[3145728,1],[4194304,3],[262144,0],[100,0]]'
    jq_is "$M" '[.allocations | group_by(.range // 0)[] | [(.[0].range // 0), (map(.size) | add)]]' '[[0,786532],[1,4194304],[2,2097152],[3,4194304]]'
    # Peaks per ordinal: C's peak (no ranges) is under range 0; host memory had no range open.
    jq_is "$M" '[.peaks[] | [.device, .peak_bytes, .ranges]]' '[[-1,100,null],[0,19922944,[{"range":1,"bytes":8388608,"count":3},{"range":3,"bytes":6291456,"count":1},{"range":2,"bytes":3145728,"count":2},{"range":0,"bytes":2097152,"count":2}]]]'
    jq_is "$M" '[.peaks[] | select(.ranges) | (.ranges | map(.bytes) | add) == .peak_bytes]' '[true]'
    jq_is "$M" '[.nvtx_regions[] | [.address, .size, .range, .input]]' '[["0x7f1000000000",262144,1,0],["0x7f2000300000",524288,3,1]]'
    jq_is "$M" '.nvtx_intervals' '[{"domain":"","name":"epoch 1","start_ns":1000,"end_ns":9000,"start_thread":100,"end_thread":101,"input":0},{"domain":"ml","name":"optimizer","start_ns":2000,"start_thread":200,"input":1}]'
    jq_is "$M" '.dropped' '{"allocations":0,"stacks":0,"peak_sites":0,"nvtx_range_names":3,"nvtx_intervals":3}'
    # The summary of the merged snapshot, per ordinal.
    run 0 "$VT" summary "$M"; stderr_empty
    sed -n '/memory by NVTX range/,/memory inside pools/p' "$out" >"$VT_WORK/got.txt"
    cat >"$VT_WORK/want.txt" <<'EOF'
vramtrace: memory by NVTX range (the push/pop ranges open on the allocating thread, outermost first):
vramtrace:   cuda:0                     live  allocations   at peak
vramtrace:     step > forward       4.00 MiB            2  8.00 MiB
vramtrace:     step > ml:forward    4.00 MiB            1  6.00 MiB
vramtrace:     loader               2.00 MiB            1  3.00 MiB
vramtrace:     (no range)         768.00 KiB            2  2.00 MiB
vramtrace:   host           live  allocations  at peak
vramtrace:     (no range)  100 B            1    100 B
vramtrace:   warning: the range table was full: 0 range stacks and 3 range names not kept (counted under the (more ...) rows)
vramtrace: memory inside pools (NVTX memory API: regions inside the allocations that back them):
EOF
    same_text "$VT_WORK/want.txt" "$VT_WORK/got.txt"
    stdout_has "vramtrace:   cuda:0  step > ml:forward      512.00 KiB        1"
    # A merge of a merged snapshot gives what merging the originals gives.
    run 0 "$VT" merge -q -o "$VT_WORK/ab.json" nvtx_merge_a.json nvtx_merge_b.json
    run 0 "$VT" merge -o "$VT_WORK/abc.json" "$VT_WORK/ab.json" nvtx_merge_c.json; stderr_empty
    sed -n '/^by NVTX range/,$p' "$out" >"$VT_WORK/got.txt"
    run 0 "$VT" merge nvtx_merge_a.json nvtx_merge_b.json nvtx_merge_c.json
    sed -n '/^by NVTX range/,$p' "$out" >"$VT_WORK/want.txt"
    same_text "$VT_WORK/want.txt" "$VT_WORK/got.txt"
    for f in '.nvtx_ranges' '[.allocations[] | [.size, .range // 0]]' '.peaks' '.nvtx_regions' '.nvtx_intervals' '.dropped'; do
        jq_is "$VT_WORK/abc.json" "$f" "$(jq -c "$f" "$M")"
    done
    # Range stacks after the allocations (legal, never what the library writes): read twice, same result.
    jq '{allocations: .allocations} + .' nvtx_merge_b.json >"$VT_WORK/b_late.json"
    run 0 "$VT" merge -q -o "$VT_WORK/late.json" nvtx_merge_a.json "$VT_WORK/b_late.json" nvtx_merge_c.json
    for f in '.nvtx_ranges' '[.allocations[] | [.size, .range // 0]]' '.peaks' '.nvtx_regions'; do
        jq_is "$VT_WORK/late.json" "$f" "$(jq -c "$f" "$M")"
    done ;;
merge_nvtx_roles)
    # Ranges per device role: D is A on two GPUs ("loader" on cuda:1), E is B on cuda:3 (as under
    # CUDA_VISIBLE_DEVICES): E's cuda:3 is its first GPU, so it adds to D's cuda:0.
    cd "$VT_WORK" || fail "cd"
    jq '.devices = [{"device":0,"current_bytes":1572864,"peak_bytes":5242880,"allocation_count":2,"free_count":0,"total_allocated_bytes":1572864,"total_freed_bytes":0},{"device":1,"current_bytes":2097152,"peak_bytes":3145728,"allocation_count":1,"free_count":0,"total_allocated_bytes":2097152,"total_freed_bytes":0}]
        | .allocations[1].device = 1
        | .peaks = [{"device":0,"peak_bytes":5242880,"time_ns":5000,"sites":[{"stack":1,"bytes":5242880,"count":2}],"ranges":[{"range":1,"bytes":4194304,"count":1},{"range":0,"bytes":1048576,"count":1}]},{"device":1,"peak_bytes":3145728,"time_ns":5000,"sites":[{"stack":1,"bytes":3145728,"count":2}],"ranges":[{"range":2,"bytes":3145728,"count":2}]}]' \
        "$VT_CLI_DATA/nvtx_merge_a.json" >d.json
    jq '.devices[0].device = 3 | .allocations[].device = 3 | .peaks[0].device = 3 | .nvtx_regions[0].device = 3' \
        "$VT_CLI_DATA/nvtx_merge_b.json" >e.json
    run 0 "$VT" merge -o de.json d.json e.json; stderr_empty
    sed -n '/^by NVTX range/,$p' "$out" >got.txt
    cat >want.txt <<'EOF'
by NVTX range, all inputs (the push/pop ranges open on the allocating thread, outermost first; at peak: what each held at each input's peak of the device, summed)
  GPU 1 of each rank (in ordinal order)
    live                   allocations  at peak               range
    4.00 MiB (4194304 B)   2            8.00 MiB (8388608 B)  step > forward
    4.00 MiB (4194304 B)   1            6.00 MiB (6291456 B)  step > ml:forward
    512.00 KiB (524288 B)  1            1.00 MiB (1048576 B)  (no range)
  GPU 2 of each rank (in ordinal order)
    live                  allocations  at peak               range
    2.00 MiB (2097152 B)  1            3.00 MiB (3145728 B)  loader
EOF
    same_text want.txt got.txt
    # The merged snapshot keeps the ordinals.
    jq_is de.json '[.peaks[] | [.device, .peak_bytes, .ranges]]' '[[0,5242880,[{"range":1,"bytes":4194304,"count":1},{"range":0,"bytes":1048576,"count":1}]],[1,3145728,[{"range":2,"bytes":3145728,"count":2}]],[3,10485760,[{"range":3,"bytes":6291456,"count":1},{"range":1,"bytes":4194304,"count":2}]]]'
    # A merged input: each ordinal in the role it has in its processes.
    run 0 "$VT" merge de.json; stderr_empty
    sed -n '/^by NVTX range/,$p' "$out" >got.txt
    same_text want.txt got.txt
    run 0 "$VT" merge --top 1 d.json e.json
    stdout_has "    ... and 2 more (--top 0 lists all)" ;;
merge_nvtx_bad_input)
    # A range id that names no range stack, and malformed range stacks: one line, nothing written.
    A=$VT_CLI_DATA/nvtx_merge_a.json
    mkdir -p "$VT_WORK/out"
    bad() { # JQ_FILTER EXPECTED_MESSAGE
        jq "$1" "$A" >"$VT_WORK/bad.json"
        run 1 "$VT" merge -q -o "$VT_WORK/out/m.json" "$VT_WORK/bad.json"; stderr_is_one_line
        stderr_has "vramtrace: error: $VT_WORK/bad.json: $2"
        [ -z "$(listing "$VT_WORK/out")" ] || fail "left behind: $(listing "$VT_WORK/out")"
    }
    bad '.allocations[1].range = 9' 'allocations[1].range: 9 is not the id of an entry in nvtx_ranges'
    bad '.peaks[0].ranges[1].range = 7' 'peaks[0].ranges[1].range: 7 is not the id of an entry in nvtx_ranges'
    bad '.nvtx_regions[0].range = 5' 'nvtx_regions[0].range: 5 is not the id of an entry in nvtx_ranges'
    bad '.nvtx_ranges[1].id = 1' 'nvtx_ranges: id 1 appears more than once'
    bad '.nvtx_ranges[0].id = 0' 'nvtx_ranges[0].id: 0 is reserved for "no range"'
    bad '.nvtx_ranges[0].names = ["step"]' 'nvtx_ranges[0]: domains has 2 entries and names 1 (one of each per open range)'
    bad '.nvtx_ranges[0].categories = ["phase"]' 'nvtx_ranges[0]: categories has 1 entries and domains 2 (one per open range, or none)' ;;
merge_nvtx_categories)
    # P is A with a category on "forward" (step > forward [phase]) and on its interval; B has
    # step > forward without one: two merged range stacks, each with its own bytes.
    cd "$VT_WORK" || fail "cd"
    jq '.nvtx_ranges[0].categories = ["", "phase"] | .nvtx_intervals[0].category = "phase"' \
        "$VT_CLI_DATA/nvtx_merge_a.json" >p.json
    run 0 "$VT" merge -o pb.json p.json "$VT_CLI_DATA/nvtx_merge_b.json"; stderr_empty
    sed -n '/^by NVTX range/,$p' "$out" >got.txt
    cat >want.txt <<'EOF'
by NVTX range, all inputs (the push/pop ranges open on the allocating thread, outermost first; at peak: what each held at each input's peak of the device, summed)
  each rank's GPU
    live                   allocations  at peak               range
    4.00 MiB (4194304 B)   1            6.00 MiB (6291456 B)  step > ml:forward
    3.00 MiB (3145728 B)   1            4.00 MiB (4194304 B)  step > forward
    1.00 MiB (1048576 B)   1            4.00 MiB (4194304 B)  step > forward [phase]
    2.00 MiB (2097152 B)   1            3.00 MiB (3145728 B)  loader
    512.00 KiB (524288 B)  1            1.00 MiB (1048576 B)  (no range)
EOF
    same_text want.txt got.txt
    # categories only on the stack that has one, as the library writes them; intervals keep theirs.
    jq_is pb.json '.nvtx_ranges' '[{"id":1,"domains":["",""],"names":["step","forward"],"categories":["","phase"]},{"id":2,"domains":[""],"names":["loader"]},{"id":3,"domains":["",""],"names":["step","forward"]},{"id":4,"domains":["","ml"],"names":["step","forward"]}]'
    jq_is pb.json '[.allocations[] | [.size, .range // 0]]' '[[1048576,1],[2097152,2],[524288,0],[3145728,3],[4194304,4]]'
    jq_is pb.json '[.peaks[].ranges[] | [.range, .bytes]]' '[[4,6291456],[1,4194304],[3,4194304],[2,3145728],[0,1048576]]'
    jq_is pb.json '[.nvtx_intervals[] | [.name, .category]]' '[["epoch 1","phase"],["optimizer",null]]'
    run 0 "$VT" summary pb.json; stderr_empty
    sed -n '/memory by NVTX range/,/warning: the range table/p' "$out" >got.txt
    cat >want.txt <<'EOF'
vramtrace: memory by NVTX range (the push/pop ranges open on the allocating thread, outermost first):
vramtrace:   cuda:0                          live  allocations   at peak
vramtrace:     step > ml:forward         4.00 MiB            1  6.00 MiB
vramtrace:     step > forward            3.00 MiB            1  4.00 MiB
vramtrace:     step > forward [phase]    1.00 MiB            1  4.00 MiB
vramtrace:     loader                    2.00 MiB            1  3.00 MiB
vramtrace:     (no range)              512.00 KiB            1  1.00 MiB
vramtrace:   warning: the range table was full: 0 range stacks and 3 range names not kept (counted under the (more ...) rows)
EOF
    same_text want.txt got.txt
    # A merge of the merged snapshot keeps them apart too.
    run 0 "$VT" merge -q -o again.json pb.json; stderr_empty
    jq_is again.json '.nvtx_ranges' "$(jq -c '.nvtx_ranges' pb.json)"
    jq_is again.json '[.allocations[] | [.size, .range // 0]]' "$(jq -c '[.allocations[] | [.size, .range // 0]]' pb.json)"
    # A list of categories that are all "" is no category: one stack with B's step > forward.
    jq '.nvtx_ranges[0].categories = ["", ""]' "$VT_CLI_DATA/nvtx_merge_a.json" >empty.json
    run 0 "$VT" merge -q -o eb.json empty.json "$VT_CLI_DATA/nvtx_merge_b.json"; stderr_empty
    jq_is eb.json '.nvtx_ranges' '[{"id":1,"domains":["",""],"names":["step","forward"]},{"id":2,"domains":[""],"names":["loader"]},{"id":3,"domains":["","ml"],"names":["step","forward"]}]'
    jq_is eb.json '[.allocations[] | [.size, .range // 0]]' '[[1048576,1],[2097152,2],[524288,0],[3145728,1],[4194304,3]]' ;;
merge_nvtx_identical_ranks)
    # Two ranks of one program (A, and A as pid 200, rank 1): the same segment addresses. The
    # merged snapshot names each region's and interval's process row (input), so the summary keeps
    # two 1 MiB segments, 768 KiB free in each, and no two segments fold into one.
    cd "$VT_WORK" || fail "cd"
    jq '.process.pid = 200 | .process.rank = "1"' "$VT_CLI_DATA/nvtx_merge_a.json" >a1.json
    run 0 "$VT" merge -q -o m.json "$VT_CLI_DATA/nvtx_merge_a.json" a1.json; stderr_empty
    jq_is m.json '[.nvtx_regions[] | [.input, .segment, .size]]' '[[0,"0x7f1000000000",262144],[1,"0x7f1000000000",262144]]'
    jq_is m.json '[.nvtx_intervals[] | [.input, .name]]' '[[0,"epoch 1"],[1,"epoch 1"]]'
    jq_is m.json '[.merged_processes[] | [.input, .pid, .rank]]' '[[0,100,0],[1,200,1]]'
    run 0 "$VT" summary m.json; stderr_empty
    sed -n '/memory inside pools/,/regions by NVTX range/p' "$out" >got.txt
    cat >want.txt <<'EOF'
vramtrace: memory inside pools (NVTX memory API: regions inside the allocations that back them):
vramtrace:   device  input  segment             size  used by regions  regions  free inside the pool
vramtrace:   cuda:0      0  0x7f1000000000  1.00 MiB       256.00 KiB        1            768.00 KiB
vramtrace:   cuda:0      1  0x7f1000000000  1.00 MiB       256.00 KiB        1            768.00 KiB
vramtrace:   device  regions by NVTX range       bytes  regions
EOF
    same_text want.txt got.txt
    stdout_has "vramtrace:   cuda:0  step > forward         512.00 KiB        2"
    # A process's own snapshot has no input column.
    run 0 "$VT" summary "$VT_CLI_DATA/nvtx_merge_a.json"; stderr_empty
    stdout_has "vramtrace:   device  segment             size  used by regions  regions  free inside the pool"
    stdout_has "vramtrace:   cuda:0  0x7f1000000000  1.00 MiB       256.00 KiB        1            768.00 KiB"
    # A merge of merged snapshots renumbers the rows: (A, A1) then A1 again is rows 0, 1, 2; A1
    # is then counted twice, which merge says in one line.
    run 0 "$VT" merge -q -o mm.json m.json a1.json; stderr_is_one_line
    stderr_has "vramtrace: warning: a1.json: process 200 on host 'nodeA' is counted twice: m.json has the same snapshot of it (an input given twice, or a merged snapshot with its own inputs?)"
    jq_is mm.json '[.nvtx_regions[].input]' '[0,1,2]'
    jq_is mm.json '[.nvtx_intervals[].input]' '[0,1,2]'
    run 0 "$VT" merge -q -o mm2.json a1.json m.json; stderr_is_one_line
    stderr_has "vramtrace: warning: m.json: process 200 on host 'nodeA' is counted twice: a1.json has the same snapshot of it"
    jq_is mm2.json '[.nvtx_regions[].input]' '[0,1,2]'
    jq_is mm2.json '[.merged_processes[] | [.input, .pid]]' '[[0,200],[1,100],[2,200]]'
    # A merged snapshot written before the tag: its regions' processes are unknown ("?"), still
    # not folded into the tagged ones.
    jq 'del(.nvtx_regions[].input) | del(.nvtx_intervals[].input)' m.json >old.json
    run 0 "$VT" merge -q -o mo.json old.json "$VT_CLI_DATA/nvtx_merge_a.json"; stderr_is_one_line
    stderr_has "nvtx_merge_a.json: process 100 on host 'nodeA' is counted twice: old.json has the same snapshot of it"
    jq_is mo.json '[.nvtx_regions[].input]' '[null,null,2]'
    run 0 "$VT" summary mo.json; stderr_empty
    sed -n '/memory inside pools/,/regions by NVTX range/p' "$out" >got.txt
    cat >want.txt <<'EOF'
vramtrace: memory inside pools (NVTX memory API: regions inside the allocations that back them):
vramtrace:   device  input  segment             size  used by regions  regions  free inside the pool
vramtrace:   cuda:0      ?  0x7f1000000000  1.00 MiB       512.00 KiB        2            512.00 KiB
vramtrace:   cuda:0      2  0x7f1000000000  1.00 MiB       256.00 KiB        1            768.00 KiB
vramtrace:   device  regions by NVTX range       bytes  regions
EOF
    same_text want.txt got.txt
    # An input that names no process of the merged input: one line, nothing written.
    mkdir -p out
    jq '.nvtx_regions[1].input = 5' m.json >bad.json
    run 1 "$VT" merge -q -o out/x.json bad.json; stderr_is_one_line
    stderr_has "vramtrace: error: bad.json: nvtx_regions[1].input: 5 is not the input of an entry in merged_processes"
    jq '.nvtx_intervals[0].input = 7' m.json >bad.json
    run 1 "$VT" merge -q -o out/x.json bad.json; stderr_is_one_line
    stderr_has "vramtrace: error: bad.json: nvtx_intervals[0].input: 7 is not the input of an entry in merged_processes"
    [ -z "$(listing out)" ] || fail "left behind: $(listing out)" ;;
scale_bounded_memory)
    # A 32 MB snapshot of 200000 live allocations: diff and merge stream it in a few MiB (keeping
    # the allocations would take more than 20 MiB), and draw progress when stderr is a terminal.
    awk -v n=200000 -v sums="$VT_WORK/sums" 'BEGIN {
        while ((getline line < ARGV[1]) > 0) { if (line ~ /"allocations": \[/) break; print line }
        print "  \"allocations\": ["
        for (i = 0; i < n; i++) {
            size = 4096 + i % 7; total += size
            printf "    {\"address\": \"0x%x\", \"size\": %d, \"kind\": \"device\", \"device\": 0, \"api\": \"cudaMalloc\", \"stream\": \"0x0\", \"thread_id\": 100, \"time_ns\": %d, \"stack\": %d}%s\n", 139637976727552 + i * 8192, size, i, 1 + i % 4, (i + 1 < n ? "," : "")
        }
        print "  ]"; print "}"; print n, total > sums; exit }' "$VT_CLI_DATA/diff_base.json" >"$VT_WORK/big.json"
    read -r count bytes <"$VT_WORK/sums"
    run 0 /usr/bin/time -f 'maxrss_kib %M' -o "$VT_WORK/time-diff.txt" "$VT" diff --json "$VT_CLI_DATA/diff_base.json" "$VT_WORK/big.json"
    jq_is "$out" '[.totals.live_bytes.new, .totals.live_allocations.new]' "[$bytes,$count]"
    rss=$(awk '/maxrss_kib/ { print $2 }' "$VT_WORK/time-diff.txt")
    [ "$rss" -lt 16384 ] || fail "diff of a 32 MB snapshot used $rss KiB, more than 16 MiB"
    mkdir -p "$VT_WORK/o"
    run 0 /usr/bin/time -f 'maxrss_kib %M' -o "$VT_WORK/time-merge.txt" "$VT" merge -q -o "$VT_WORK/o/m.json" "$VT_WORK/big.json" "$VT_WORK/big.json"
    rss=$(awk '/maxrss_kib/ { print $2 }' "$VT_WORK/time-merge.txt")
    [ "$rss" -lt 16384 ] || fail "merge of two 32 MB snapshots used $rss KiB, more than 16 MiB"
    run 0 "$VT" diff --json "$VT_WORK/big.json" "$VT_WORK/o/m.json"
    jq_is "$out" '[.totals.live_bytes.change, .totals.live_allocations.change]' "[$bytes,$count]"
    # summary streams it too: the 200000 allocations fold into 28 entries (4 stacks x 7 sizes).
    run 0 /usr/bin/time -f 'maxrss_kib %M' -o "$VT_WORK/time-summary.txt" "$VT" summary "$VT_WORK/big.json"; stderr_empty
    stdout_has "vramtrace: leaked at exit: $count allocations, "
    rss=$(awk '/maxrss_kib/ { print $2 }' "$VT_WORK/time-summary.txt")
    [ "$rss" -lt 16384 ] || fail "summary of a 32 MB snapshot used $rss KiB, more than 16 MiB"
    # On a terminal (script(1) gives it one): a progress line (the percentage of the file's bytes
    # read, after the first 0.5 s), erased before the report. 24 files take well over 0.5 s (2 s
    # on 2 cores).
    files=$(for i in $(seq 24); do printf " '%s'" "$VT_WORK/big.json"; done)
    script -qec "'$VT' merge $files" "$VT_WORK/typescript" \
        >"$VT_WORK/tty.txt" </dev/null || fail "merge on a terminal failed"
    grep -q 'vramtrace: \[[0-9]*/24\] reading .*big.json: [0-9]*% of 3[0-9].[0-9][0-9] MiB' "$VT_WORK/tty.txt" || fail "no progress line on the terminal"
    erase=$(printf '\033[K')
    # (The same file 24 times: merge warns that its process is counted twice, in 4 lines.)
    grep -aqF "${erase}vramtrace: warning: " "$VT_WORK/tty.txt" || fail "the progress line was not erased before the warnings"
    grep -aqF "vramtrace: warning: and 20 more processes counted twice" "$VT_WORK/tty.txt" || fail "the warnings are not cut at 3"
    grep -aq "^merged 24 snapshots" "$VT_WORK/tty.txt" || fail "no report after the warnings"
    # summary reading a pipe that stalls for 1 s: progress in bytes (a pipe has no size), erased.
    mkfifo "$VT_WORK/slow.json" || fail mkfifo
    { head -c 1000000 "$VT_WORK/big.json"; sleep 1; tail -c +1000001 "$VT_WORK/big.json"; } >"$VT_WORK/slow.json" &
    script -qec "'$VT' summary '$VT_WORK/slow.json'" "$VT_WORK/typescript" >"$VT_WORK/tty-summary.txt" </dev/null ||
        fail "summary on a terminal failed"
    wait
    grep -q 'vramtrace: reading .*slow.json: [0-9.]* [KM]iB' "$VT_WORK/tty-summary.txt" || fail "no progress line for summary"
    grep -aqF "${erase}vramtrace: ==== memory summary" "$VT_WORK/tty-summary.txt" || fail "summary: progress not erased" ;;
diff_merge_keep_peaks_ooms)
    # Snapshots with peaks, OOM records, pools and an event history (export_input.json), and a crash
    # snapshot (process.symbolized false, read through the frame-naming reader): diff and merge keep
    # what they hold.
    in=$VT_CLI_DATA/export_input.json; later=$VT_WORK/later.json; crash=$VT_WORK/crash.json
    # One run later: cuda:0 peaked 2 MiB higher, all of it from stack 2 (an unnamed frame), and two
    # more allocations failed for lack of memory.
    jq '.process.pid = 5000 | .process.rank = "1" | .oom_count = 3 |
        (.devices[] | select(.device == 0) | .peak_bytes) = 6291456 |
        (.peaks[] | select(.device == 0)) |= (.peak_bytes = 6291456 | .sites[0].bytes = 5242880)' "$in" >"$later" || fail jq
    jq '.process.pid = 6000 | .process.symbolized = false | .process.reason = "crash" | .process.signal = "SIGSEGV"' \
        "$in" >"$crash" || fail jq
    run 0 "$VT" diff --json "$in" "$later"; stderr_empty
    jq_is "$out" '.totals.oom_count' '{"base":1,"new":3,"change":2}'
    jq_is "$out" '[.sites[] | [.key, .status, .live_bytes.change, .bytes_at_peak]]' \
        '[["?? (train+0x2000)","grew",0,[{"base":3145728,"new":5242880,"change":2097152,"device":0}]]]'
    run 0 "$VT" diff "$in" "$later"
    stdout_has "OOM failures      1                     3                     +2"
    stdout_has "  0 B     0 B   0 B  0 -> 0       +2.00 MiB (+2097152 B)  grew    ?? (train+0x2000)"
    run 3 "$VT" diff --metric peak --site '?? (train+0x2000)' --fail-if-growth 2097151 "$in" "$later"; stderr_is_one_line
    stderr_has "bytes at the peaks of call site '?? (train+0x2000)' changed by +2.00 MiB (+2097152 B), +66.67%: more than the limit 2097151"
    run 0 "$VT" diff --metric peak --site '?? (train+0x2000)' --fail-if-growth 2MiB "$in" "$later"
    # The crash snapshot's modules are not on this machine: one warning each, and the rest comes through.
    run 0 "$VT" diff --json --all "$in" "$crash"
    [ "$(wc -l <"$err")" -eq 2 ] || fail "expected one warning per module"
    stderr_has "vramtrace: warning: $crash: module /home/me/train: file not found; its frames are not named"
    jq_is "$out" '[.changed_sites, .unchanged_sites, .totals.oom_count.new, [.sites[] | .bytes_at_peak[0].new]]' \
        '[0,4,1,[4096,3145728,1048576,2097152]]'
    run 0 "$VT" merge --top 0 -o "$VT_WORK/m.json" "$in" "$later" "$crash"
    stdout_has "  #  host    pid   rank  devices             current   peak      live at dump         OOM  file"
    stdout_has "  1  node17  5000  1     host,cuda:0,cuda:1  3.00 MiB  8.00 MiB  3 (3.00 MiB) leaked  3    $later"
    stdout_has "  2  node17  6000  -     host,cuda:0,cuda:1  3.00 MiB  6.00 MiB  3 (3.00 MiB)         1    $crash"
    M=$VT_WORK/m.json
    jq_is "$M" '[.oom_count, (.ooms | length), [.merged_processes[] | [.rank, .oom_count]]]' '[5,3,[[-1,1],[1,3],[-1,1]]]'
    jq_is "$M" '[.peaks[] | [.device, .peak_bytes, (.sites | map(.bytes) | add)]]' \
        '[[-1,12288,12288],[0,14680064,14680064],[1,6291456,6291456]]'
    jq_is "$M" '[.frames[] | select(.inlined) | .inlined[0].function]' '["alloc_helper<float>(unsigned long)"]'
    run 0 "$VT" summary "$M"; stderr_empty
    stdout_has "vramtrace: out-of-memory failures: 5 since start, the last 3:"
    stdout_has "vramtrace: peak of cuda:0: 14.00 MiB (14680064 B) in 6 allocations, from:"
    # Merged again with its own inputs: OOM counts add up, rows keep theirs.
    run 0 "$VT" merge -q -o "$VT_WORK/m2.json" "$M" "$later"
    jq_is "$VT_WORK/m2.json" '[.oom_count, [.merged_processes[] | .oom_count]]' '[8,[1,3,1,3]]' ;;
bad_input_every_command)
    # Every command refuses a bad file with one line naming the file and what is wrong, and a
    # status 1 (every command: 3 is diff's gate), wherever the file
    # is given, and writes nothing.
    B=$VT_CLI_DATA/export_input.json; W=$VT_WORK
    : >"$W/empty.json"
    printf '\211PNG\r\n\032\n\000\000\000\rIHDR' >"$W/binary.json"
    printf '{"name": "not a snapshot", "items": [1, 2, 3]}\n' >"$W/foreign.json"
    printf '[1, 2]\n' >"$W/array.json"
    head -c 2000 "$B" >"$W/cut.json"
    printf '{"format": "vramtrace-snapshot", "schema_version": 1, "process": {"pid": 1}}' >"$W/partial.json"
    sed 's/"schema_version": 1,/"schema_version": 7,/' "$B" >"$W/newer.json"
    jq '.peaks[1].sites[0].stack = 9' "$B" >"$W/peak.json"
    jq '.events[1].stack = 8' "$B" >"$W/event.json"
    jq '.ooms[0].stack = 7' "$B" >"$W/oom.json"
    jq '.allocations[2].size = -1' "$B" >"$W/negative.json"
    mkdir -p "$W/dir.json" "$W/o"
    check_all() { # FILE MESSAGE [MESSAGE OF MERGE, which takes a directory for the files in it]
        run 1 "$VT" summary "$1"; stdout_empty; stderr_is_one_line; stderr_has "vramtrace: error: $1: $2"
        run 1 "$VT" diff "$1" "$B"; stdout_empty; stderr_is_one_line; stderr_has "vramtrace: error: $1: $2"
        run 1 "$VT" diff "$B" "$1"; stdout_empty; stderr_is_one_line; stderr_has "vramtrace: error: $1: $2"
        run 1 "$VT" merge "$B" "$1"; stdout_empty; stderr_is_one_line; stderr_has "vramtrace: error: $1: ${3:-$2}"
        run 1 "$VT" merge -q -o "$W/o/m.json" "$1" "$B"; stderr_is_one_line; stderr_has "vramtrace: error: $1: ${3:-$2}"
        for fmt in chrome folded pprof pickle html; do
            run 1 "$VT" export -f $fmt -o "$W/o/x.$fmt" "$1"; stderr_is_one_line; stderr_has "vramtrace: error: $1: $2"
        done
        run 1 "$VT" export -f folded "$1"; stdout_empty; stderr_is_one_line
        [ -z "$(listing "$W/o")" ] || fail "left behind: $(listing "$W/o")"
    }
    check_all "$W/missing.json" "cannot open: No such file or directory"
    check_all "$W/dir.json" "is a directory, not a snapshot file" "no snapshot files (*.json) in this directory"
    check_all "$W/empty.json" "empty file (no JSON document), not a vramtrace snapshot"
    check_all "$W/binary.json" "not JSON, not a vramtrace snapshot"
    check_all "$W/foreign.json" "not a vramtrace snapshot (no \"format\": \"vramtrace-snapshot\" member)"
    check_all "$W/array.json" "not a vramtrace snapshot (the document is a JSON array, not an object)"
    check_all "$W/cut.json" "truncated JSON"
    check_all "$W/partial.json" "process: missing field \"ppid\""
    check_all "$W/newer.json" "schema_version 7 is newer than this vramtrace reads (1); use a newer vramtrace"
    check_all "$W/peak.json" "peaks[1].sites[0].stack: 9 is not the id of an entry in stacks"
    check_all "$W/event.json" "events[1].stack: 8 is not the id of an entry in stacks"
    check_all "$W/oom.json" "ooms[0].stack: 7 is not the id of an entry in stacks"
    check_all "$W/negative.json" "allocations[2].size: expected an unsigned integer, got -1" ;;
# --- against the real library (VRAMTRACE_CLI_TESTS_WITH_PRELOAD=ON) ---
preload_run_true)
    run 0 "$VT" run --output "$VT_WORK/snap-%p.json" -- true ;;
preload_run_nvtx_no_follow)
    # --no-follow: the traced program takes the library out of NVTX_INJECTION64_PATH for the programs
    # it starts, as out of LD_PRELOAD; without it, they keep it.
    lib=$(dirname "$(dirname "$VT")")/lib/libvramtrace.so
    run 0 env -u NVTX_INJECTION64_PATH "$VT" run --no-summary --no-follow -- sh -c 'echo "[$NVTX_INJECTION64_PATH]"'
    stdout_has "[]"
    run 0 env -u NVTX_INJECTION64_PATH "$VT" run --no-summary -- sh -c 'echo "[$NVTX_INJECTION64_PATH]"'
    stdout_has "[$lib]" ;;
preload_run_exit_status)
    run 3 "$VT" run --no-summary -- sh -c 'exit 3' ;;
preload_run_not_found)
    run 127 "$VT" run -- vramtrace-no-such-program-xyz; stderr_has "command not found" ;;
preload_diff_one_site)
    # Two runs of one program that differ in exactly one allocation site, under the real library:
    # the diff names that site and its exact byte and count change, and nothing else, although the
    # two processes load at different addresses. What to expect comes from the program's own
    # bookkeeping ("site FUNCTION FILE:LINE BYTES COUNT" lines), not from vramtrace.
    prog=$(basename "$VT_DIFF_PROG")
    for mode in base new; do
        run 0 "$VT" run --no-summary --output "$VT_WORK/$mode.json" -- "$VT_DIFF_PROG" "$mode"
        cp "$out" "$VT_WORK/$mode.sites"
    done
    changed=$(awk 'NR == FNR { b[$2 " " $3] = $4; c[$2 " " $3] = $5; next }
                   ($4 != b[$2 " " $3] || $5 != c[$2 " " $3]) { print $2, $3, $4 - b[$2 " " $3], $5 - c[$2 " " $3] }' \
              "$VT_WORK/base.sites" "$VT_WORK/new.sites")
    [ "$(echo "$changed" | wc -l)" -eq 1 ] || fail "the program should change one site: $changed"
    set -- $changed; func=$1; where=$2; bytes=$3; count=$4
    key="$func at $where ($prog)"
    # ASLR: the program and the runtime are loaded elsewhere in the second run.
    b1=$(jq -r --arg p "$VT_DIFF_PROG" '.modules[] | select(.path == $p) | .base' "$VT_WORK/base.json")
    b2=$(jq -r --arg p "$VT_DIFF_PROG" '.modules[] | select(.path == $p) | .base' "$VT_WORK/new.json")
    [ -n "$b1" ] && [ "$b1" != "$b2" ] || fail "the program's load address did not change between runs ($b1, $b2): is ASLR off?"
    run 0 "$VT" diff --json "$VT_WORK/base.json" "$VT_WORK/new.json"; stderr_empty
    jq_is "$out" '[.sites[] | [.key, .status, .live_bytes.change, .live_allocations.change]]' "[[\"$key\",\"grew\",$bytes,$count]]"
    jq_is "$out" '[.changed_sites, .totals.live_bytes.change, .totals.live_allocations.change]' "[1,$bytes,$count]"
    # Every other site the program reports is matched and unchanged, and so is scratch_site, which
    # frees all it allocates but held its largest block, 3 MiB, at the device's peak.
    others=$(($(wc -l <"$VT_WORK/base.sites") - 1))
    jq_is "$out" '.unchanged_sites' "$((others + 1))"
    run 0 "$VT" diff --json --all "$VT_WORK/base.json" "$VT_WORK/new.json"
    jq_is "$out" '[.sites[] | select(.key | startswith("scratch_site ")) | [.status, .live_bytes.base, .bytes_at_peak]]' \
        '[["same",0,[{"base":3145728,"new":3145728,"change":0,"device":0}]]]'
    run 0 "$VT" diff "$VT_WORK/base.json" "$VT_WORK/new.json"
    stdout_has "call sites: 1 changed (1 grew, 0 shrank, 0 new, 0 gone), $((others + 1)) unchanged"
    stdout_has "grew    $key"
    # As a CI gate: the growth itself passes, one byte less fails.
    run 0 "$VT" diff --fail-if-growth "$bytes" "$VT_WORK/base.json" "$VT_WORK/new.json"
    run 3 "$VT" diff --fail-if-growth "$((bytes - 1))" "$VT_WORK/base.json" "$VT_WORK/new.json"; stderr_is_one_line
    run 3 "$VT" diff --site "$key" --fail-if-growth "$((bytes - 1))" "$VT_WORK/base.json" "$VT_WORK/new.json"
    run 0 "$VT" diff --site "$key" --fail-if-growth "$bytes" "$VT_WORK/base.json" "$VT_WORK/new.json"
    # Reversed, the site shrank by as much.
    run 0 "$VT" diff --json --fail-if-growth 0 "$VT_WORK/new.json" "$VT_WORK/base.json"
    jq_is "$out" '[.sites[] | [.key, .status, .live_bytes.change]]' "[[\"$key\",\"shrank\",-$bytes]]" ;;
preload_merge_runs)
    # The two runs merged: two process rows, and per site the sum of what both programs report.
    prog=$(basename "$VT_DIFF_PROG")
    mkdir -p "$VT_WORK/runs"
    for mode in base new; do
        run 0 "$VT" run --no-summary --output "$VT_WORK/runs/$mode-%p.json" -- "$VT_DIFF_PROG" "$mode"
        cat "$out" >>"$VT_WORK/all.sites"
    done
    run 0 "$VT" merge --top 0 --output "$VT_WORK/merged.json" "$VT_WORK/runs"; stderr_empty
    stdout_has "merged 2 snapshots: 2 processes on 1 host"
    awk '{ b[$2 " " $3] += $4; c[$2 " " $3] += $5 } END { for (k in b) print k, b[k], c[k] }' "$VT_WORK/all.sites" |
        sort >"$VT_WORK/expected"
    jq_is "$VT_WORK/merged.json" '.allocations | length' "$(awk '{ n += $4 } END { print n }' "$VT_WORK/expected")"
    run 0 "$VT" diff --json --all "$VT_WORK/merged.json" "$VT_WORK/merged.json"
    jq -r --arg p " ($prog)" '.sites[] | select((.key | endswith($p)) and .live_allocations.base > 0) | (.key | sub(" at "; " ") | sub(" \\(.*$"; "")) + " " + (.live_bytes.base | tostring) + " " + (.live_allocations.base | tostring)' \
        "$out" | sort >"$VT_WORK/got"
    same_text "$VT_WORK/expected" "$VT_WORK/got" ;;
export_formats)
    # The CLI reads a snapshot file (export_input.json holds the unit tests' fixture snapshot,
    # tests/cli/export/export_fixture.h) and writes exactly the unit tests' golden files.
    gold=$VT_CLI_DATA/../export/data; in=$VT_CLI_DATA/export_input.json
    run 0 "$VT" export --format chrome "$in"; stderr_empty; same_text "$out" "$gold/chrome.json"
    run 0 "$VT" export --format=folded "$in"; stderr_empty; same_text "$out" "$gold/folded_exit.txt"
    run 0 "$VT" export -f folded --at peak --device 0 "$in"; same_text "$out" "$gold/folded_peak_device0.txt"
    # The page without the bodies of its <style> and viewer <script>, as the unit test compares it.
    run 0 "$VT" export -f html -- "$in"; stderr_empty
    sed -e '/^<style>$/,/^<\/style>/{/^<style>$/b;/^<\/style>/b;d}' -e '/^<script>$/,/^<\/script>/{/^<script>$/b;/^<\/script>/b;d}' \
        "$out" >"$VT_WORK/page.html"
    same_text "$VT_WORK/page.html" "$gold/report.html"
    run 0 "$VT" export -f pprof -o "$VT_WORK/p.pb.gz" "$in"; stdout_empty; stderr_empty
    gzip -dc "$VT_WORK/p.pb.gz" >"$VT_WORK/p.pb" || fail "pprof output is not gzip"
    same_text "$VT_WORK/p.pb" "$gold/pprof_exit.pb"
    run 0 "$VT" export -f pickle --output "$VT_WORK/s.pickle" "$in"; stdout_empty; stderr_is_one_line
    stderr_has "vramtrace: warning: $in: 1 live allocation(s) left out: not on a CUDA device"
    same_text "$VT_WORK/s.pickle" "$gold/memory_snapshot.pickle"
    listing "$VT_WORK" | grep -q tmp && fail "a temporary file was left behind"
    run 0 "$VT" help export; stdout_has "usage: vramtrace export --format FORMAT" ;;
view)
    # `vramtrace view`: the export's page in a new 0600 file in $TMPDIR, its path on stdout;
    # xdg-open (a stand-in on PATH that records its arguments) only with a display.
    in=$VT_CLI_DATA/export_input.json
    mkdir -p "$VT_WORK/tmp" "$VT_WORK/path"
    printf '#!/bin/sh\necho "$@" >>"%s/opened"\nexit ${XDG_STATUS:-0}\n' "$VT_WORK" >"$VT_WORK/path/xdg-open"
    chmod +x "$VT_WORK/path/xdg-open"
    run 0 env -u DISPLAY -u WAYLAND_DISPLAY TMPDIR="$VT_WORK/tmp" PATH="$VT_WORK/path:$PATH" "$VT" view "$in"
    stderr_empty
    page=$(cat "$out")
    case "$page" in "$VT_WORK/tmp/vramtrace-view-"??????".html") ;; *) fail "path $page" ;; esac
    [ "$(stat -c %a "$page")" = 600 ] || fail "mode $(stat -c %a "$page")"
    "$VT" export -f html "$in" >"$VT_WORK/export.html" 2>/dev/null
    same_text "$page" "$VT_WORK/export.html"
    [ -e "$VT_WORK/opened" ] && fail "xdg-open ran without a display"
    run 0 env DISPLAY=:7 TMPDIR="$VT_WORK/tmp" PATH="$VT_WORK/path:$PATH" "$VT" view "$in"; stderr_empty
    [ "$(cat "$VT_WORK/opened")" = "$(cat "$out")" ] || fail "xdg-open got '$(cat "$VT_WORK/opened")'"
    run 0 env DISPLAY=:7 XDG_STATUS=3 TMPDIR="$VT_WORK/tmp" PATH="$VT_WORK/path:$PATH" "$VT" view "$in"
    stderr_is_one_line; stderr_has "vramtrace: warning: xdg-open could not open the page; open $(cat "$out") in a browser"
    run 0 env DISPLAY=:7 TMPDIR="$VT_WORK/tmp" PATH="$VT_WORK/path:$PATH" "$VT" view --no-open "$in"
    [ "$(wc -l <"$VT_WORK/opened")" -eq 2 ] || fail "xdg-open ran with --no-open"
    [ "$(ls "$VT_WORK/tmp" | wc -l)" -eq 4 ] || fail "files in TMPDIR: $(ls "$VT_WORK/tmp")"
    # A compare page; errors.
    run 0 env -u DISPLAY -u WAYLAND_DISPLAY TMPDIR="$VT_WORK/tmp" "$VT" view --base "$VT_CLI_DATA/diff_base.json" "$VT_CLI_DATA/diff_new.json"
    grep -q '{"mode":"compare"' "$(cat "$out")" || fail "not a compare page"
    run 1 env TMPDIR="$VT_WORK/tmp" "$VT" view "$VT_WORK/missing.json"; stderr_is_one_line
    run 1 env -u DISPLAY TMPDIR="$VT_WORK/none" "$VT" view "$in"; stderr_is_one_line
    stderr_has "vramtrace: error: cannot create a file in $VT_WORK/none: No such file or directory"
    run 2 "$VT" view; stderr_has "no snapshot file given"
    run 2 "$VT" view --port 8080 "$in"; stderr_is_one_line; stderr_has "view: --port goes with --serve"
    run 2 "$VT" view --serve --port 70000 "$in"; stderr_is_one_line
    stderr_has "view: --port needs a port number (0 to 65535), got '70000'"
    run 2 "$VT" export -f folded --base "$in" "$in"; stderr_has "--base applies to html only"
    run 0 "$VT" help view; stdout_has "usage: vramtrace view [options] SNAPSHOT" ;;
export_consumers)
    # What the formats' readers check, with Python's own json and pickle modules.
    in=$VT_CLI_DATA/export_input.json
    run 0 "$VT" export -f chrome -o "$VT_WORK/t.json" "$in"
    python3 - "$VT_WORK/t.json" >"$out" 2>"$err" <<'PY' || fail "chrome trace check"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
counters = [e for e in ev if e["ph"] == "C"]
assert {e["name"] for e in counters} == {"tracked bytes host", "tracked bytes cuda:0", "tracked bytes cuda:1"}
assert [e["args"]["bytes"] for e in counters if e["name"] == "tracked bytes cuda:0"] == [0, 1048576, 4194304, 1048576]
assert [e["ts"] for e in ev if e.get("cat") == "mark"] == [1500000.0]
assert sorted(e["args"]["size"] for e in ev if e.get("cat") == "alloc") == [4096, 1048576, 2097152, 3145728]
assert all(e["ph"] in "MCi" for e in ev)
PY
    run 0 "$VT" export -f pickle -o "$VT_WORK/s.pickle" "$in"
    python3 - "$VT_WORK/s.pickle" "$(dirname "$0")" >"$out" 2>"$err" <<'PY' || fail "pickle check"
import pickle, pickletools, sys
sys.path.insert(0, sys.argv[2])
from restricted_unpickle import load_restricted
raw = open(sys.argv[1], "rb").read()
assert raw[:2] == b"\x80\x04"
# Only opcodes that PyTorch's memory_viz JavaScript unpickler knows.
viewer = {"PROTO", "EMPTY_DICT", "EMPTY_LIST", "MARK", "SETITEMS", "APPENDS", "BININT", "BININT1", "BININT2",
          "LONG1", "SHORT_BINUNICODE", "BINUNICODE", "NEWTRUE", "NEWFALSE", "NONE", "TUPLE2", "STOP",
          "MEMOIZE", "BINGET", "LONG_BINGET"}
ops = {op.name for op, _, _ in pickletools.genops(raw)}
assert ops <= viewer, ops - viewer
d = load_restricted(raw)
assert [(s["device"], s["address"], s["total_size"]) for s in d["segments"]] == [(0, 0x7f3a00000000, 1048576), (1, 0x7f4a00000000, 2097152)]
for s in d["segments"]:
    assert [b["address"] for b in s["blocks"]] == [s["address"]] and sum(b["size"] for b in s["blocks"]) == s["total_size"]
assert [[e["action"] for e in t] for t in d["device_traces"]] == [
    ["segment_alloc", "alloc", "segment_alloc", "alloc", "free_requested", "free_completed", "segment_free", "oom"],
    ["segment_alloc", "alloc"]]
assert d["device_traces"][0][-1]["device_free"] == 1073741824
assert d["segments"][0]["frames"][1] == {"filename": "/src/alloc.h", "line": 7, "name": "alloc_helper<float>(unsigned long)"}
assert d["segments"][0]["blocks"][0]["frames"] == d["segments"][0]["frames"] == d["device_traces"][0][0]["frames"]
assert d["device_traces"][0][2]["frames"][1] == {"filename": "/home/me/train", "line": 0, "name": "train+0x2000"}
PY
    run 0 "$VT" export -f folded "$in"
    bad=$(grep -cvE '^[^ ;][^;]*(;[^;]+)* [0-9]+$' "$out"); [ "$bad" -eq 0 ] || fail "$bad malformed folded lines"
    [ "$(awk '{ s += $NF } END { print s }' "$out")" -eq 3149824 ] || fail "folded bytes do not add up to the live bytes"
    run 0 "$VT" export -f html "$in"
    grep -qE '(src|href)=' "$out" && fail "the html report loads something"
    stdout_has '<script type="application/json" id="vt-data">' ;;
export_pprof_protoc)
    # A real protobuf decoder reads the pprof output (protobuf-compiler; skipped without protoc).
    command -v protoc >/dev/null || { echo "protoc not installed"; exit 77; }
    proto_dir=$VT_CLI_DATA/../../../tools/export
    run 0 "$VT" export -f pprof -o "$VT_WORK/p.pb.gz" "$VT_CLI_DATA/export_input.json"
    gzip -dc "$VT_WORK/p.pb.gz" | protoc --proto_path="$proto_dir" --decode=perftools.profiles.Profile profile.proto \
        >"$out" 2>"$err" || fail "protoc cannot decode the profile"
    [ "$(grep -c '^sample {' "$out")" -eq 3 ] || fail "expected 3 samples"
    [ "$(grep -c '^location {' "$out")" -eq 5 ] || fail "expected 5 locations"
    stdout_has 'string_table: "inuse_space"'
    stdout_has 'string_table: "alloc_helper<float>(unsigned long)"'
    [ "$(grep -c '^  value: 2097152$' "$out")" -eq 1 ] || fail "the cuda:1 sample" ;;
export_pprof_go)
    # pprof itself (`go tool pprof`, from golang-go) reads the profile; skipped without Go.
    command -v go >/dev/null || { echo "go not installed"; exit 77; }
    run 0 "$VT" export -f pprof -o "$VT_WORK/p.pb.gz" "$VT_CLI_DATA/export_input.json"
    HOME=$VT_WORK GOCACHE=$VT_WORK/gocache go tool pprof -raw "$VT_WORK/p.pb.gz" >"$out" 2>"$err" || fail "pprof cannot read the profile"
    stdout_has "inuse_objects/count inuse_space/bytes[dflt]"
    stdout_has "api:[cudaMallocAsync] device:[cuda:1] kind:[device]"
    stdout_has "make_buffer(unsigned long) /src/train.cpp:42"
    stdout_has "/home/me/train 3b1f5c2a [FN][FL][LN][IN]"
    [ "$(grep -cE '^ +1 +(4096|1048576|2097152): ' "$out")" -eq 3 ] || fail "expected the 3 samples" ;;
export_pprof_nvtx)
    # The nvtx_range label of the samples at exit, read back by a real protobuf decoder (protoc, from
    # protobuf-compiler in the README's apt line: without it this case fails). pprof_samples.awk
    # prints each sample as its values (allocations, bytes) and its labels, key=value.
    command -v protoc >/dev/null || fail "protoc not installed (protobuf-compiler)"
    proto_dir=$VT_CLI_DATA/../../../tools/export
    samples() { # PROFILE: its samples, sorted, into $VT_WORK/got.txt
        gzip -dc "$1" | protoc --proto_path="$proto_dir" --decode=perftools.profiles.Profile profile.proto \
            >"$VT_WORK/decoded.txt" 2>"$err" || fail "protoc cannot decode $1"
        awk -f "$(dirname "$0")/pprof_samples.awk" "$VT_WORK/decoded.txt" | LC_ALL=C sort >"$VT_WORK/got.txt"
    }
    run 0 "$VT" export -f pprof -o "$VT_WORK/a.pb.gz" "$VT_CLI_DATA/nvtx_merge_a.json"
    samples "$VT_WORK/a.pb.gz"
    cat >"$VT_WORK/want.txt" <<'EOF'
1 1048576 device=cuda:0 kind=device api=cudaMalloc category=other nvtx_range=step > forward
1 2097152 device=cuda:0 kind=device api=cudaMalloc category=other nvtx_range=loader
1 524288 device=cuda:0 kind=device api=cudaMalloc category=other nvtx_range=(no range)
EOF
    same_text "$VT_WORK/want.txt" "$VT_WORK/got.txt"
    # A merged snapshot: the ranges of three inputs under their merged ids.
    run 0 "$VT" merge -q -o "$VT_WORK/m.json" "$VT_CLI_DATA/nvtx_merge_a.json" "$VT_CLI_DATA/nvtx_merge_b.json" \
        "$VT_CLI_DATA/nvtx_merge_c.json"
    run 0 "$VT" export -f pprof -o "$VT_WORK/m.pb.gz" "$VT_WORK/m.json"
    samples "$VT_WORK/m.pb.gz"
    cat >"$VT_WORK/want.txt" <<'EOF'
1 100 device=host kind=host_pinned api=cudaHostAlloc category=other nvtx_range=(no range)
1 2097152 device=cuda:0 kind=device api=cudaMalloc category=other nvtx_range=loader
1 4194304 device=cuda:0 kind=device api=cudaMalloc category=other nvtx_range=step > ml:forward
2 4194304 device=cuda:0 kind=device api=cudaMalloc category=other nvtx_range=step > forward
2 786432 device=cuda:0 kind=device api=cudaMalloc category=other nvtx_range=(no range)
EOF
    same_text "$VT_WORK/want.txt" "$VT_WORK/got.txt"
    # At the peak the samples are by stack only: no range label.
    run 0 "$VT" export -f pprof --at peak -o "$VT_WORK/p.pb.gz" "$VT_CLI_DATA/nvtx_merge_a.json"
    samples "$VT_WORK/p.pb.gz"
    echo "4 8388608 device=cuda:0 category=other" >"$VT_WORK/want.txt"
    same_text "$VT_WORK/want.txt" "$VT_WORK/got.txt" ;;
export_no_history)
    jq 'del(.events, .event_history)' "$VT_CLI_DATA/export_input.json" >"$VT_WORK/nohist.json"
    run 0 "$VT" export -f chrome "$VT_WORK/nohist.json"; stderr_is_one_line
    stderr_has "vramtrace: warning: $VT_WORK/nohist.json: the snapshot has no event history (VRAMTRACE_EVENTS=0, or an older vramtrace): the trace"
    jq_is "$out" '[.traceEvents[] | select(.name == "tracked bytes cuda:0") | .args.bytes]' "[0,1048576]"
    jq_is "$out" '.otherData.history' '"none: only allocations live at the dump"'
    # A merged snapshot has none on purpose (process.reason "merge"): the warnings say so.
    run 0 "$VT" merge -q -o "$VT_WORK/merged.json" "$VT_CLI_DATA/export_input.json"
    jq_is "$VT_WORK/merged.json" '[.process.reason, has("events")]' '["merge",false]'
    run 0 "$VT" export -f chrome "$VT_WORK/merged.json"; stderr_is_one_line
    stderr_has "vramtrace: warning: $VT_WORK/merged.json: the snapshot has no event history (a merged snapshot: merge leaves out the processes' histories): the trace shows only the allocations live at the dump, at the times they were made"
    run 0 "$VT" export -f pickle -o "$VT_WORK/merged.pickle" "$VT_WORK/merged.json"
    stderr_has "vramtrace: warning: $VT_WORK/merged.json: the snapshot has no event history (a merged snapshot: merge leaves out the processes' histories): device_traces are empty"
    # Schema 1 files of before the event history and peaks: every format that can, works.
    f=$VT_CLI_DATA/schema-v1.json
    for fmt in chrome folded pprof pickle html; do run 0 "$VT" export -f $fmt -o "$VT_WORK/o.$fmt" "$f"; done
    python3 "$(dirname "$0")/restricted_unpickle.py" "$VT_WORK/o.pickle" >"$out" 2>"$err" || fail "restricted unpickle"
    run 1 "$VT" export -f folded --at peak "$f"; stderr_is_one_line
    stderr_has "vramtrace: error: $f: the snapshot records no peak composition" ;;
export_errors)
    in=$VT_CLI_DATA/export_input.json
    run 2 "$VT" export -f svg "$in"; stdout_empty; stderr_is_one_line
    stderr_has "vramtrace: error: export: unknown format 'svg' (formats: chrome, folded, pprof, pickle, html) (see 'vramtrace export --help')"
    run 2 "$VT" export "$in"; stderr_is_one_line; stderr_has "export: --format is required"
    run 2 "$VT" export -f chrome; stderr_is_one_line; stderr_has "export: no snapshot file given"
    run 2 "$VT" export -f chrome --at peak "$in"; stderr_is_one_line; stderr_has "--at applies to folded, pprof and html only"
    run 2 "$VT" export -f folded --at middle "$in"; stderr_is_one_line; stderr_has "--at takes exit or peak, got 'middle'"
    run 2 "$VT" export -f folded --device x "$in"; stderr_is_one_line; stderr_has "--device takes a device ordinal"
    run 2 "$VT" export -f folded --frobnicate "$in"; stderr_is_one_line; stderr_has "export: unknown option '--frobnicate'"
    run 2 "$VT" export -f folded "$in" "$in"; stderr_is_one_line; stderr_has "more than one snapshot"
    run 1 "$VT" export -f folded --device 7 "$in"; stderr_is_one_line; stderr_has "$in: the snapshot has no device cuda:7"
    run 1 "$VT" export -f chrome "$VT_WORK/nope.json"; stdout_empty; stderr_is_one_line
    stderr_has "vramtrace: error: $VT_WORK/nope.json: cannot open: No such file or directory"
    head -c 300 "$in" >"$VT_WORK/cut.json"
    run 1 "$VT" export -f chrome "$VT_WORK/cut.json"; stdout_empty; stderr_is_one_line; stderr_has "truncated JSON"
    run 1 "$VT" export -f chrome -o "$VT_WORK/no/such/dir/t.json" "$in"; stderr_is_one_line
    stderr_has "vramtrace: error: cannot write $VT_WORK/no/such/dir/t.json: No such file or directory"
    run 1 "$VT" export -f html -o "$VT_WORK/no/such/dir/x.html" "$in"; stderr_is_one_line
    stderr_has "vramtrace: error: cannot write $VT_WORK/no/such/dir/x.html: No such file or directory"
    ! grep -q '\.tmp\.' "$err" || fail "a temporary name in the error"
    # A binary format is not written to a terminal (every format: case export_not_to_terminal).
    script -qec "$VT export -f pprof $in" "$VT_WORK/typescript" >"$out" 2>&1; status=$?
    [ "$status" -eq 2 ] || fail "pprof to a terminal: status $status"
    stdout_has "the pprof format is not for a terminal: give --output PATH (-o " ;;
preload_export)
    # A program run under the real library, exported: the folded stacks hold exactly the bytes the
    # program says each of its sites left live (leaf frame = the site's function), the trace's
    # counter ends at the device's current bytes, and the pickle loads with one segment per live
    # device allocation.
    run 0 "$VT" run --no-summary --output "$VT_WORK/run.json" -- "$VT_DIFF_PROG" base
    awk '$1 == "site" { print $2, $4 }' "$out" | sort >"$VT_WORK/expected"
    run 0 "$VT" export -f folded "$VT_WORK/run.json"; stderr_empty
    awk '{ n = split($1, f, ";"); b[f[n]] += $NF } END { for (k in b) print k, b[k] }' "$out" | sort >"$VT_WORK/got"
    same_text "$VT_WORK/expected" "$VT_WORK/got"
    run 0 "$VT" export -f chrome -o "$VT_WORK/t.json" "$VT_WORK/run.json"; stderr_empty
    current=$(jq '.devices[] | select(.device == 0) | .current_bytes' "$VT_WORK/run.json")
    jq_is "$VT_WORK/t.json" '[.traceEvents[] | select(.name == "tracked bytes cuda:0")] | last | .args.bytes' "$current"
    run 0 "$VT" export -f pickle -o "$VT_WORK/s.pickle" "$VT_WORK/run.json"
    segments=$(jq '[.allocations[] | select(.device >= 0)] | length' "$VT_WORK/run.json")
    python3 -c 'import sys; sys.path.insert(0, sys.argv[2]); from restricted_unpickle import load_restricted; d = load_restricted(open(sys.argv[1], "rb").read()); print(len(d["segments"]))' \
        "$VT_WORK/s.pickle" "$(dirname "$0")" >"$out" 2>"$err" || fail "the pickle does not load"
    [ "$(cat "$out")" -eq "$segments" ] || fail "expected $segments segments"
    for fmt in pprof html; do run 0 "$VT" export -f $fmt -o "$VT_WORK/o.$fmt" "$VT_WORK/run.json"; done ;;
read_stdin)
    # '-' is standard input for every command that reads snapshots: a file redirected in and a
    # pipe give exactly what the file named gives.
    f=$VT_DATA/summary_input.json
    "$VT" summary - <"$f" >"$out" 2>"$err" || fail "summary - <file"
    same_text "$out" "$VT_DATA/summary_golden.txt"; stderr_empty
    cat "$f" | "$VT" summary - >"$out" 2>"$err" || fail "cat file | summary -"
    same_text "$out" "$VT_DATA/summary_golden.txt"; stderr_empty
    run 0 "$VT" export -f folded "$f"; cp "$out" "$VT_WORK/folded"
    cat "$f" | "$VT" export -f folded - >"$out" 2>"$err" || fail "cat file | export -f folded -"
    same_text "$out" "$VT_WORK/folded"; stderr_empty
    "$VT" diff - "$f" <"$f" >"$out" 2>"$err" || fail "diff - FILE <FILE"
    [ "$(head -n 2 "$out")" = "base  -: pid 4242 on node17, exit, ./train --epochs 3 --name my run
new   $f: pid 4242 on node17, exit, ./train --epochs 3 --name my run" ] || fail "diff's file lines"
    stdout_has "call sites: 0 changed (0 grew, 0 shrank, 0 new, 0 gone), 6 unchanged"
    "$VT" merge -q -o "$VT_WORK/piped.json" - <"$f" >"$out" 2>"$err" || fail "merge -o M - <FILE"
    run 0 "$VT" merge -q -o "$VT_WORK/named.json" "$f"
    jq_is "$VT_WORK/piped.json" '[.merged_processes[].file]' '["-"]'
    for m in piped named; do
        jq -S 'del(.process.command_line) | .merged_processes[].file = ""' "$VT_WORK/$m.json" >"$VT_WORK/$m.cmp" ||
            fail "jq cannot read $m.json"
    done
    same_text "$VT_WORK/piped.cmp" "$VT_WORK/named.cmp"
    # Nothing on standard input, and standard input closed: one line each.
    : | "$VT" summary - >"$out" 2>"$err"; [ $? -eq 1 ] || fail "an empty pipe: status"
    stdout_empty; stderr_is_one_line
    stderr_has "vramtrace: error: -: empty file (no JSON document), not a vramtrace snapshot"
    "$VT" export -f folded - >"$out" 2>"$err" <&-; [ $? -eq 1 ] || fail "stdin closed: status"
    stdout_empty; stderr_is_one_line
    stderr_has "vramtrace: error: -: cannot open standard input: No such file or directory"
    # A terminal is refused at once rather than waited on.
    if command -v script >/dev/null; then
        script -qec "$VT summary -" "$VT_WORK/typescript" >"$out" 2>&1; status=$?
        [ "$status" -eq 1 ] || fail "summary - on a terminal: status $status"
        stdout_has "vramtrace: error: -: standard input is a terminal: pipe a snapshot in or name a file"
    fi ;;
preload_run_output_stdout)
    # run --output -: the snapshot is the program's standard output, piped into a reading command.
    # The program reports its sites into a file, leaving stdout to the snapshot: the folded stacks
    # then hold exactly the bytes it says each site left live.
    { "$VT" run --quiet --output - -- "$VT_DIFF_PROG" base "$VT_WORK/sites" </dev/null 2>"$VT_WORK/run.err"
      echo $? >"$VT_WORK/run.status"; } | "$VT" export -f folded - >"$out" 2>"$err" || fail "export -f folded -"
    [ "$(cat "$VT_WORK/run.status")" -eq 0 ] || fail "run: status $(cat "$VT_WORK/run.status")"
    [ ! -s "$VT_WORK/run.err" ] || fail "run wrote on stderr: $(cat "$VT_WORK/run.err")"
    stderr_empty
    awk '$1 == "site" { print $2, $4 }' "$VT_WORK/sites" | sort >"$VT_WORK/expected"
    [ "$(wc -l <"$VT_WORK/expected")" -eq 4 ] || fail "the program should report 4 sites"
    awk '{ n = split($1, f, ";"); b[f[n]] += $NF } END { for (k in b) print k, b[k] }' "$out" | sort >"$VT_WORK/got"
    same_text "$VT_WORK/expected" "$VT_WORK/got"
    # A program that writes to stdout spoils it: its buffered output is flushed at exit, after the
    # snapshot (which is what run --help and the README say).
    { "$VT" run --quiet --output - -- "$VT_DIFF_PROG" base </dev/null 2>"$VT_WORK/run.err"; } |
        "$VT" summary - >"$out" 2>"$err"; [ $? -eq 1 ] || fail "summary of a spoilt snapshot: status"
    stdout_empty; stderr_is_one_line
    stderr_has "vramtrace: error: -: malformed JSON (parse error at line "
    stderr_has "<U+000A>}<U+000A>s'; expected end of input)" ;;
summary_framework_rules)
    # A checkpoint recorded on the H200 (PyTorch, caching allocator): call sites past PyTorch's
    # internals with their via; a user's rules file ahead of the shipped ones; a broken one said
    # once and ignored.
    snap=$VT_DATA/torch_default_checkpoint.json
    run 0 "$VT" summary --top 3 "$snap"
    stdout_has "main at /work/main/tests/gpu/attribution/torch_categories.py:49 (python) via torch.optim.adam.Adam.step"
    stdout_has "vramtrace:     optimizer_state     32.00 MiB   32.00 MiB"
    stderr_empty
    printf '# the script'"'"'s main is an entry of its own\nentry python=yes file=*/torch_categories.py function=main group=mine\n' >"$VT_WORK/mine.rules"
    VRAMTRACE_FRAMEWORK_RULES=$VT_WORK/mine.rules run 0 "$VT" summary --top 3 "$snap"
    stdout_has "<module> at /work/main/tests/gpu/attribution/torch_categories.py:68 (python) via at::cuda::getCUDABlasLtWorkspace"
    stdout_has "<module> at /work/main/tests/gpu/attribution/torch_categories.py:68 (python) via main"
    stderr_empty
    printf 'skip module=libfoo*\nbogus function=x\n' >"$VT_WORK/broken.rules"
    VRAMTRACE_FRAMEWORK_RULES=$VT_WORK/broken.rules run 0 "$VT" summary --top 3 "$snap"
    stdout_has "torch_categories.py:49 (python) via torch.optim.adam.Adam.step"
    stderr_is_one_line
    stderr_has "VRAMTRACE_FRAMEWORK_RULES: $VT_WORK/broken.rules:2: unknown action 'bogus' (skip, entry, name or mark); the file is ignored, the shipped rules apply"
    VRAMTRACE_FRAMEWORK_RULES=$VT_WORK/missing.rules run 0 "$VT" summary --top 3 "$snap"
    stderr_has "VRAMTRACE_FRAMEWORK_RULES: cannot read $VT_WORK/missing.rules; the shipped rules apply"
    # A FIFO named as the rules file is not waited on (no writer ever comes): said once, the
    # shipped rules apply.
    mkfifo "$VT_WORK/fifo.rules"
    VRAMTRACE_FRAMEWORK_RULES=$VT_WORK/fifo.rules run 0 timeout 20 "$VT" summary --top 3 "$snap"
    stdout_has "torch_categories.py:49 (python) via torch.optim.adam.Adam.step"
    stderr_is_one_line
    stderr_has "VRAMTRACE_FRAMEWORK_RULES: cannot read $VT_WORK/fifo.rules; the shipped rules apply" ;;
merge_directory_skips)
    # A directory of snapshots also holds files made from them: each one that is no snapshot is
    # one warning and left out; a file named on the command line is still an error.
    mkdir -p "$VT_WORK/ranks" "$VT_WORK/only"
    cp "$VT_CLI_DATA/diff_base.json" "$VT_WORK/ranks/a.json"; cp "$VT_CLI_DATA/diff_new.json" "$VT_WORK/ranks/b.json"
    run 0 "$VT" export -f chrome -o "$VT_WORK/ranks/trace.json" "$VT_WORK/ranks/a.json"
    echo '[1, 2]' >"$VT_WORK/ranks/list.json"
    run 0 "$VT" merge -q -o "$VT_WORK/both.json" "$VT_WORK/ranks/a.json" "$VT_WORK/ranks/b.json"
    run 0 "$VT" merge -q -o "$VT_WORK/dir.json" "$VT_WORK/ranks"
    [ "$(wc -l <"$err")" -eq 2 ] || fail "expected 2 warnings"
    stderr_has "vramtrace: warning: $VT_WORK/ranks/list.json: not a vramtrace snapshot (the document is a JSON array, not an object); skipped"
    stderr_has "vramtrace: warning: $VT_WORK/ranks/trace.json: not a vramtrace snapshot (no \"format\": \"vramtrace-snapshot\" member); skipped"
    jq_is "$VT_WORK/dir.json" '[.merged_processes[] | .file]' "[\"$VT_WORK/ranks/a.json\",\"$VT_WORK/ranks/b.json\"]"
    [ "$(jq -c .allocations "$VT_WORK/dir.json")" = "$(jq -c .allocations "$VT_WORK/both.json")" ] || fail "allocations differ"
    run 1 "$VT" merge "$VT_WORK/ranks/trace.json" "$VT_WORK/ranks/a.json"; stderr_is_one_line
    stderr_has "vramtrace: error: $VT_WORK/ranks/trace.json: not a vramtrace snapshot (no \"format\": \"vramtrace-snapshot\" member)"
    cp "$VT_WORK/ranks/trace.json" "$VT_WORK/only/"
    run 1 "$VT" merge "$VT_WORK/only"; [ "$(wc -l <"$err")" -eq 2 ] || fail "expected a warning and an error"
    stderr_has "vramtrace: error: no snapshot to merge: the one file read is not a snapshot" ;;
did_you_mean)
    # A mistyped command or long option: one line with the nearest name, status 2.
    run 2 "$VT" sumary x.json; stderr_is_one_line
    stderr_has "vramtrace: error: unknown command 'sumary' (did you mean 'summary'?) (see 'vramtrace --help')"
    run 2 "$VT" --verison; stderr_is_one_line
    stderr_has "vramtrace: error: unknown option '--verison' (did you mean '--version'?) (see 'vramtrace --help')"
    run 2 "$VT" frobnicate; stderr_is_one_line
    stderr_has "vramtrace: error: unknown command 'frobnicate' (see 'vramtrace --help')"
    run 2 "$VT" help sumary; stderr_is_one_line
    stderr_has "vramtrace: error: unknown command 'sumary' (did you mean 'summary'?) (see 'vramtrace --help')"
    S=$VT_DATA/summary_input.json
    run 2 "$VT" summary --fram 3 "$S"; stderr_is_one_line
    stderr_has "vramtrace: error: summary: unknown option '--fram' (did you mean '--frames'?) (see 'vramtrace summary --help')"
    run 2 "$VT" summary --frames=0 "$S"; stderr_is_one_line
    stderr_has "vramtrace: error: summary: --frames needs a number from 1 to 256, got '0' (see 'vramtrace summary --help')"
    run 2 "$VT" diff --fail-if-grow 1MiB "$S" "$S"; stderr_is_one_line
    stderr_has "vramtrace: error: diff: unknown option '--fail-if-grow' (did you mean '--fail-if-growth'?) (see 'vramtrace diff --help')"
    run 2 "$VT" merge --ouput m.json "$S"; stderr_is_one_line
    stderr_has "vramtrace: error: merge: unknown option '--ouput' (did you mean '--output'?) (see 'vramtrace merge --help')"
    run 2 "$VT" export --fromat html "$S"; stderr_is_one_line
    stderr_has "vramtrace: error: export: unknown option '--fromat' (did you mean '--format'?) (see 'vramtrace export --help')"
    run 2 "$VT" run --no-sumary -- true; stderr_is_one_line
    stderr_has "vramtrace: error: run: unknown option '--no-sumary' (did you mean '--no-summary'?) (see 'vramtrace run --help')"
    run 2 "$VT" view --zzzzzz "$S"; stderr_is_one_line
    stderr_has "vramtrace: error: view: unknown option '--zzzzzz' (see 'vramtrace view --help')" ;;
exit_codes)
    # One convention: 0 ok, 1 failed, 2 usage; diff's gate is 3. Each --help says so.
    S=$VT_DATA/summary_input.json
    for c in summary merge export view top; do
        run 0 "$VT" $c --help; stdout_has "2 usage error"
    done
    run 0 "$VT" diff --help; stdout_has "3 the growth exceeded LIMIT."
    run 0 "$VT" --help; stdout_has "Exit status: 0 success, 1 failed (bad input, output error), 2 usage error, 3 \`diff\`'s"
    run 1 "$VT" summary "$VT_WORK/none.json"; run 1 "$VT" diff "$VT_WORK/none.json" "$S"
    run 1 "$VT" merge "$VT_WORK/none.json"; run 1 "$VT" export -f folded "$VT_WORK/none.json"
    run 1 "$VT" view --no-open "$VT_WORK/none.json"
    run 2 "$VT" summary; run 2 "$VT" diff "$S"; run 2 "$VT" merge; run 2 "$VT" export "$S"; run 2 "$VT" view
    run 3 "$VT" diff --fail-if-growth 0 "$VT_CLI_DATA/diff_base.json" "$VT_CLI_DATA/diff_new.json" ;;
export_not_to_terminal)
    # html, pickle and pprof never go to a terminal: one line naming an output to give, status 2,
    # nothing written; into a pipe or with -o they are written as before.
    S=$VT_CLI_DATA/export_input.json
    for f in html pickle pprof; do
        script -qec "'$VT' export --format $f '$S'" "$VT_WORK/typescript" >"$VT_WORK/tty.txt" </dev/null
        status=$?; [ "$status" -eq 2 ] || fail "export --format $f on a terminal: status $status, expected 2"
        case $f in html) ext=html ;; pickle) ext=pickle ;; pprof) ext=pb.gz ;; esac
        grep -qF "vramtrace: error: export: the $f format is not for a terminal: give --output PATH (-o export_input.$ext) or redirect stdout (see 'vramtrace export --help')" "$VT_WORK/tty.txt" \
            || { cat "$VT_WORK/tty.txt"; fail "no refusal for $f on a terminal"; }
        [ "$(wc -l <"$VT_WORK/tty.txt")" -eq 1 ] || fail "more than one line for $f on a terminal"
    done
    run 0 "$VT" export --format html "$S"; stdout_has "<!DOCTYPE html>"
    script -qec "'$VT' export --format folded '$S'" "$VT_WORK/typescript" >"$VT_WORK/tty.txt" </dev/null \
        || fail "folded stacks on a terminal failed" ;;
summary_torch_hint)
    # A PyTorch run on its caching allocator: the headline says the call sites are segments and how
    # to get one record per tensor (the headline of tests/unit/report/data/torch_default_checkpoint.json).
    run 0 "$VT" summary "$VT_DATA/torch_default_checkpoint.json"; stderr_empty
    sed '/---- details ----/q' "$out" >"$VT_WORK/headline.txt"
    same_text "$VT_CLI_DATA/answer_torch.txt" "$VT_WORK/headline.txt" ;;
preload_summary_steps)
    # Marks at every step, a cache block kept from each: the cache grew, the parameters (before the
    # first mark) are held since start, the peak is placed in its step. Times, pid and host vary.
    run 0 "$VT" run --output "$VT_WORK/steps.json" -- "$VT_ANSWER_PROG" steps
    run 0 "$VT" summary "$VT_WORK/steps.json"; stderr_empty
    answer_text "$out" >"$VT_WORK/answer.txt"
    same_text "$VT_CLI_DATA/answer_steps.txt" "$VT_WORK/answer.txt" ;;
preload_summary_oom)
    # A refused 64 GiB request: named by the error, with the request and its call site.
    run 0 "$VT" run --output "$VT_WORK/oom.json" -- "$VT_ANSWER_PROG" oom
    run 0 "$VT" summary "$VT_WORK/oom.json"; stderr_empty
    answer_text "$out" >"$VT_WORK/answer.txt"
    same_text "$VT_CLI_DATA/answer_oom.txt" "$VT_WORK/answer.txt" ;;
preload_summary_frames)
    # One helper called from two places: one call site by default, two with --frames 3.
    run 0 "$VT" run --no-summary --output "$VT_WORK/helper.json" -- "$VT_ANSWER_PROG" helper
    run 0 "$VT" summary "$VT_WORK/helper.json"
    stdout_has "vramtrace: leaked at exit: 5 allocations, 320.00 KiB (327680 B), from 1 call site:"
    run 0 "$VT" summary --frames 3 "$VT_WORK/helper.json"; stderr_empty
    answer_text "$out" >"$VT_WORK/answer.txt"
    same_text "$VT_CLI_DATA/answer_frames.txt" "$VT_WORK/answer.txt" ;;
preload_readme_sample)
    # The README's sample summary is the example program's headline today (times, pid and host
    # aside).
    prog=$(dirname "$VT")/leaky_pipeline
    run 0 "$VT" run --output "$VT_WORK/demo.json" -- "$prog"
    run 0 "$VT" summary "$VT_WORK/demo.json"
    sed '/---- details ----/q' "$out" | normalized >"$VT_WORK/sample.txt"
    awk '/<!-- sample-summary -->/{f=1; next} f && /^```$/{if (b) exit; b=1; next} b{print}' "$VT_README" | normalized >"$VT_WORK/readme.txt"
    [ -s "$VT_WORK/readme.txt" ] || fail "no sample summary in $VT_README"
    same_text "$VT_WORK/readme.txt" "$VT_WORK/sample.txt" ;;
preload_readme_quick_start)
    # The README's quick start, run as .ci/run runs its test command (bash -euo pipefail), with the
    # build's bin directory first on PATH, in a scratch directory.
    cmd=$(awk '/<!-- quick-start -->/{found=1; next} found && /^```sh/{inblock=1; next} inblock && /^```/{exit} inblock{print}' "$VT_README")
    [ "$(echo "$cmd" | wc -l)" -eq 5 ] || fail "the quick start is not 5 lines: $cmd"
    (cd "$VT_WORK" && PATH=$(dirname "$VT"):$PATH bash -euo pipefail -c "$cmd") >"$out" 2>"$err" \
        || fail "the quick start failed"
    grep -q "^vramtrace: ---- details ----$" "$err" || fail "no summary from the quick start"
    grep -q "alloc.* <- " "$out" || fail "summary --frames 3 named no caller"
    [ -s "$VT_WORK/report.html" ] && [ -s "$VT_WORK/run.json" ] || fail "the quick start wrote no report.html or run.json" ;;
*)
    echo "unknown case: $case_name"; exit 2 ;;
esac
exit 0
