#!/bin/bash
# How long a terminating signal takes to end a traced process that holds many live allocations:
# from kill -TERM to the process's death, the exit report (snapshot and summary) written between.
#   bench/signal_report_time.sh BUILD_DIR [ALLOCATIONS] [ROUNDS]
# Defaults: 100000 allocations, 5 rounds. Prints each round's milliseconds and the median, and the
# same for the untraced program (its death alone). docs/triggers.md quotes the figures.
set -eu
build=$(cd "$1" && pwd); count=${2:-100000}; rounds=${3:-5}
prog=$build/bin/standin_prog_terminate; lib=$build/lib/libvramtrace.so
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
one() { # one traced|plain: milliseconds from SIGTERM to death
    rm -f "$work/ready"
    if [ "$1" = traced ]; then
        STANDIN_TERMINATE_EXTRA=$count LD_PRELOAD=$lib VRAMTRACE_OUTPUT=$work/snap.json \
            "$prog" many "$work/ready" >/dev/null 2>"$work/err" &
    else
        STANDIN_TERMINATE_EXTRA=$count "$prog" many "$work/ready" >/dev/null 2>&1 &
    fi
    pid=$!
    while [ ! -e "$work/ready" ]; do sleep 0.05; done
    t0=$(now_ms); kill -TERM "$pid"; wait "$pid" || true; t1=$(now_ms)
    echo $((t1 - t0))
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for kind in plain traced; do
    times=$(for r in $(seq "$rounds"); do one "$kind"; done)
    echo "$kind ($count live allocations): $(echo $times) ms; median $(echo "$times" | tr ' ' '\n' | median) ms"
done
echo "snapshot: $(stat -c %s "$work/snap.json") bytes, $(jq '.allocations | length' "$work/snap.json") allocations"
