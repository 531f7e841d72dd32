#!/usr/bin/env bash
# `cmake --install` as a user runs it: stripped binaries with a .gnu_debuglink to the debug info of
# the component debuginfo, a tree that still runs after it is moved, man pages that list every
# option of each command's --help, and the bash completion sourced and asked for option values,
# commands and snapshot file names.
# Usage: check_install.sh BUILD_DIR
set -uo pipefail
build=$(cd "$1" && pwd)
. "$(dirname "${BASH_SOURCE[0]}")/../common/check_lines.sh"
for need in "readelf binutils" "objcopy binutils" "man man-db" "help2man help2man" "fish fish" "zsh zsh"; do
    set -- $need
    command -v "$1" >/dev/null || fail "$1 missing: install the Debian package $2"
done
[[ -f /usr/share/bash-completion/bash_completion ]] || fail "bash_completion missing: install the Debian package bash-completion"
((failures == 0)) || finish

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/a" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "cmake --install"; finish; }
cmake --install "$build" --prefix "$tmp/a" --component debuginfo >>"$tmp/install.log" 2>&1 || fail "cmake --install --component debuginfo"
for f in bin/vramtrace lib/libvramtrace.so; do
    sections=$(readelf -S -W "$tmp/a/$f")
    name=$(basename "$f")
    if grep -q -e '\.debug_info' -e '\.symtab' <<<"$sections"; then fail "$f is not stripped"; else pass "$f stripped ($(stat -c %s "$tmp/a/$f") bytes)"; fi
    # .gnu_debuglink: the file name, NUL padding, then a CRC
    objcopy --dump-section .gnu_debuglink="$tmp/link" "$tmp/a/$f" "$tmp/copy" 2>/dev/null
    link=$(tr '\0' '\n' <"$tmp/link" | head -1)
    debug=$tmp/a/$(dirname "$f")/.debug/$name.debug
    debug_sections=$(readelf -S -W "$debug" 2>/dev/null)
    [[ $link == "$name.debug" && $debug_sections == *.debug_info* ]] \
        && pass "$f: .gnu_debuglink $link, debug info in $(dirname "$f")/.debug/" || fail "$f: debuglink '$link', $debug"
done

mv "$tmp/a" "$tmp/moved"
cd "$tmp"
"$tmp/moved/bin/vramtrace" run --quiet --output "$tmp/demo.json" -- "$build/bin/leaky_pipeline" >"$tmp/demo.out" 2>&1
rc=$?
n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["allocations"]))' "$tmp/demo.json" 2>/dev/null)
[[ $rc -eq 0 && $n == 5 ]] && pass "moved tree: vramtrace run on the demo, 5 live allocations" || fail "moved tree: exit $rc, allocations '$n'"

# Every option of each command's --help is in its man page (one source: help2man reads --help).
for c in run summary diff merge export top view; do
    page=$(MANWIDTH=200 man -l "$tmp/moved/share/man/man1/vramtrace-$c.1.gz" 2>/dev/null | sed 's/\xe2\x80\x90/-/g')
    missing=
    for opt in $("$build/bin/vramtrace" help "$c" | grep -oE '^ {2,4}(-[A-Za-z], )?--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z][a-z0-9-]*'); do
        grep -q -- "$opt" <<<"$page" || missing+=" $opt"
    done
    [[ -n $page && -z $missing ]] && pass "man vramtrace-$c: every option of its --help" || fail "man vramtrace-$c lacks:$missing"
done

complete_words() { # WORDS...: the completion of the last word, one line, sorted
    bash -c 'source /usr/share/bash-completion/bash_completion; source "$1"; shift
             COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
             _vramtrace; printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' \
        _ "$tmp/moved/share/bash-completion/completions/vramtrace" "$@"
}
mkdir -p "$tmp/snaps/sub" && touch "$tmp/snaps/a.json" "$tmp/snaps/b.txt"
check() { local want=$1; shift; local got; got=$(complete_words "$@"); [[ $got == "$want" ]] && pass "bash completion '$*' -> $got" || fail "bash completion '$*': got '$got', want '$want'"; }
check "chrome folded html pickle pprof " vramtrace export --format ""
check "exit peak " vramtrace view --at ""
check "live peak " vramtrace diff --metric ""
check "cupti preload " vramtrace run --backend ""
check "--help --version diff export help merge run summary top view " vramtrace ""
check "--format " vramtrace export --form
check "diff export merge run summary top view " vramtrace help ""
cd "$tmp/snaps"
check "a.json sub " vramtrace summary ""
check "a.json sub " vramtrace export --base ""

# fish answers through `complete -C`; zsh's file is checked for syntax (its completion needs a
# terminal to be asked).
fish_words() { fish -c "source '$tmp/moved/share/fish/vendor_completions.d/vramtrace.fish'; complete -C '$1'" | cut -f1 | sort | tr '\n' ' '; }
for pair in "vramtrace export --format |chrome folded html pickle pprof " "vramtrace diff --me|--metric " \
            "vramtrace help |diff export merge run summary top view "; do
    got=$(fish_words "${pair%%|*}")
    [[ $got == "${pair#*|}" ]] && pass "fish completion '${pair%%|*}' -> $got" || fail "fish completion '${pair%%|*}': got '$got', want '${pair#*|}'"
done
zsh -n "$tmp/moved/share/zsh/vendor-completions/_vramtrace" && pass "zsh completion parses" || fail "zsh completion does not parse"
finish
