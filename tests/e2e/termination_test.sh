#!/bin/bash
# How a traced run ends (docs/triggers.md, "How a run ends") on the stand-in driver:
# termination_test.sh CASE. Each case runs the same program traced and untraced and asserts the
# same end (exit status, or the terminating signal) and, where a report is written, that its live
# set is exactly what the program printed (expect-live lines).
# Environment (set by CMake): VT (vramtrace), VT_LIB (libvramtrace.so), VT_PROG
# (standin_prog_terminate), VT_CUDART (the stand-in libcudart.so.13), VT_SRC (the source tree),
# VT_WORK (a scratch directory for this case).
set -u
case_name=$1
rm -rf "$VT_WORK" && mkdir -p "$VT_WORK" || exit 1
W=$VT_WORK
cd "$W" || exit 1
PIDS=""
cleanup() { for p in $PIDS; do kill -9 "$p" 2>/dev/null; done; }
trap cleanup EXIT
fail() {
    echo "FAIL [$case_name]: $*"
    for f in "$W"/*.out "$W"/*.err; do [ -f "$f" ] && { echo "--- $f:"; cat "$f"; }; done
    exit 1
}
LIVE_JQ='. as $d | .allocations[] | . as $a | ($d.stacks[] | select(.id == $a.stack)) as $st
  | $d.frames[$st.frames[$st.call_site]] as $fr
  | "expect-live \($a.size) \($a.api) \($a.device) \($fr.function | sub("\\(\\)$"; "")) \($fr.file | split("/") | last):\($fr.line)"'
# live_set_is SNAPSHOT OUT: the snapshot's live allocations are exactly OUT's expect-live lines.
live_set_is() {
    [ -f "$1" ] || fail "no snapshot $1"
    got=$(jq -r "$LIVE_JQ" "$1" | sort) || fail "jq cannot read $1"
    want=$(grep '^expect-live' "$2" | sort)
    [ "$got" = "$want" ] || fail "live set of $1:
$got
expected:
$want"
}
jq_is() {
    got=$(jq -c "$2" "$1") || fail "jq cannot read $1 ($2)"
    [ "$got" = "$3" ] || fail "jq '$2' on $1: got $got, expected $3"
}
# How a process ended, from its status in bash: "exited N" or "signaled N" (bash shows a death by
# signal N as 128+N, as `vramtrace run` returns it).
ended() { if [ "$1" -gt 128 ]; then echo "signaled $(($1 - 128))"; else echo "exited $1"; fi; }
. "$(dirname "$0")/../support/wait_for.sh" # wait_for FILE
# start NAME MODE [traced]: the program in the background with SIGINT and SIGQUIT at their
# defaults (a background job of a script inherits them ignored); PID: its pid once it is ready.
start() {
    name=$1; mode=$2
    if [ "${3:-}" = traced ]; then
        env --default-signal=INT,QUIT LD_PRELOAD="$VT_LIB" VRAMTRACE_OUTPUT="$W/$name.json" \
            ${EXTRA_ENV:-} "$VT_PROG" "$mode" "$W/ready-$name" >"$W/$name.out" 2>"$W/$name.err" &
    else
        env --default-signal=INT,QUIT "$VT_PROG" "$mode" "$W/ready-$name" >"$W/$name.out" 2>"$W/$name.err" &
    fi
    JOB=$!
    PIDS="$PIDS $JOB"
    wait_for "$W/ready-$name"
    PID=$(cat "$W/ready-$name")
}
# finish: waits for the job started last; END: how it ended.
finish() { wait "$JOB"; END=$(ended $?); }
# same_end MODE SIGNAL: untraced and traced, SIGNAL sent once ready; sets END (the same for both).
same_end() {
    start plain "$1"; kill "-$2" "$PID"; finish; plain_end=$END
    start traced "$1" traced; kill "-$2" "$PID"; finish
    [ "$plain_end" = "$END" ] || fail "untraced: $plain_end, traced: $END"
    seen_plain=$(grep '^seen' plain.out); seen_traced=$(grep '^seen' traced.out)
    [ "$seen_plain" = "$seen_traced" ] || fail "dispositions differ: untraced
$seen_plain
traced:
$seen_traced"
}

case $case_name in
sigint_default|sighup_default|sigquit_default|sigterm_default)
    sig=${case_name%_default}; sig=${sig#sig}; sig=$(echo "$sig" | tr a-z A-Z)
    ulimit -c 0
    same_end default "$sig"
    [ "$END" = "signaled $(kill -l "$sig")" ] || fail "ended $END, expected death by SIG$sig"
    live_set_is traced.json traced.out
    jq_is traced.json ".process | [.reason, .signal, .signal_sender_pid == $$]" \
        "[\"exit\",\"SIG$sig\",true]" ;;
sigterm_timeout)
    # timeout(1) signals the program, then its whole process group; 4 s: the program is ready (its
    # allocations made) long before, on a loaded machine too.
    env LD_PRELOAD="$VT_LIB" VRAMTRACE_OUTPUT="$W/traced.json" timeout -s TERM 4 "$VT_PROG" default "$W/r1" >traced.out 2>traced.err
    traced=$?
    timeout -s TERM 4 "$VT_PROG" default "$W/r2" >plain.out 2>plain.err
    [ "$traced" = $? ] && [ "$traced" = 124 ] || fail "timeout returned $traced traced"
    live_set_is traced.json traced.out
    jq_is traced.json .process.signal '"SIGTERM"'
    # Under vramtrace run: the program gets SIGTERM once (from timeout's group signal), the report
    # names timeout as the sender, and run passes nothing on.
    timeout -s TERM 4 "$VT" run --no-summary -o "$W/run.json" -- "$VT_PROG" default "$W/r3" >run.out 2>run.err
    [ $? = 124 ] || fail "timeout of run returned other than 124"
    live_set_is run.json run.out
    jq_is run.json .process.signal '"SIGTERM"'
    [ "$(tail -n 1 run.err)" = "vramtrace: wrote $W/run.json (peak 6.00 MiB on cuda:0; 1 process traced); standin_prog_terminate was ended by SIGTERM" ] ||
        fail "verdict: $(tail -n 1 run.err)" ;;
handler_exit)
    same_end handler-exit TERM
    [ "$END" = "exited 0" ] || fail "ended $END"
    grep -qx 'handler-ran 1' traced.out || fail "the program's handler did not run once"
    grep -qx 'seen signal-returned default' traced.out || fail "signal() did not return SIG_DFL"
    live_set_is traced.json traced.out
    jq_is traced.json '.process | [.reason, .signal]' '["exit",null]' ;;
ignored)
    same_end ignore TERM
    [ "$END" = "exited 0" ] || fail "ended $END"
    grep -qx still-running traced.out || fail "the program did not keep running"
    live_set_is traced.json traced.out
    jq_is traced.json '.process | [.reason, .signal]' '["exit",null]' ;;
restored_default)
    # The program's own SIGINT handler, then SIG_DFL set back after the first CUDA call (Python's
    # exit path): that SIGINT writes the report too.
    same_end restore INT
    [ "$END" = "signaled 2" ] || fail "ended $END"
    grep -qx 'seen signal-returned program-handler' traced.out || fail "signal() did not return the program's handler"
    live_set_is traced.json traced.out
    jq_is traced.json .process.signal '"SIGINT"' ;;
report_off)
    EXTRA_ENV=VRAMTRACE_SIGNAL_REPORT=0 same_end default TERM
    [ "$END" = "signaled 15" ] || fail "ended $END"
    [ ! -e traced.json ] || fail "a report was written with VRAMTRACE_SIGNAL_REPORT=0" ;;
ctrl_c_twice)
    # The report goes to a FIFO whose reader never reads: the write blocks; a second SIGINT 0.5 s
    # after the first ends the process at once, long before the 5 s bound.
    mkfifo out.fifo
    sleep 30 <out.fifo & PIDS="$PIDS $!"
    env --default-signal=INT LD_PRELOAD="$VT_LIB" VRAMTRACE_OUTPUT="$W/out.fifo" VRAMTRACE_SUMMARY=0 \
        "$VT_PROG" many "$W/ready" >traced.out 2>traced.err & JOB=$!
    wait_for ready
    t0=$(date +%s%N); kill -INT "$(cat ready)"; sleep 0.5; kill -INT "$(cat ready)"
    finish; ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    [ "$END" = "signaled 2" ] || fail "ended $END"
    [ "$ms" -lt 2000 ] || fail "took $ms ms to end after the first SIGINT" ;;
same_sender_twice)
    # timeout(1)'s way: SIGTERM to the program, then again to its group, from the same process;
    # here 20 ms apart, so that the second arrives while the first one's report (100,000
    # allocations, about half a second) is written. It is the same request: the report is whole.
    EXTRA_ENV=STANDIN_TERMINATE_EXTRA=100000 start traced many traced
    python3 -c 'import os, sys, time; p = int(sys.argv[1]); os.kill(p, 15); time.sleep(0.02); os.kill(p, 15)' "$PID"
    finish
    [ "$END" = "signaled 15" ] || fail "ended $END"
    jq_is traced.json '.process | [.reason, .signal]' '["exit","SIGTERM"]'
    jq_is traced.json '.allocations | length' 100002 ;;
run_killed)
    # kill -TERM of vramtrace run: the program gets it, writes its report, run returns 128+15.
    "$VT" run --no-summary -o "$W/run.json" -- "$VT_PROG" default "$W/ready" >run.out 2>run.err & JOB=$!
    PIDS="$PIDS $JOB"
    wait_for ready
    kill -TERM "$JOB"; finish
    [ "$END" = "signaled 15" ] || fail "run ended $END" # 128+15, as bash shows a death by SIGTERM
    live_set_is run.json run.out
    jq_is run.json '.process | [.signal, .signal_sender_pid]' "[\"SIGTERM\",$JOB]"
    [ "$(tail -n 1 run.err)" = "vramtrace: wrote $W/run.json (peak 6.00 MiB on cuda:0; 1 process traced); standin_prog_terminate was ended by SIGTERM" ] ||
        fail "verdict: $(tail -n 1 run.err)" ;;
python_ctrl_c)
    line=$(grep -n '# @hold$' "$VT_SRC/tests/e2e/python/terminate_program.py" | cut -d: -f1)
    plain=$(python3 "$VT_SRC/tests/e2e/pty_interrupt.py" r1 plain.out python3 "$VT_SRC/tests/e2e/python/terminate_program.py" "$VT_CUDART" r1)
    traced=$(python3 "$VT_SRC/tests/e2e/pty_interrupt.py" r2 traced.out env LD_PRELOAD="$VT_LIB" VRAMTRACE_OUTPUT="$W/traced.json" \
        python3 "$VT_SRC/tests/e2e/python/terminate_program.py" "$VT_CUDART" r2)
    [ "$plain" = "signaled 2" ] && [ "$traced" = "$plain" ] || fail "untraced: $plain, traced: $traced"
    grep -q KeyboardInterrupt traced.out || fail "no KeyboardInterrupt traceback"
    jq_is traced.json "[.process.signal, [$LIVE_JQ]]" \
        "[\"SIGINT\",[\"expect-live 4194304 cuMemAlloc_v2 0 hold terminate_program.py:$line\"]]"
    # The same through vramtrace run: run returns 130, as a shell reports the death by SIGINT.
    run=$(python3 "$VT_SRC/tests/e2e/pty_interrupt.py" r3 run.out "$VT" run -o "$W/run.json" -- python3 \
        "$VT_SRC/tests/e2e/python/terminate_program.py" "$VT_CUDART" r3)
    [ "$run" = "exited 130" ] || fail "run ended $run"
    jq_is run.json .process.signal '"SIGINT"'
    grep -q "vramtrace: wrote $W/run.json (peak 4.00 MiB on cuda:0; 1 process traced); python3 was ended by SIGINT" run.out ||
        fail "no verdict line in run's output" ;;
verdicts)
    "$VT" run -- /bin/true >true.out 2>true.err; [ $? = 0 ] || fail "run /bin/true failed"
    [ "$(cat true.err)" = "vramtrace: no CUDA allocation was seen in true: nothing to report" ] || fail "true: $(cat true.err)"
    "$VT" run -- sh -c '/bin/true; /bin/true' >sh.out 2>sh.err
    [ "$(cat sh.err)" = "vramtrace: no CUDA allocation was seen in sh and its 2 child processes: nothing to report" ] || fail "sh: $(cat sh.err)"
    CUDA_VISIBLE_DEVICES= "$VT" run -- /bin/true >cvd.out 2>cvd.err
    [ "$(cat cvd.err)" = "vramtrace: no CUDA allocation was seen in true: nothing to report (CUDA_VISIBLE_DEVICES is empty, so the program sees no GPU)" ] ||
        fail "CUDA_VISIBLE_DEVICES: $(cat cvd.err)"
    # SIGKILL: nothing could be written; with VRAMTRACE_PERIOD the last periodic snapshot is named.
    for period in "" 0.1; do
        rm -f ready
        VRAMTRACE_PERIOD=$period "$VT" run --no-summary -o "$W/k.json" -- "$VT_PROG" default "$W/ready" >k.out 2>k.err & JOB=$!
        PIDS="$PIDS $JOB"
        wait_for ready; [ -n "$period" ] && wait_for "$W/k.periodic.json"
        kill -KILL "$(cat ready)"; finish
        [ "$END" = "signaled 9" ] || fail "run ended $END" # run's 128+9 reads as 137 in bash too
        if [ -z "$period" ]; then
            want="vramtrace: standin_prog_terminate was killed by SIGKILL before it could write (set VRAMTRACE_PERIOD=30 to keep a periodic snapshot)"
        else
            want="vramtrace: standin_prog_terminate was killed by SIGKILL before it could write; last periodic snapshot: $W/k.periodic.json"
        fi
        [ "$(tail -n 1 k.err)" = "$want" ] || fail "SIGKILL (period '$period'): $(tail -n 1 k.err)"
    done
    # A normal exit: the report and the peak.
    "$VT" run --no-summary -o "$W/n.json" -- "$VT_PROG" handler-exit "$W/ready2" >n.out 2>n.err & JOB=$!
    wait_for ready2; kill -TERM "$(cat ready2)"; finish
    [ "$(tail -n 1 n.err)" = "vramtrace: wrote $W/n.json (peak 6.00 MiB on cuda:0; 1 process traced)" ] || fail "exit: $(tail -n 1 n.err)" ;;
*)
    echo "unknown case $case_name"; exit 2 ;;
esac
echo "PASS [$case_name]"
