#!/bin/sh
# Hostile-input and file-safety tests of the files vramtrace writes (docs/reliability.md, "Files
# vramtrace writes"): cli_security_test.sh CASE. Environment (set by CMake): VT (the built
# vramtrace), VT_PRELOAD (libvramtrace.so), VT_BIN (build/bin: leaky_pipeline and the stand-in
# programs), VT_CLI_DATA (tests/cli/data), VT_WORK (a scratch directory for this case).
#
# Every device node, FIFO, socket and symlink is made inside VT_WORK; no case names a real system
# path as an output. The device nodes (mknod) and the attacker cases (setpriv to uid 65534) need
# root: without it those cases exit 77 (skipped, not passed).
set -u
case_name=$1
rm -rf "$VT_WORK" && mkdir -p "$VT_WORK" || exit 1
out=$VT_WORK/stdout
err=$VT_WORK/stderr
in=$VT_CLI_DATA/export_input.json
unpickle=$(dirname "$0")/restricted_unpickle.py

fail() {
    echo "FAIL [$case_name]: $*"
    echo "--- stdout:"; head -c 4000 "$out" 2>/dev/null
    echo "--- stderr:"; head -c 4000 "$err" 2>/dev/null
    exit 1
}
run() {
    expected=$1; shift
    "$@" >"$out" 2>"$err" </dev/null
    status=$?
    [ "$status" -eq "$expected" ] || fail "exit status $status, expected $expected: $*"
}
stderr_is_one_line() { [ "$(wc -l <"$err")" -eq 1 ] || fail "stderr is not exactly one line"; }
stderr_has() { grep -qF -- "$1" "$err" || fail "stderr lacks: $1"; }
stderr_empty() { [ ! -s "$err" ] || fail "stderr is not empty"; }
listing() { ls -A "$1" | tr '\n' ' '; }
mode_of() { stat -c %a "$1"; }
owner_of() { stat -c %u "$1"; }
type_of() { stat -c %F "$1"; }
need_root() { [ "$(id -u)" -eq 0 ] || { echo "SKIP [$case_name]: needs root (mknod, setpriv)"; exit 77; }; }
# A character device with the numbers of /dev/null (1, 3), inside VT_WORK.
null_device() { mknod "$1" c 1 3 || fail "mknod $1"; }
# check_pickle FILE: loads with the restricted unpickler (tests/cli/restricted_unpickle.py).
check_pickle() { python3 "$unpickle" "$1" >"$VT_WORK/unpickle.txt" 2>&1 || { cat "$VT_WORK/unpickle.txt"; fail "restricted unpickle of $1"; }; }
# A socket at a path (python3 binds it and exits; the socket file stays).
make_socket() { python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$1" || fail "socket $1"; }

# What each writing command is: NAME and the arguments before the output path's --output.
WRITERS="chrome folded pprof pickle html merge"
# write_to WRITER OUTPUT: runs the writer with --output OUTPUT; stdout/stderr to $out/$err.
write_to() {
    w=$1; o=$2; shift 2
    if [ "$w" = merge ]; then
        "$VT" merge -q --output "$o" "$in" "$in" >"$out" 2>"$err" </dev/null
    else
        "$VT" export -f "$w" --output "$o" "$in" >"$out" 2>"$err" </dev/null
    fi
}
# check_content WRITER FILE: the file is what that writer writes.
check_content() {
    case $1 in
    chrome|merge) jq -e . "$2" >/dev/null || fail "$1: $2 is not JSON" ;;
    folded) grep -q " [0-9][0-9]*$" "$2" || fail "folded: $2 has no folded line" ;;
    pprof) [ "$(head -c 2 "$2" | od -An -tx1 | tr -d ' \n')" = 1f8b ] || fail "pprof: $2 is not gzip" ;;
    pickle) check_pickle "$2" ;;
    html) grep -q "</html>" "$2" || fail "html: $2 is not the page" ;;
    esac
}

case $case_name in
writers_regular_0600)
    # Every writer: a new regular file, 0600 whatever the umask, no temporary file left.
    for w in $WRITERS; do
        d=$VT_WORK/$w; mkdir -p "$d"
        (umask 022; write_to $w "$d/out") || fail "$w: exit status $?: $(cat "$err")"
        [ "$(type_of "$d/out")" = "regular file" ] || fail "$w: not a regular file"
        [ "$(mode_of "$d/out")" = 600 ] || fail "$w: mode $(mode_of "$d/out"), expected 600"
        check_content $w "$d/out"
        [ "$(listing "$d")" = "out " ] || fail "$w: left behind: $(listing "$d")"
    done ;;
writers_symlink_replaced)
    # A symlink at the final name (made by someone else: owned by nobody) is replaced, not followed.
    need_root
    for w in $WRITERS; do
        d=$VT_WORK/$w; mkdir -p "$d"
        echo precious >"$d/victim"; chmod 644 "$d/victim"
        ln -s victim "$d/out" && chown -h 65534:65534 "$d/out"
        write_to $w "$d/out" || fail "$w: exit status $?"
        [ "$(cat "$d/victim")" = precious ] || fail "$w: wrote through the symlink"
        [ "$(type_of "$d/out")" = "regular file" ] || fail "$w: the symlink was not replaced"
        [ "$(mode_of "$d/out")" = 600 ] || fail "$w: mode $(mode_of "$d/out")"
        check_content $w "$d/out"
    done ;;
writers_device_in_place)
    # A character device at the output is written in place: still the same device node after.
    need_root
    for w in $WRITERS; do
        d=$VT_WORK/$w; mkdir -p "$d"; null_device "$d/null"; chmod 666 "$d/null"
        ino=$(stat -c %i "$d/null")
        write_to $w "$d/null" || fail "$w: exit status $?: $(cat "$err")"
        [ "$(type_of "$d/null")" = "character special file" ] || fail "$w: the device was replaced"
        [ "$(stat -c %i:%t:%T:%a "$d/null")" = "$ino:1:3:666" ] || fail "$w: the device changed: $(stat -c %i:%t:%T:%a "$d/null")"
        [ "$(listing "$d")" = "null " ] || fail "$w: left behind: $(listing "$d")"
        # A trusted symlink to it (ours, in our directory) is followed, as /dev/stdout is.
        ln -s null "$d/link"
        write_to $w "$d/link" || fail "$w: exit status $? through the symlink"
        [ "$(type_of "$d/link")" = "symbolic link" ] || fail "$w: the symlink to the device was replaced"
        rm "$d/link"
    done ;;
writers_fifo_in_place)
    # A FIFO at the output is written in place: the reader gets the whole file, the FIFO stays.
    for w in $WRITERS; do
        d=$VT_WORK/$w; mkdir -p "$d"; mkfifo "$d/fifo"
        cat "$d/fifo" >"$VT_WORK/$w.read" &
        reader=$!
        write_to $w "$d/fifo" || fail "$w: exit status $?: $(cat "$err")"
        wait $reader
        [ "$(type_of "$d/fifo")" = "fifo" ] || fail "$w: the FIFO was replaced"
        [ "$(listing "$d")" = "fifo " ] || fail "$w: left behind: $(listing "$d")"
        check_content $w "$VT_WORK/$w.read"
    done ;;
writers_dash_is_stdout)
    # '-' is standard output for every --output.
    for w in $WRITERS; do
        write_to $w - || fail "$w: exit status $?: $(cat "$err")"
        check_content $w "$out"
        [ ! -e ./- ] || fail "$w: wrote a file named -"
    done ;;
writers_refuse_socket_directory)
    # A socket or a directory at the output: refused with one line, nothing written anywhere.
    for w in $WRITERS; do
        d=$VT_WORK/$w; mkdir -p "$d/sub"; make_socket "$d/sock"
        write_to $w "$d/sub"; status=$?
        [ $status -eq 1 ] || fail "$w: exit status $status for a directory"
        stderr_is_one_line; stderr_has "vramtrace: error: $d/sub is a directory: not written"
        write_to $w "$d/sock"; status=$?
        [ $status -eq 1 ] || fail "$w: exit status $status for a socket"
        stderr_is_one_line; stderr_has "vramtrace: error: $d/sock is a socket: not written"
        [ "$(type_of "$d/sock")" = "socket" ] || fail "$w: the socket was replaced"
        [ "$(listing "$d")" = "sock sub " ] || fail "$w: left behind: $(listing "$d")"
        [ -z "$(listing "$d/sub")" ] || fail "$w: wrote into the directory"
    done ;;
inputs_special_files)
    # summary, diff, merge, export of a device or socket: refused at once, one line. A FIFO is read
    # once: with no writer yet, a note says so, and the input is read when one comes.
    need_root
    null_device "$VT_WORK/null"; make_socket "$VT_WORK/sock"
    for f in null sock; do
        kind=device; [ $f = sock ] && kind=socket
        run 1 timeout 10 "$VT" summary "$VT_WORK/$f"; stderr_is_one_line
        stderr_has "vramtrace: error: $VT_WORK/$f: is a $kind, not a snapshot file"
        run 1 timeout 10 "$VT" diff "$VT_WORK/$f" "$in"; stderr_has "is a $kind, not a snapshot file"
        run 1 timeout 10 "$VT" merge "$VT_WORK/$f"; stderr_has "is a $kind, not a snapshot file"
        run 1 timeout 10 "$VT" export -f folded "$VT_WORK/$f"; stderr_has "is a $kind, not a snapshot file"
    done
    mkfifo "$VT_WORK/fifo"
    { sleep 1; cat "$in" >"$VT_WORK/fifo"; } &
    run 0 timeout 20 "$VT" summary "$VT_WORK/fifo"; stderr_is_one_line
    stderr_has "vramtrace: note: $VT_WORK/fifo is a FIFO: waiting for a writer (read once, as it comes)"
    grep -q "memory summary" "$out" || fail "no summary from the FIFO"
    wait ;;
text_outputs_escaped)
    # Names with ESC, CR and LF: no raw control character reaches summary, diff, merge or folded
    # output; an option value of 100 KB is echoed bounded.
    jq '.frames[1].function = "evil\u001b[2J\rline\nforged" | .events[0].label = "m\u001b]0;title\u0007"' "$in" >"$VT_WORK/esc.json"
    jq '.frames[1].function = "good"' "$in" >"$VT_WORK/base.json"
    for cmd in "summary $VT_WORK/esc.json" "diff $VT_WORK/base.json $VT_WORK/esc.json" "merge $VT_WORK/esc.json" \
               "export -f folded $VT_WORK/esc.json"; do
        # shellcheck disable=SC2086
        "$VT" $cmd >"$out" 2>"$err"
        grep -q 'evil' "$out" || fail "$cmd: the name is not shown"
        if LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$out"; then fail "$cmd: a raw control character in stdout"; fi
        if grep -q '^forged' "$out"; then fail "$cmd: a name's line feed made a line of its own"; fi
    done
    big=$(head -c 100000 /dev/zero | tr '\0' 7)
    run 2 "$VT" diff --top "x$big" a b; stderr_is_one_line
    [ "$(wc -c <"$err")" -lt 1200 ] || fail "a 100 KB value echoed in full ($(wc -c <"$err") bytes)"
    stderr_has "(100"
    run 2 "$VT" export -f folded --device "$big" "$in"; stderr_is_one_line
    [ "$(wc -c <"$err")" -lt 400 ] || fail "--device echoed $(wc -c <"$err") bytes" ;;
pickles_restricted)
    # Every pickle the suite's fixtures give loads with the restricted unpickler: the golden file,
    # and an export of every snapshot in the test data that the reader accepts.
    check_pickle "$(dirname "$0")/export/data/memory_snapshot.pickle"
    n=0
    for f in "$VT_CLI_DATA"/*.json "$(dirname "$0")"/../unit/report/data/*.json \
             "$(dirname "$0")"/../../fuzz/corpus/snapshot_reader/*.json; do
        "$VT" export -f pickle -o "$VT_WORK/p.pickle" "$f" >/dev/null 2>&1 || continue
        check_pickle "$VT_WORK/p.pickle"
        n=$((n + 1))
    done
    [ $n -ge 6 ] || fail "only $n snapshots exported" ;;
attacker_planted_names)
    # Another user (nobody, 65534) owns the output directory and plants, at the temporary names of
    # the next pids (both spellings: ".NAME.tmp.PID" and "NAME.tmp-PID") and at the final name,
    # symlinks to a file of root's (first round) or regular files of its own (second round). Every
    # file-writing command runs as root: the victim stays untouched, the output is root's own 0600
    # file, nothing of ours is left behind. The kernel's protected_symlinks (which would hide a
    # hole in a sticky directory) cannot help here: the directory is the attacker's.
    need_root
    command -v setpriv >/dev/null || { echo "SKIP [$case_name]: no setpriv (util-linux)"; exit 77; }
    echo "fs.protected_symlinks = $(cat /proc/sys/fs/protected_symlinks 2>/dev/null || echo unknown)"
    secret=$VT_WORK/secret; mkdir -m 700 "$secret"; echo precious >"$secret/victim"
    # The attacker's directory is staged outside the build tree, which nobody may not reach.
    stage=$(sh "$(dirname "$0")/../support/other_user_stage.sh") || fail "cannot stage a directory for nobody"
    trap 'rm -rf "$stage"' EXIT
    d=$stage/shared; mkdir "$d"; chown 65534:65534 "$d"; chmod 755 "$d"
    as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
    # plant KIND NAME FIRST LAST: as nobody, KIND (link|file) at NAME's temporary names and NAME.
    plant() {
        as_nobody perl -e '
            my ($kind, $dir, $name, $first, $last, $victim) = @ARGV;
            for my $p ($first .. $last) {
                for my $n ("$dir/.$name.tmp.$p", "$dir/$name.tmp-$p") {
                    if ($kind eq "link") { symlink($victim, $n) or die "symlink $n: $!" }
                    else { open(my $f, ">", $n) or die "$n: $!"; print $f "planted-by-nobody\n"; close $f; chmod 0666, $n }
                }
            }
            if ($kind eq "link") { symlink($victim, "$dir/$name") or die "symlink: $!" }' \
            "$1" "$d" "$2" "$3" "$4" "$secret/victim" || fail "planting as nobody failed"
    }
    # attack KIND NAME MODE COMMAND...: plants around the next pid, runs COMMAND (with its pid
    # written first, to know that the planted range held it), checks the victim and NAME.
    attack() {
        kind=$1; name=$2; want_mode=$3; shift 3
        tries=0
        while :; do
            tries=$((tries + 1))
            find "$d" -mindepth 1 -delete
            next=$(($(cat /proc/sys/kernel/ns_last_pid) + 1))
            plant "$kind" "$name" "$next" $((next + 400))
            sh -c 'echo $$ >"$0"; exec "$@"' "$VT_WORK/pid" "$@" >"$out" 2>"$err" </dev/null
            status=$?
            pid=$(cat "$VT_WORK/pid")
            [ "$pid" -ge "$next" ] && [ "$pid" -le $((next + 400)) ] && break
            [ $tries -lt 10 ] || fail "the command's pid $pid was never within the planted range"
        done
        [ $status -eq 0 ] || fail "$kind at $name: exit status $status: $*"
        [ "$(cat "$secret/victim")" = precious ] || fail "$kind at $name: the victim was written: $*"
        [ "$(stat -c %u:%a "$secret/victim")" = "0:644" ] || fail "$kind at $name: the victim changed mode or owner"
        if [ "$want_mode" = gone ]; then
            [ ! -e "$d/$name" ] && [ ! -L "$d/$name" ] || fail "$kind at $name: $name left at exit: $*"
        else
            [ "$(type_of "$d/$name")" = "regular file" ] || fail "$kind at $name: not a regular file: $*"
            [ "$(stat -c %u:%a "$d/$name")" = "0:$want_mode" ] || fail "$kind at $name: owner:mode $(stat -c %u:%a "$d/$name"), expected 0:$want_mode: $*"
            grep -q planted-by-nobody "$d/$name" && fail "$kind at $name: the attacker's file became the output: $*"
        fi
        # The attacker's own names stay as planted; nothing of ours but the output is left.
        ours=$(find "$d" -mindepth 1 -user 0 ! -name "$name" | head -3)
        [ -z "$ours" ] || fail "$kind at $name: left behind: $ours"
        [ "$(find "$d" -mindepth 1 -user 65534 -type f -newer "$secret/victim" ! -empty -exec grep -L planted-by-nobody {} + | head -1)" = "" ] ||
            fail "$kind at $name: an attacker's file holds our output"
        echo "ok: $kind at $name (pid $pid, try $tries): $*"
    }
    for kind in link file; do
        for w in chrome folded pprof pickle html; do
            attack $kind out.$w 600 "$VT" export -f $w --output "$d/out.$w" "$in"
        done
        attack $kind merged.json 600 "$VT" merge -q --output "$d/merged.json" "$in" "$in"
        attack $kind snap.json 600 env LD_PRELOAD="$VT_PRELOAD" VRAMTRACE_OUTPUT="$d/snap.json" \
            VRAMTRACE_SUMMARY=0 "$VT_BIN/leaky_pipeline"
        attack $kind run.json 600 "$VT" run --no-summary --output "$d/run.json" -- "$VT_BIN/leaky_pipeline"
        # The Prometheus textfile: 0644 while the program runs (it prints the mode), and its last
        # reading (process_up 0) left at exit, still 0644.
        attack $kind vt.prom 644 env LD_PRELOAD="$VT_PRELOAD" VRAMTRACE_PROMETHEUS_TEXTFILE="$d/vt.prom" \
            VRAMTRACE_PROMETHEUS_PERIOD=0.05 VRAMTRACE_OUTPUT="$VT_WORK/prom-snap.json" VRAMTRACE_SUMMARY=0 \
            STANDIN_CUDA_DEVICE_BYTES=67108864 "$VT_BIN/standin_prog_trigger_watch" prometheus "$d/vt.prom"
        grep -q "^mode 644$" "$out" || fail "$kind: the Prometheus textfile was not 0644 while written"
        grep -q 'vramtrace_device_current_bytes{device="1"' "$out" || fail "$kind: the textfile lacks device 1"
        grep -q '^vramtrace_process_up{.*} 0$' "$d/vt.prom" || fail "$kind: the textfile left at exit does not say process_up 0"
    done ;;
*)
    echo "unknown case: $case_name"; exit 2 ;;
esac
exit 0
