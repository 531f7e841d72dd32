# The TUI cases of live_test.sh (sourced by it; its helpers and variables are in scope): `vramtrace
# top` run by tmux in a detached 80x24 terminal, keys sent with send-keys, the screen read with
# capture-pane after each. tmux is part of the README's test set-up: without it these cases fail.
command -v "$VT_TMUX" >/dev/null 2>&1 || fail "tmux not found (VT_TMUX=$VT_TMUX); the TUI cases need it"
TMUX_SOCKET=$W/tmux.sock
screen=$W/screen
tm() { "$VT_TMUX" -S "$TMUX_SOCKET" "$@"; }
# tui COMMAND...: a detached session running COMMAND in an 80x24 terminal (TERM=screen: colours).
tui() {
    tm -f /dev/null new-session -d -x 80 -y 24 -e "XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR" -e "NO_COLOR=${TUI_NO_COLOR:-}" \
        "$*; sleep 30" || fail "tmux cannot start a session"
}
capture() { tm capture-pane -p >"$screen" || fail "capture-pane failed"; }
# shows TEXT: the screen, or what scrolled off it, holds TEXT within 10 s (the UI reads once a
# second).
shows() {
    i=0
    while :; do
        tm capture-pane -p -S - >"$screen" || fail "capture-pane failed"
        grep -qF -- "$1" "$screen" && return 0
        i=$((i + 1)); [ $i -gt 100 ] && { cat "$screen"; fail "the screen does not show: $1"; }
        sleep 0.1
    done
}
# line N TEXT: line N of the screen (from 1) starts with TEXT, within 10 s.
line_is() {
    i=0
    while :; do
        capture
        got=$(sed -n "$1p" "$screen")
        case $got in "$2"*) return 0 ;; esac
        i=$((i + 1)); [ $i -gt 100 ] && { cat "$screen"; fail "line $1 is '$got', expected it to start with '$2'"; }
        sleep 0.1
    done
}
# line_like N PATTERN: line N of the screen matches the shell pattern PATTERN (* any text), within
# 10 s: for a line whose middle depends on where the tree is checked out.
line_like() {
    i=0
    while :; do
        capture
        got=$(sed -n "$1p" "$screen")
        # shellcheck disable=SC2254
        case $got in $2) return 0 ;; esac
        i=$((i + 1)); [ $i -gt 100 ] && { cat "$screen"; fail "line $1 is '$got', expected it to match '$2'"; }
        sleep 0.1
    done
}
key() { tm send-keys "$@" || fail "send-keys $*"; }
# An SGR sequence that sets a foreground colour 30-37 (39, the default colour, is no colour).
COLOUR_CODE="$(printf '\033')\[([0-9]+;)*3[0-7](;[0-9]+)*m"
# The first call-site row is line 6 of an 80x24 screen: title, one device bar, the sparkline, a
# blank line, the table's title and its header.
SITE1=7

case $case_name in
tui_keys)
    start a
    tui "$VT" top --pid "$PID"
    shows "vramtrace top: pid $PID"
    line_is 2 "cuda:0  ["
    shows "] 11.00 MiB peak 11.00 MiB of 1.00 GiB"
    line_is 3 "last 120 s cuda:0 "
    line_is 5 "top call sites (all devices, by bytes; 3 live, 11.00 MiB)"
    line_is $SITE1 "6.00 MiB       2     0  hold_weights() a...live_program.cpp:$WEIGHTS_LINE (vt_live_program)"
    line_is $((SITE1 + 1)) "5.00 MiB       1     0  hold_buffer(unsi...live_program.cpp:$BUFFER_LINE (vt_live_program)"
    shows 'mark "loaded"'; shows 'mark "ready"'
    line_is 24 "q quit  j/k move  Enter stack  d device  o sort  s snapshot  ? keys"
    # Enter: the selected (first) site's stack below it; j then Enter: the second's.
    key Enter
    line_is $((SITE1 + 1)) "      hold_weights() at "
    line_is $((SITE1 + 2)) "      main at "
    key j; key Enter
    line_is $((SITE1 + 1)) "5.00 MiB       1     0  hold_buffer(unsi...live_program.cpp:$BUFFER_LINE (vt_live_program)"
    line_is $((SITE1 + 2)) "      hold_buffer(unsigned long) at "
    key Enter
    line_is $((SITE1 + 2)) ""
    # d: device 0 only, then all devices again.
    key d; line_is 5 "top call sites (cuda:0, by bytes;"
    key d; line_is 5 "top call sites (all devices, by bytes;"
    # o: by allocations (hold_weights, 2, first), then by call site (hold_buffer first).
    key o; line_is 5 "top call sites (all devices, by allocations;"
    line_is $SITE1 "6.00 MiB       2"
    key o; line_is 5 "top call sites (all devices, by growth over 10 s;"
    key o; line_is 5 "top call sites (all devices, by call site;"
    line_is $SITE1 "5.00 MiB       1     0  hold_buffer(unsi...live_program.cpp:$BUFFER_LINE (vt_live_program)"
    key o; line_is 5 "top call sites (all devices, by bytes;"
    # s: a snapshot beside the exit snapshot, its path on the status line.
    key s
    # (A path too long for the line keeps its end: "snapshot written to ...DIR/a.live-1.json"; how
    # long it is depends on where the build tree is.)
    line_is 24 "snapshot written to "
    grep -q "a\.live-1\.json *$" "$screen" || fail "the status line lacks the snapshot's name"
    [ -f "$W/a.live-1.json" ] || fail "no $W/a.live-1.json"
    [ "$(snapshot_sites "$W/a.live-1.json")" = "$EXPECTED_SITES" ] || fail "the TUI's snapshot: $(snapshot_sites "$W/a.live-1.json")"
    # Colour: the terminal has it, so the bars and title carry colour codes.
    tm capture-pane -p -e >"$W/escapes"
    grep -qE "$COLOUR_CODE" "$W/escapes" || fail "no colour on a colour terminal"
    # q: the UI ends (the shell's sleep then holds the pane: its last output is the UI's cleared screen).
    key q
    i=0
    while tm list-panes -F '#{pane_current_command}' | grep -q vramtrace; do
        i=$((i + 1)); [ $i -gt 100 ] && fail "q did not quit"
        sleep 0.1
    done
    finish a "$PID" ;;
oom_feed)
    # A failed 4 GiB allocation: in the reading's OOMs and on the TUI's feed.
    VRAMTRACE_OOM_SNAPSHOTS=0 start a oom
    run 0 "$VT" top --once --json --pid "$PID"
    jq_is "$out" '[.oom_count, (.ooms[] | [.device, .requested_bytes, .api])]' '[1,[0,4294967296,"cudaMalloc"]]'
    tui "$VT" top --pid "$PID"
    shows "OOM cuda:0 4.00 GiB (cudaMalloc)"
    line_is 20 "events (OOMs and marks, newest last):"
    line_is 21 '  mark "loaded"'
    line_is 22 '  mark "ready"'
    line_is 23 "  OOM cuda:0 4.00 GiB (cudaMalloc)"
    key q; finish a "$PID" ;;
tui_odd_symbol_name)
    # The call site's symbol name holds U+0085, U+202E and the byte 0xff: drawn escaped, in the
    # table and in the expanded stack, and nothing raw reaches the terminal.
    start a oddname
    tui "$VT" top --pid "$PID"
    line_is $SITE1 '2.00 MiB       1     0  hold_odd_\xc2'
    key Enter
    line_is $((SITE1 + 1)) '      hold_odd_\xc2\x85_\xe2\x80\xae_'
    python3 - "$screen" <<'PY' || fail "a raw character reached the terminal"
import re, sys
text = open(sys.argv[1], "rb").read().decode("utf-8")
bad = re.findall("[\x80-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufffd]", text)
if bad:
    sys.exit("the screen holds %r" % bad)
PY
    key q; touch "$W/go-a"; wait "$PID" || fail "program a failed" ;;
tui_no_colour)
    start a
    TUI_NO_COLOR=1 tui "$VT" top --pid "$PID"
    line_is $SITE1 "6.00 MiB       2     0  hold_weights() a...live_program.cpp:$WEIGHTS_LINE (vt_live_program)"
    tm capture-pane -p -e >"$W/escapes"
    if grep -qE "$COLOUR_CODE" "$W/escapes"; then fail "colour codes with NO_COLOR set"; fi
    grep -q "$(printf '\033')\[7m" "$W/escapes" || fail "no reverse video for the selected row"
    key q; finish a "$PID" ;;
tui_widths)
    # 60, 80 and 120 columns: the call site keeps its name and file:line (its path is cut in the
    # middle, at 60 the module too),
    # the current and peak bytes stay whole in the list, the category that is "other" on every
    # row is left out, and "since start" gives way first.
    start a
    tui "$VT" top --pid "$PID"
    for cols in 60 80 120; do
        tm resize-window -x $cols -y 24 || fail "resize-window $cols"
        i=0
        until capture; grep -q "^6.00 MiB .*hold_weights().*live_program.cpp:$WEIGHTS_LINE" "$screen" &&
            [ "$(head -1 "$screen" | wc -m)" -eq $((cols + 1)) ]; do
            i=$((i + 1)); [ $i -gt 100 ] && { cat "$screen"; fail "$cols columns: file:line not shown within the width"; }
            sleep 0.1
        done
        grep -q "^5.00 MiB .*hold_buffer.*live_program.cpp:$BUFFER_LINE" "$screen" || fail "$cols columns: hold_buffer's file:line"
        grep -q "  category  " "$screen" && fail "$cols columns: a category column that is 'other' on every row"
        case $cols in
        60) line_is 6 "    live  10 s  call site"
            # The source path is cut in the middle: what is left of its start depends on the
            # checkout's place (and on ccache's base_dir, which makes it relative).
            line_like $SITE1 "6.00 MiB     0  hold_weights() at ?*...live_program.cpp:$WEIGHTS_LINE" ;;
        80) line_is 6 "    live  allocs  10 s  call site" ;;
        120) line_is 6 "    live  allocs  10 s  since start  call site"
             line_is $SITE1 "6.00 MiB       2     0            0  hold_weights() at " ;;
        esac
    done
    key Escape; key q
    start b
    tui "$VT" top
    tm resize-window -x 60 -y 24 || fail "resize-window 60"
    shows "cuda:0  11.00 MiB  11.00 MiB"
    key q; finish a "$(cat "$W/ready-a")"; finish b "$PID" ;;
tui_growth)
    # hold_growing adds 256 KiB every 500 ms, the other sites stay: sorted by growth it comes
    # first though it holds less, and its 10 s figure is what it gained meanwhile.
    start a grow
    tui "$VT" top --pid "$PID"
    tm resize-window -x 120 -y 24 || fail "resize-window"
    key o; key o; line_is 5 "top call sites (all devices, by growth over 10 s;"
    i=0
    until capture; sed -n "${SITE1}p" "$screen" | grep -qE '^ *[0-9.]+ [KM]iB +[0-9]+ +\+[0-9.]+ [KM]iB +\+[0-9.]+ [KM]iB  hold_growing\(\) at '; do
        i=$((i + 1)); [ $i -gt 100 ] && { cat "$screen"; fail "hold_growing is not first by growth"; }
        sleep 0.1
    done
    capture
    sed -n "$((SITE1 + 1))p" "$screen" | grep -qE '^ *6\.00 MiB +2 +0 +0  hold_weights\(\) at ' ||
        { cat "$screen"; fail "hold_weights, which does not grow, is not second"; }
    key q; finish a "$PID" ;;
tui_exited)
    # The process ends while shown: its last reading stays, with how it ended and its snapshot.
    start a
    tui "$VT" top --pid "$PID"
    line_is $SITE1 "6.00 MiB       2     0  hold_weights() a"
    tm resize-window -x 250 -y 24 || fail "resize-window"
    finish a "$PID"
    line_is 2 "last reading: exited "
    shows "s ago, exit snapshot $W/a.json"
    tm resize-window -x 80 -y 24 || fail "resize-window"
    line_is $((SITE1 + 1)) "6.00 MiB       2     0  hold_weights() a"
    key q ;;
tui_untraced)
    # The stand-in NVML lists a process that vramtrace does not trace (STANDIN_NVML_PROCESSES):
    # the list shows it as not traced with NVML's bytes, and the GPU's bar splits traced,
    # untraced and free.
    start a
    sleep 60 & spid=$!; PIDS="$PIDS $spid"
    tm -f /dev/null new-session -d -x 100 -y 24 -e "XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR" -e "LD_LIBRARY_PATH=$VT_NVML_DIR" \
        -e "STANDIN_NVML_PROCESSES=$spid:209715200@0" "'$VT' top; sleep 30" || fail "tmux cannot start a session"
    shows "gpu0 ["
    shows "] traced 11.00 MiB, untraced 200.00 MiB, free 824.00 MiB"
    shows "gpu1 ["
    shows "sleep (not traced)"
    grep -qE "^$spid +sleep \(not traced\) +gpu0 +200\.00 MiB +-$" "$screen" || fail "the untraced row"
    # The list's help: ? shows the keys, any key goes back.
    key '?'; shows "o               sort by bytes, allocations, growth over 10 s, call site"
    key x; shows "sleep (not traced)"
    key q; finish a "$PID" ;;
tui_list)
    start a; apid=$PID
    start b many; bpid=$PID
    tui "$VT" top
    line_is 1 "vramtrace top: processes on this host's GPUs"
    line_is 3 "pid "
    # (The pid column is as wide as the longest pid; the rank, "-" on every row, is left out.)
    sed -n 3p "$screen" | grep -qE '^pid +command +device +current +peak$' || fail "the list's header: $(sed -n 3p "$screen")"
    if [ "$apid" -lt "$bpid" ]; then first=$apid second=$bpid; else first=$bpid second=$apid; fi
    line_is 4 "$first "; line_is 5 "$second "
    shows "cuda:0  11.00 MiB  11.00 MiB"
    shows "cuda:0  39.06 MiB  39.06 MiB"
    # Enter opens the selected (first) process, Esc goes back; j moves to the second.
    key Enter; line_is 1 "vramtrace top: pid $first "
    key Escape; line_is 1 "vramtrace top: processes on this host's GPUs"
    key j; key Enter; line_is 1 "vramtrace top: pid $second "
    line_is 24 "q quit  j/k move  Enter stack  d device  o sort  s snapshot  ? keys  Esc back"
    key q; finish a "$apid"; finish b "$bpid" ;;
tui_resize)
    start a
    tui "$VT" top --pid "$PID"
    line_is $SITE1 "6.00 MiB       2     0  hold_weights() a...live_program.cpp:$WEIGHTS_LINE (vt_live_program)"
    grep -qF "live_program.cpp:$WEIGHTS_LINE (vt_live_program)" "$screen" || fail "80 columns keep the call site's file:line"
    tm resize-window -x 200 -y 40 || fail "resize-window"
    line_is 40 "q quit  j/k move  Enter stack  d device  o sort  s snapshot  ? keys"
    shows "live_program.cpp:$WEIGHTS_LINE (vt_live_program)"
    [ "$(wc -l <"$screen")" -eq 40 ] || fail "expected 40 lines after the resize"
    tm resize-window -x 80 -y 24 || fail "resize-window"
    line_is 24 "q quit  j/k move  Enter stack  d device  o sort  s snapshot  ? keys"
    line_is $SITE1 "6.00 MiB       2     0  hold_weights() a...live_program.cpp:$WEIGHTS_LINE (vt_live_program)"
    grep -qF "live_program.cpp:$WEIGHTS_LINE (vt_live_program)" "$screen" || fail "back at 80 columns, file:line is kept"
    key q; finish a "$PID" ;;
run_live|run_live_quit)
    # The program on its own pty under `run --live`, its output in r-PID.log (relative to $W).
    tui "cd '$W' && '$VT' run --live --log 'r-%p.log' --output '$W/r.json' -- '$VT_PROG' '$W/ready-r' '$W/go-r'; echo \"status \$?\""
    wait_for "$W/ready-r"; PID=$(cat "$W/ready-r")
    line_is 1 "vramtrace top: pid $PID "
    line_is 2 "program output: r-$PID.log"
    line_is $((SITE1 + 1)) "6.00 MiB       2     0  hold_weights() a...live_program.cpp:"
    if [ "$case_name" = run_live_quit ]; then
        # q: the view ends, the output so far is printed, and what follows comes here as it comes.
        key q
        shows "live_program: holding 3 allocations"
        grep -qF "status" "$screen" && fail "run ended before the program"
        touch "$W/go-r"
    else
        touch "$W/go-r"
    fi
    shows "status 0"
    shows "live_program: holding 3 allocations"
    shows "vramtrace: ==== memory summary: pid $PID"
    shows "vramtrace: the program's output is in r-$PID.log"
    grep -qF "live_program: holding 3 allocations" "$W/r-$PID.log" || fail "the log lacks the program's output"
    grep -qF "vramtrace: snapshot written to $W/r.json" "$W/r-$PID.log" || fail "the log lacks the program's stderr"
    [ "$(stat -c %a "$W/r-$PID.log")" = 600 ] || fail "log mode $(stat -c %a "$W/r-$PID.log")" ;;
run_live_log_taken)
    # A log file planted by another user (uid 65534, mode 0666, as in a shared working directory)
    # at the name run --live would use: never opened, its content kept; the output goes to the
    # next numbered name, a new file of ours, 0600.
    [ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to make a file another user owns"; exit 77; }
    printf 'planted by nobody\n' >"$W/shared.log"; chmod 666 "$W/shared.log"; chown 65534:65534 "$W/shared.log"
    tui "cd '$W' && '$VT' run --live --log shared.log --output '$W/r.json' -- '$VT_PROG' '$W/ready-r' '$W/go-r'; echo \"status \$?\""
    wait_for "$W/ready-r"; PID=$(cat "$W/ready-r")
    line_is 2 "program output: shared.1.log"
    touch "$W/go-r"
    shows "status 0"
    shows "vramtrace: the program's output is in shared.1.log"
    [ "$(cat "$W/shared.log")" = "planted by nobody" ] || fail "the planted log was written: $(cat "$W/shared.log")"
    [ "$(stat -c %u:%a "$W/shared.log")" = "65534:666" ] || fail "the planted log changed owner or mode"
    grep -qF "live_program: holding 3 allocations" "$W/shared.1.log" || fail "shared.1.log lacks the program's output"
    [ "$(stat -c %u:%a "$W/shared.1.log")" = "0:600" ] || fail "shared.1.log: owner:mode $(stat -c %u:%a "$W/shared.1.log")" ;;
run_live_log_fifo)
    # A FIFO at the log's name: run --live never opens it (a plain open would wait for a reader
    # forever, deaf to SIGTERM), logs to fifo.1.log instead, and SIGTERM sent to vramtrace passes
    # on to the program and ends the run (128 + 15), all within the helpers' 10 s bounds.
    mkfifo "$W/fifo.log"
    mkdir -m 700 "$SOCKDIR" # made here: under umask 0277 the library's mkdir would give 0500
    tui "cd '$W' && umask 0277 && '$VT' run --live --log fifo.log --output '$W/r.json' -- '$VT_PROG' '$W/ready-r' '$W/go-r'; echo \"status \$?\""
    wait_for "$W/ready-r"; PID=$(cat "$W/ready-r")
    line_is 2 "program output: fifo.1.log"
    runner=$(awk '$1 == "PPid:" { print $2 }' /proc/"$PID"/status)
    [ "$(cat /proc/"$runner"/comm)" = vramtrace ] || fail "the program's parent $runner is $(cat /proc/"$runner"/comm)"
    kill -TERM "$runner"
    shows "status 143"
    [ -p "$W/fifo.log" ] || fail "fifo.log is no longer a FIFO"
    # 0600 whatever the umask (0277 would have made it 0400).
    [ "$(stat -c %a "$W/fifo.1.log")" = 600 ] || fail "fifo.1.log mode $(stat -c %a "$W/fifo.1.log")"
    grep -qF "live_program: holding 3 allocations" "$W/fifo.1.log" || fail "fifo.1.log lacks the program's output" ;;
*)
    fail "unknown case" ;;
esac
