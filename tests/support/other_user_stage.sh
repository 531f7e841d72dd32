#!/bin/sh
# other_user_stage.sh [PATH...]: makes a directory that another user (nobody, uid 65534) can reach,
# copies each PATH into it under its own name (files and directories, symlinks resolved, everything
# readable by all, executables kept executable), and prints the directory's path on stdout.
#
# Tests that run something as another user (setpriv) or let another user plant files stage there
# what that user opens: the library, the program, the stand-in driver, the directories it writes.
# The build and source trees are never used for that: a clone may lie under a 0700 directory (/root,
# a `mktemp -d`), which only root can cross.
#
# The directory is made under TMPDIR when every directory above it can be crossed by others, under
# /tmp otherwise; its mode is 0755. The caller removes it (rm -rf) when done. Exits 1, with one
# line on stderr, when it cannot be made or when nobody could not reach it.
set -eu

reachable_by_others() {
    p=$1
    while [ -n "$p" ] && [ "$p" != / ]; do
        m=$(stat -L -c %A "$p" 2>/dev/null) || return 1
        case $m in d????????[xt]) ;; *) return 1 ;; esac
        p=$(dirname "$p")
    done
    return 0
}

base=${TMPDIR:-/tmp}
case $base in /*) ;; *) base=/tmp ;; esac
reachable_by_others "$base" || base=/tmp
dir=$(mktemp -d "$base/vramtrace-other-user.XXXXXX") || { echo "other_user_stage.sh: cannot make a directory in $base" >&2; exit 1; }
chmod 0755 "$dir"
for path in "$@"; do
    cp -RL -- "$path" "$dir/" || { echo "other_user_stage.sh: cannot copy $path" >&2; rm -rf "$dir"; exit 1; }
done
chmod -R a+rX "$dir"
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1 &&
    ! setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$dir"; then
    echo "other_user_stage.sh: $dir cannot be reached by uid 65534" >&2
    rm -rf "$dir"
    exit 1
fi
echo "$dir"
