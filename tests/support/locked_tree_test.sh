#!/bin/sh
# locked_tree_test.sh SOURCE_DIR BUILD_DIR REGEX: runs the CTest tests whose names match REGEX (the
# tests that run something as another user) with the source and build trees behind a directory
# only root can cross, as when the repository is cloned into /root or a `mktemp -d`, at the very
# same paths; every one must pass.
#
# In a private mount namespace (unshare), each tree's directory is covered by a tmpfs of mode 0700
# that holds bind mounts of its entries: root sees every file where it was, uid 65534 reaches
# nothing below. Nothing outside the namespace changes. Needs root and mount namespaces: without
# them the test is skipped (exit 77), never passed.
set -eu
if [ "${1:-}" != --inside ]; then
    [ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (mount namespace, setpriv)"; exit 77; }
    command -v setpriv >/dev/null || { echo "SKIP: no setpriv (util-linux)"; exit 77; }
    unshare --mount --propagation private true 2>/dev/null ||
        { echo "SKIP: no mount namespace here (unshare --mount: not permitted)"; exit 77; }
    hold=$(mktemp -d)
    status=0
    unshare --mount --propagation private sh "$0" --inside "$hold" "$@" || status=$?
    # The mounts went with the namespace: only the empty directory is left.
    rmdir "$hold"
    exit $status
fi
# Inside: $hold is covered by a tmpfs first, so that the bind mounts of the trees hang below a
# mount that ends with the namespace (nothing here ever deletes below them).
hold=$2
src=$(cd "$3" && pwd -P)
build=$(cd "$4" && pwd -P)
regex=$5
mount -t tmpfs -o mode=0700,size=64m vt-hold "$hold"

# lock DIR: covers DIR with a 0700 tmpfs holding bind mounts of what DIR holds.
lock() {
    real="$hold/$(echo "$1" | tr / _)"
    mkdir "$real"
    mount --bind "$1" "$real"
    mount -t tmpfs -o mode=0700,size=64m vt-locked "$1"
    for entry in "$real"/* "$real"/.[!.]* "$real"/..?*; do
        [ -e "$entry" ] || [ -L "$entry" ] || continue
        name=${entry##*/}
        if [ -L "$entry" ]; then
            ln -s "$(readlink "$entry")" "$1/$name"
            continue
        fi
        if [ -d "$entry" ]; then mkdir "$1/$name"; else : >"$1/$name"; fi
        mount --bind "$entry" "$1/$name"
    done
}
lock "$src"
case $build/ in "$src"/*) ;; *) lock "$build" ;; esac
# CTest's own files of this inner run stay apart from the outer run's.
mkdir -p "$build/Testing"
mount -t tmpfs -o mode=0755,size=64m vt-testing "$build/Testing"

# The lock holds: root still sees the trees, uid 65534 reaches neither.
[ -x "$build/bin/vramtrace" ] || { echo "FAIL: $build/bin/vramtrace not seen through the lock"; exit 1; }
for d in "$src/tests" "$build/bin"; do
    if setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$d" 2>/dev/null; then
        echo "FAIL: uid 65534 still reaches $d"
        exit 1
    fi
done
echo "source $src and build $build: behind 0700 directories; running the tests matching: $regex"

out="$hold/ctest.out"
status=0
ctest --test-dir "$build" -R "$regex" --output-on-failure --no-tests=error >"$out" 2>&1 || status=$?
cat "$out"
# Each must have run and passed: a skipped test is a failure here.
ran=$(sed -n 's/^[0-9]*% tests passed, [0-9]* tests failed out of \([0-9]*\)$/\1/p' "$out")
if grep -q "(Skipped)\|\*\*\*Skipped\|Not Run" "$out"; then
    echo "FAIL: a test was skipped"
    exit 1
fi
[ "$status" -eq 0 ] || { echo "FAIL: ctest exited $status"; exit 1; }
echo "locked tree: ${ran:-0} tests passed"
[ "${ran:-0}" -eq "${VT_LOCKED_TESTS:-1}" ] || { echo "FAIL: expected ${VT_LOCKED_TESTS:-1} tests"; exit 1; }
