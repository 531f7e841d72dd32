#!/bin/sh
# The live view (docs/live.md) end to end on the stand-in driver: live_test.sh CASE.
# Environment (set by CMake): VT (the built vramtrace), VT_LIB (libvramtrace.so), VT_PROG
# (tests/e2e/programs/live_program.cpp), VT_TMUX (tmux, or a name that does not exist: the TUI
# cases then fail), VT_WORK (a scratch directory for this case). Each case uses its own
# XDG_RUNTIME_DIR inside VT_WORK, so no real socket directory is touched.
set -u
case_name=$1
rm -rf "$VT_WORK" && mkdir -p "$VT_WORK/xdg" || exit 1
chmod 700 "$VT_WORK/xdg"
W=$VT_WORK
export XDG_RUNTIME_DIR=$W/xdg
SOCKDIR=$W/xdg/vramtrace
out=$W/stdout
err=$W/stderr
PIDS=""

cleanup() {
    [ -n "${TMUX_SOCKET:-}" ] && "$VT_TMUX" -S "$TMUX_SOCKET" kill-server 2>/dev/null
    touch "$W"/go* 2>/dev/null
    for p in $PIDS; do kill "$p" 2>/dev/null; done
}
trap cleanup EXIT
fail() {
    echo "FAIL [$case_name]: $*"
    echo "--- stdout:"; cat "$out" 2>/dev/null
    echo "--- stderr:"; cat "$err" 2>/dev/null
    for f in "$W"/prog*.err; do [ -f "$f" ] && { echo "--- $f:"; cat "$f"; }; done
    exit 1
}
run() {
    expected=$1; shift
    "$@" >"$out" 2>"$err" </dev/null
    status=$?
    [ "$status" -eq "$expected" ] || fail "exit status $status, expected $expected: $*"
}
jq_is() {
    got=$(jq -c "$2" "$1") || fail "jq cannot read $1 ($2)"
    [ "$got" = "$3" ] || fail "jq '$2' on $1: got $got, expected $3"
}
stderr_is_one_line() { [ "$(wc -l <"$err")" -eq 1 ] || fail "stderr is not exactly one line"; }
stderr_has() { grep -qF -- "$1" "$err" || fail "stderr lacks: $1"; }
. "$(dirname "$0")/../support/wait_for.sh" # wait_for FILE
# start NAME [MODE]: the program under the library, in the background; sets PID to its pid once
# it holds its allocations (ready file), with its snapshot at $W/NAME.json.
start() {
    name=$1; mode=${2:-sites}
    LD_LIBRARY_PATH=${START_LIBRARY_PATH:-${LD_LIBRARY_PATH:-}} LD_PRELOAD=$VT_LIB VRAMTRACE_OUTPUT=$W/$name.json \
        "$VT_PROG" "$W/ready-$name" "$W/go-$name" "$mode" \
        >"$W/prog-$name.out" 2>"$W/prog-$name.err" &
    last=$!
    PIDS="$PIDS $last"
    wait_for "$W/ready-$name"
    PID=$(cat "$W/ready-$name")
    [ "$PID" = "$last" ] || fail "ready file names $PID, started $last"
    expect_sites "$W/prog-$name.out"
}
# expect_sites PROGRAM_STDOUT: EXPECTED_SITES (the "sites" mode's call sites: hold_weights twice
# 3 MiB, hold_buffer 5 MiB, at the lines the program printed) and WEIGHTS_LINE.
expect_sites() {
    WEIGHTS_LINE=$(awk '$1 == "site" && $2 == "hold_weights()" {print $3}' "$1")
    BUFFER_LINE=$(awk '$1 == "site" && $2 == "hold_buffer(unsigned" {print $4}' "$1")
    EXPECTED_SITES="[[\"hold_weights()\", \"live_program.cpp\", ${WEIGHTS_LINE:-0}, 6291456, 2], [\"hold_buffer(unsigned long)\", \"live_program.cpp\", ${BUFFER_LINE:-0}, 5242880, 1]]"
}
# finish NAME PID: lets it free and exit; checks its status and that its socket is gone.
finish() {
    touch "$W/go-$1"
    wait "$2"; st=$?
    [ "$st" -eq 0 ] || fail "program $1 exited with $st"
    [ ! -e "$SOCKDIR/$2.sock" ] || fail "socket $SOCKDIR/$2.sock left after exit"
}
# The call sites of a snapshot file as [function, file basename, line, bytes, count], bytes
# descending, from its allocations and each stack's call_site frame (the snapshot's own record).
snapshot_sites() {
    python3 - "$1" <<'PY'
import json, sys, os
s = json.load(open(sys.argv[1]))
stacks = {st["id"]: st for st in s["stacks"]}
held = lambda k: k not in ("ipc_imported", "vmm_mapping", "graph_pool", "vmm_imported", "va_reservation")
sums = {}
for a in s["allocations"]:
    if not held(a["kind"]): continue
    st = stacks[a["stack"]]
    f = s["frames"][st["frames"][st["call_site"]]]
    key = (f.get("function", ""), os.path.basename(f.get("file", "")), f.get("line", 0))
    b, c = sums.get(key, (0, 0))
    sums[key] = (b + a["size"], c + 1)
rows = sorted(([k[0], k[1], k[2], v[0], v[1]] for k, v in sums.items()), key=lambda r: (-r[3], r))
print(json.dumps(rows))
PY
}
# The same list from a `top --once --json` reading.
reading_sites() {
    python3 - "$1" <<'PY'
import json, sys, os
r = json.load(open(sys.argv[1]))
rows = sorted(([t["function"], os.path.basename(t["file"]), t["line"], t["bytes"], t["count"]] for t in r["top_sites"]), key=lambda r: (-r[3], r))
print(json.dumps(rows))
PY
}

case $case_name in
once_json_equals_snapshot)
    # With the stand-in NVML (tests/standin/nvml): what the driver charges plus 300 MiB of context.
    START_LIBRARY_PATH="$(dirname "$VT_PROG")/../standin-nvml${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" start a
    run 0 "$VT" top --once --json --pid "$PID"
    cp "$out" "$W/reading.json"
    jq_is "$W/reading.json" '.pid' "$PID"
    jq_is "$W/reading.json" '[.devices[] | {device, current_bytes, peak_bytes}]' '[{"device":0,"current_bytes":11534336,"peak_bytes":11534336}]'
    jq_is "$W/reading.json" '[.live_allocations, .live_bytes]' '[3,11534336]'
    jq_is "$W/reading.json" '[.devices[].process_used_bytes]' '[326107136]'
    jq_is "$W/reading.json" '.marks | map(.label)' '["loaded","ready"]'
    [ "$(reading_sites "$W/reading.json")" = "$EXPECTED_SITES" ] || fail "reading sites: $(reading_sites "$W/reading.json")"
    # Each site's merged stacks add up to it, and each names its frames.
    jq_is "$W/reading.json" '[.top_sites[] | [.bytes, ([.stacks[].bytes] | add), .count, ([.stacks[].count] | add)]]' \
        "$(jq -c '[.top_sites[] | [.bytes, .bytes, .count, .count]]' "$W/reading.json")"
    jq_is "$W/reading.json" '[.top_sites[] | .stacks[] | (.frames | length > 0)] | all' 'true'
    # The snapshot of the same moment, asked through the socket, says the same.
    run 0 "$VT" top --snapshot --pid "$PID"
    [ "$(cat "$out")" = "$W/a.live-1.json" ] || fail "snapshot path: $(cat "$out")"
    [ "$(snapshot_sites "$W/a.live-1.json")" = "$(reading_sites "$W/reading.json")" ] ||
        fail "snapshot sites $(snapshot_sites "$W/a.live-1.json") differ from the reading's"
    jq_is "$W/a.live-1.json" '[.devices[] | {device, current_bytes, peak_bytes}]' '[{"device":0,"current_bytes":11534336,"peak_bytes":11534336}]'
    jq_is "$W/a.live-1.json" '.process.reason' '"live"'
    jq_is "$W/a.live-1.json" '[.devices[].process_used_bytes]' '[326107136]'
    grep -qF "vramtrace: live snapshot written to $W/a.live-1.json" "$W/prog-a.err" || fail "no note of the live snapshot"
    # The text form names the same sites.
    run 0 "$VT" top --once --pid "$PID"
    grep -q '^6.00 MiB  2       other     hold_weights() at .*live_program.cpp:'"$WEIGHTS_LINE"' (vt_live_program)$' "$out" || fail "text reading"
    ls "$SOCKDIR" >"$W/listing"; [ "$(cat "$W/listing")" = "$PID.sock" ] || fail "socket dir holds $(cat "$W/listing")"
    [ "$(stat -c %a "$SOCKDIR")" = 700 ] || fail "socket dir mode $(stat -c %a "$SOCKDIR")"
    [ "$(stat -c %a "$SOCKDIR/$PID.sock")" = 600 ] || fail "socket mode $(stat -c %a "$SOCKDIR/$PID.sock")"
    finish a "$PID"
    [ -f "$W/a.json" ] || fail "no exit snapshot" ;;
many_viewers)
    start a
    i=0
    while [ $i -lt 12 ]; do
        "$VT" top --once --json --pid "$PID" >"$W/v$i.json" 2>"$W/v$i.err" &
        eval "viewer$i=\$!"
        i=$((i + 1))
    done
    i=0
    while [ $i -lt 12 ]; do
        eval "wait \$viewer$i" || fail "viewer $i failed: $(cat "$W/v$i.err")"
        [ "$(reading_sites "$W/v$i.json")" = "$EXPECTED_SITES" ] || fail "viewer $i read $(reading_sites "$W/v$i.json")"
        i=$((i + 1))
    done
    finish a "$PID" ;;
viewer_killed_mid_read)
    start a
    # 20 viewers that ask and never read (more than the server's 16 slots), and one killed by
    # SIGKILL after reading 16 bytes of its answer.
    python3 - "$SOCKDIR/$PID.sock" <<'PY' || fail "the stuck viewers could not connect"
import os, signal, socket, sys
held = []
for i in range(20):
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"reading history\n"); held.append(s)
pid = os.fork()
if pid == 0:
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"reading history\n")
    s.recv(16)
    os.kill(os.getpid(), signal.SIGKILL)
os.waitpid(pid, 0)
# A viewer that closes right after asking, and one that connects and says nothing.
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"reading\n"); s.close()
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); held.append(s)
PY
    run 0 "$VT" top --once --json --pid "$PID"
    cp "$out" "$W/reading.json"
    [ "$(reading_sites "$W/reading.json")" = "$EXPECTED_SITES" ] || fail "after the killed viewers: $(reading_sites "$W/reading.json")"
    [ ! -s "$W/prog-a.err" ] || fail "the program printed: $(cat "$W/prog-a.err")"
    finish a "$PID" ;;
refused_paths)
    # The socket directory a symlink (to a directory of ours, mode 0700): refused by both ends.
    mkdir -m 700 "$W/elsewhere"; ln -s "$W/elsewhere" "$SOCKDIR"
    start a
    [ "$(cat "$W/prog-a.err")" = "vramtrace: warning: live view off: $SOCKDIR: is a symlink; not used" ] ||
        fail "program's stderr: $(cat "$W/prog-a.err")"
    [ -z "$(ls -A "$W/elsewhere")" ] || fail "a socket was made through the symlink"
    run 1 "$VT" top --once --pid "$PID"; stderr_is_one_line
    stderr_has "vramtrace: error: top: $SOCKDIR: is a symlink; not used"
    run 0 "$VT" top --once; stderr_is_one_line; stderr_has "vramtrace: warning: $SOCKDIR: is a symlink; not used"
    finish a "$PID"
    # The directory open to others.
    rm "$SOCKDIR"; mkdir -m 755 "$SOCKDIR"
    start b
    [ "$(cat "$W/prog-b.err")" = "vramtrace: warning: live view off: $SOCKDIR: open to group or others (mode 755); not used" ] ||
        fail "program's stderr: $(cat "$W/prog-b.err")"
    [ -z "$(ls -A "$SOCKDIR")" ] || fail "a socket was made in a 0755 directory"
    finish b "$PID"
    # The socket path a symlink, planted before the program starts (sh's pid is the program's).
    chmod 700 "$SOCKDIR"
    python3 -c "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" "$W/other.sock"
    LD_PRELOAD=$VT_LIB VRAMTRACE_OUTPUT=$W/c.json sh -c 'ln -s "$1" "$2/$$.sock" && exec "$3" "$4" "$5"' sh \
        "$W/other.sock" "$SOCKDIR" "$VT_PROG" "$W/ready-c" "$W/go-c" >"$W/prog-c.out" 2>"$W/prog-c.err" &
    cpid=$!; PIDS="$PIDS $cpid"
    wait_for "$W/ready-c"
    [ "$(cat "$W/prog-c.err")" = "vramtrace: warning: live view off: $SOCKDIR/$cpid.sock: is a symlink; not used" ] ||
        fail "program's stderr: $(cat "$W/prog-c.err")"
    [ -L "$SOCKDIR/$cpid.sock" ] || fail "the planted symlink was replaced"
    run 1 "$VT" top --once --pid "$cpid"; stderr_is_one_line
    stderr_has "vramtrace: error: top: $SOCKDIR/$cpid.sock: is a symlink; not used"
    touch "$W/go-c"; wait "$cpid" || fail "program c failed"
    [ -L "$SOCKDIR/$cpid.sock" ] || fail "the planted symlink was removed at exit" ;;
refused_other_owner)
    [ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to make a file another user owns"; exit 77; }
    # A socket owned by uid 65534 where a process's socket would be: the viewer refuses it.
    python3 -c "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" "$W/plain.sock"
    mkdir -m 700 "$SOCKDIR"
    sleep 30 & spid=$!; PIDS="$PIDS $spid"
    mv "$W/plain.sock" "$SOCKDIR/$spid.sock"; chown 65534 "$SOCKDIR/$spid.sock"
    run 1 "$VT" top --once --pid "$spid"; stderr_is_one_line
    stderr_has "vramtrace: error: top: $SOCKDIR/$spid.sock: owned by uid 65534, not 0; not used"
    run 0 "$VT" top --once; stderr_is_one_line
    stderr_has "vramtrace: warning: $SOCKDIR/$spid.sock: owned by uid 65534, not 0; not used"
    # ... and a program whose socket path is taken so does not serve.
    LD_PRELOAD=$VT_LIB VRAMTRACE_OUTPUT=$W/d.json sh -c 'python3 -c "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" "$1/$$.sock" && chown 65534 "$1/$$.sock" && exec "$2" "$3" "$4"' sh \
        "$SOCKDIR" "$VT_PROG" "$W/ready-d" "$W/go-d" >"$W/prog-d.out" 2>"$W/prog-d.err" &
    dpid=$!; PIDS="$PIDS $dpid"
    wait_for "$W/ready-d"
    [ "$(cat "$W/prog-d.err")" = "vramtrace: warning: live view off: $SOCKDIR/$dpid.sock: owned by uid 65534, not 0; not used" ] ||
        fail "program's stderr: $(cat "$W/prog-d.err")"
    [ "$(stat -c %u "$SOCKDIR/$dpid.sock")" = 65534 ] || fail "the other user's socket was replaced"
    touch "$W/go-d"; wait "$dpid" || fail "program d failed" ;;
no_cuda_no_socket)
    start a nocuda
    [ ! -e "$SOCKDIR" ] || fail "a process that never touched CUDA made $(ls -A "$SOCKDIR")"
    run 1 "$VT" top --once --pid "$PID"; stderr_is_one_line
    stderr_has "vramtrace: error: top: process $PID (vt_live_program) runs but is not traced: no live view (no $SOCKDIR/$PID.sock; a traced process serves one from its first CUDA allocation unless VRAMTRACE_LIVE=0)"
    finish a "$PID"
    [ ! -e "$W/a.json" ] || fail "a snapshot was written" ;;
stale_socket_cleaned)
    # A socket left by a process that died (nothing listens), under a pid that is gone.
    mkdir -m 700 "$SOCKDIR"
    sh -c 'exit 0' & dead=$!; wait $dead
    python3 -c "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" "$SOCKDIR/$dead.sock"
    start a
    run 0 "$VT" top --once --json
    jq_is "$out" '[.processes[].pid]' "[$PID]"
    [ ! -e "$SOCKDIR/$dead.sock" ] || fail "the stale socket is still there"
    # A socket of a live pid that does not listen (a process killed, its pid reused) is stale too.
    sleep 30 & spid=$!; PIDS="$PIDS $spid"
    python3 -c "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" "$SOCKDIR/$spid.sock"
    run 1 "$VT" top --once --pid "$spid"; stderr_is_one_line
    stderr_has "vramtrace: error: top: process $spid serves no live view any more (nothing listens on $SOCKDIR/$spid.sock; removed)"
    [ ! -e "$SOCKDIR/$spid.sock" ] || fail "the stale socket is still there"
    # A killed program's socket stays until a viewer looks.
    start b; bpid=$PID
    kill -9 "$bpid"; wait "$bpid"
    [ -S "$SOCKDIR/$bpid.sock" ] || fail "expected the killed program's socket"
    run 0 "$VT" top --once --json
    jq_is "$out" '[.processes[].pid]' "[$(cat "$W/ready-a")]"
    [ ! -e "$SOCKDIR/$bpid.sock" ] || fail "the killed program's socket is still there"
    finish a "$(cat "$W/ready-a")" ;;
list_processes)
    RANK=3 start a; apid=$PID
    start b many; bpid=$PID
    run 0 "$VT" top --once --json
    if [ "$apid" -lt "$bpid" ]; then first=$apid second=$bpid; else first=$bpid second=$apid; fi
    jq_is "$out" '[.processes[].pid]' "[$first,$second]"
    jq_is "$out" "[.processes[] | select(.pid == $apid) | .devices[].current_bytes]" '[11534336]'
    jq_is "$out" "[.processes[] | select(.pid == $bpid) | .devices[].current_bytes]" '[40960000]'
    jq_is "$out" "[.processes[] | select(.pid == $apid) | .rank]" '["3"]'
    run 0 "$VT" top --once
    grep -q "^$apid  .*vt_live_program .*  3     cuda:0  11.00 MiB  11.00 MiB$" "$out" || fail "text list"
    finish a "$apid"; finish b "$bpid"
    run 0 "$VT" top --once
    [ "$(head -1 "$out")" = "no traced process serves a live view on this host; start one with" ] || fail "empty list"
    grep -qF "  vramtrace run -- PROGRAM ARGS..." "$out" || fail "the empty list does not say how to start one" ;;
once_untraced)
    # The stand-in NVML lists a process that is not traced beside the traced one: --once --json
    # lists both, the untraced one with NVML's bytes, and each GPU as traced + untraced + free.
    start a
    sleep 60 & spid=$!; PIDS="$PIDS $spid"
    LD_LIBRARY_PATH=$VT_NVML_DIR STANDIN_NVML_PROCESSES="$spid:209715200@0,$spid:4096@1" run 0 "$VT" top --once --json
    jq_is "$out" '[.processes[] | [.pid, .traced]]' "[[$PID,true],[$spid,false]]"
    jq_is "$out" "[.processes[] | select(.pid == $spid) | .name, [.gpus[] | [.index, .used_bytes]]]" '["sleep",[[0,209715200],[1,4096]]]'
    jq_is "$out" '[.gpus[] | [.index, .traced_bytes, .untraced_bytes, .free_bytes, .total_bytes]]' \
        '[[0,11534336,209715200,864026624,1073741824],[1,0,4096,1073737728,1073741824]]'
    LD_LIBRARY_PATH=$VT_NVML_DIR STANDIN_NVML_PROCESSES="$spid:209715200@0" run 0 "$VT" top --once
    grep -qE "^$spid +sleep +0 +200\.00 MiB +not traced$" "$out" || fail "text: the untraced row"
    grep -qE "^0 +GPU-76747374-616e-6469-6e13-005aa50ff000 +11\.00 MiB +200\.00 MiB +824\.00 MiB +1\.00 GiB$" "$out" ||
        fail "text: the GPU row"
    # Without NVML (no libnvidia-ml.so.1 on this machine): no GPU list, and no error.
    run 0 "$VT" top --once --json
    jq_is "$out" '[has("gpus"), [.processes[].pid]]' "[false,[$PID]]"
    finish a "$PID" ;;
never_served)
    # A pid that is not running, and one that runs untraced: each said in its own words.
    sh -c 'exit 0' & dead=$!; wait $dead
    run 1 "$VT" top --once --pid "$dead"; stderr_is_one_line
    stderr_has "vramtrace: error: top: no process $dead on this host (it has exited, or never ran)"
    sleep 60 & spid=$!; PIDS="$PIDS $spid"
    run 1 "$VT" top --once --pid "$spid"; stderr_is_one_line
    stderr_has "vramtrace: error: top: process $spid (sleep) runs but is not traced: no live view (no $SOCKDIR/$spid.sock;"
    mkdir -m 700 "$SOCKDIR"
    run 1 "$VT" top --snapshot --pid "$dead"; stderr_is_one_line
    stderr_has "vramtrace: error: top: no process $dead on this host (it has exited, or never ran)" ;;
fork_child_serves_its_own)
    # The parent holds the sites, then a forked child holds 2 MiB of its own: each serves on its
    # own socket, and the child's exit leaves the parent's socket in place.
    LD_PRELOAD=$VT_LIB VRAMTRACE_OUTPUT=$W/f-%p.json "$VT_PROG" "$W/ready-f" "$W/go-f" fork \
        >"$W/prog-f.out" 2>"$W/prog-f.err" &
    ppid_=$!; PIDS="$PIDS $ppid_"
    wait_for "$W/ready-f.child"
    expect_sites "$W/prog-f.out"
    cpid=$(cat "$W/ready-f.child")
    [ -S "$SOCKDIR/$ppid_.sock" ] || fail "no parent socket"
    [ -S "$SOCKDIR/$cpid.sock" ] || fail "no child socket"
    run 0 "$VT" top --once --json --pid "$cpid"
    jq_is "$out" '.pid' "$cpid"
    jq_is "$out" '[.top_sites[] | select(.function == "hold_buffer(unsigned long)") | .bytes]' '[2097152]'
    run 0 "$VT" top --once --json --pid "$ppid_"
    cp "$out" "$W/parent.json"
    [ "$(reading_sites "$W/parent.json")" = "$EXPECTED_SITES" ] || fail "parent: $(reading_sites "$W/parent.json")"
    touch "$W/go-f.child"
    wait_for "$W/ready-f"
    [ ! -e "$SOCKDIR/$cpid.sock" ] || fail "the child's socket is left after its exit"
    [ -S "$SOCKDIR/$ppid_.sock" ] || fail "the child's exit removed the parent's socket"
    run 0 "$VT" top --once --json --pid "$ppid_"
    cp "$out" "$W/parent.json"
    [ "$(reading_sites "$W/parent.json")" = "$EXPECTED_SITES" ] || fail "parent after the child: $(reading_sites "$W/parent.json")"
    finish f "$ppid_" ;;
program_closes_socket)
    # A program that closes every descriptor above 2 and reuses the numbers: the server notices
    # (the socket's identity), says so once and stops; nothing spins; the program runs on.
    start a closefds
    i=0
    until grep -qF "live view off" "$W/prog-a.err"; do
        i=$((i + 1)); [ $i -gt 100 ] && fail "the server did not notice its socket was closed"
        sleep 0.05
    done
    [ "$(cat "$W/prog-a.err")" = "vramtrace: warning: live view off: the program closed its socket" ] ||
        fail "program's stderr: $(cat "$W/prog-a.err")"
    # CPU time (user + system, clock ticks) over one second: a reporter that spins would use ~100.
    t0=$(awk '{print $14 + $15}' "/proc/$PID/stat"); sleep 1; t1=$(awk '{print $14 + $15}' "/proc/$PID/stat")
    [ $((t1 - t0)) -le 5 ] || fail "the program used $((t1 - t0)) ticks in one second after losing its socket"
    run 1 "$VT" top --once --pid "$PID"; stderr_is_one_line
    stderr_has "vramtrace: error: top: process $PID serves no live view any more (nothing listens on $SOCKDIR/$PID.sock; removed)"
    finish a "$PID" ;;
serve_cost)
    # 10000 live allocations: what one reading costs the program (its reporter thread's CPU time,
    # as the reading itself says). Printed, not judged: benchmarks are not timed tests.
    start a many
    i=0; : >"$W/costs"
    while [ $i -lt 10 ]; do
        run 0 "$VT" top --once --json --pid "$PID"
        jq_is "$out" '[.live_allocations, .top_sites[0].bytes, .top_sites[0].count, .top_sites[0].function]' '[10000,40960000,10000,"hold_many()"]'
        jq -r '.serve_cpu_ns' "$out" >>"$W/costs"
        i=$((i + 1))
    done
    echo "serve_cpu_ns of 10 readings with history, 10000 live allocations: $(tr '\n' ' ' <"$W/costs")"
    finish a "$PID" ;;
odd_symbol_name)
    # A call site whose symbol name (read by the viewer from the ELF file, and by the library at
    # exit) holds U+0085, U+202E and the byte 0xff: escaped byte by byte everywhere it is shown.
    start a oddname
    odd='hold_odd_\\xc2\\x85_\\xe2\\x80\\xae_\\xff'
    run 0 "$VT" top --once --json --pid "$PID"
    cp "$out" "$W/reading.json"
    jq_is "$W/reading.json" '[.top_sites[] | [.function, .bytes, .count]]' "[[\"$odd\",2097152,1]]"
    jq_is "$W/reading.json" '.top_sites[0].stacks[0].frames[0] | startswith("hold_odd_\\xc2")' 'true'
    run 0 "$VT" top --once --pid "$PID"
    grep -qF '2.00 MiB  1       other     hold_odd_\xc2\x85_\xe2\x80\xae_\xff at ' "$out" || fail "text reading"
    touch "$W/go-a"; wait "$PID" || fail "program a failed"
    grep -qF 'hold_odd_\xc2\x85_\xe2\x80\xae_\xff at ' "$W/prog-a.err" || fail "the exit summary does not name the site escaped"
    # Nothing raw reached any of them: no C1 control, no bidi character, only valid UTF-8.
    python3 - "$W/reading.json" "$out" "$W/prog-a.err" <<'PY' || fail "a raw character was shown"
import re, sys
for name in sys.argv[1:]:
    text = open(name, "rb").read().decode("utf-8")  # raises on invalid UTF-8
    bad = re.findall("[\x80-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]", text)
    if bad:
        sys.exit("%s holds %r" % (name, bad))
PY
    ;;
oversized_reading|deep_reading|many_sites|wide_reading)
    # A server that answers 2 GiB, a stack of 300,000 frames, 20,000 sites, 11 million JSON values
    # in 32 MiB: the viewer refuses each with one line, within bounded memory (/usr/bin/time's
    # maximum resident set, KiB).
    mkdir -m 700 "$SOCKDIR"
    case $case_name in
    oversized_reading) mode=big ;;
    deep_reading) mode=deep ;;
    many_sites) mode=sites ;;
    wide_reading) mode=wide ;;
    esac
    python3 "$(dirname "$0")/live_fake_server.py" $mode "$SOCKDIR" "$W/ready-fake" 2>"$W/prog-fake.err" &
    PIDS="$PIDS $!"
    wait_for "$W/ready-fake"; spid=$(cat "$W/ready-fake")
    run 1 /usr/bin/time -f '%M %e' -o "$W/usage" "$VT" top --once --json --pid "$spid"
    stderr_is_one_line
    case $case_name in
    oversized_reading) stderr_has "vramtrace: error: top: process $spid: $SOCKDIR/$spid.sock: the answer is longer than 33554432 bytes, the most a reading holds; refused"
                       ceiling=102400 ;;
    deep_reading) stderr_has "vramtrace: error: top: process $spid: the reading is over the protocol's bounds (300000 frames in one stack, at most 256)"
                  ceiling=65536 ;;
    many_sites) stderr_has "vramtrace: error: top: process $spid: the reading is over the protocol's bounds (20000 sites, at most 256)"
                ceiling=65536 ;;
    wide_reading) stderr_has "vramtrace: error: top: process $spid: the reading is over the protocol's bounds (more than 1000000 JSON values)"
                  ceiling=102400 ;;
    esac
    # (time's last line; a line before it says the command exited with status 1)
    read -r rss seconds <<EOF
$(tail -n 1 "$W/usage")
EOF
    echo "$case_name: the viewer's maximum resident set $rss KiB, $seconds s"
    [ "$rss" -le "$ceiling" ] || fail "the viewer's maximum resident set was $rss KiB, above $ceiling KiB" ;;
peer_uid_refused)
    [ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to serve as another uid"; exit 77; }
    # A socket file of ours (root's), listened on by a process of uid 65534: the path checks pass,
    # SO_PEERCRED says who listens, and the viewer refuses it before sending anything.
    mkdir -m 700 "$SOCKDIR"
    python3 "$(dirname "$0")/live_fake_server.py" peer "$SOCKDIR" "$W/ready-fake" 2>"$W/prog-fake.err" &
    PIDS="$PIDS $!"
    wait_for "$W/ready-fake"; spid=$(cat "$W/ready-fake")
    [ "$(stat -c %u "$SOCKDIR/$spid.sock")" = 0 ] || fail "the socket file is not root's"
    run 1 "$VT" top --once --json --pid "$spid"; stderr_is_one_line
    stderr_has "vramtrace: error: top: process $spid: $SOCKDIR/$spid.sock: served by a process of uid 65534, neither root nor uid 0; not used"
    run 0 "$VT" top --once --json; stderr_is_one_line
    stderr_has "vramtrace: warning: process $spid: $SOCKDIR/$spid.sock: served by a process of uid 65534, neither root nor uid 0; not used"
    jq_is "$out" '.processes' '[]' ;;
*)
    . "$(dirname "$0")/live_tui_cases.sh" ;;
esac
echo "PASS [$case_name]"
