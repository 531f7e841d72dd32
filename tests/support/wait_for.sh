# Sourced by the shell tests. wait_for FILE: until FILE exists, up to 20 s (400 x 50 ms); then
# the caller's fail() with what was waited for.
wait_for() {
    i=0
    while [ ! -e "$1" ]; do
        i=$((i + 1)); [ $i -gt 400 ] && fail "timed out waiting for $1"
        sleep 0.05
    done
}
