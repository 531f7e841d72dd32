#!/usr/bin/env bash
# The Debian package as CI makes and uses it: cpack from the build tree's already built binaries,
# lintian (no errors), dpkg -i, the installed `vramtrace run` on the stand-in demo, the installed
# man page through `man -l`, then dpkg -r and nothing of the package left. Needs root (dpkg -i):
# without it the check exits 77, which CTest shows as skipped, with the reason.
# Usage: check_deb.sh BUILD_DIR
set -uo pipefail
build=$(cd "$1" && pwd)
. "$(dirname "${BASH_SOURCE[0]}")/../common/check_lines.sh"

if [[ $(id -u) -ne 0 ]]; then echo "SKIP dpkg -i needs root (CI runs this as root)"; exit 77; fi
for need in "cpack cmake" "lintian lintian" "dpkg-shlibdeps dpkg-dev" "file file" "man man-db"; do
    set -- $need
    command -v "$1" >/dev/null || fail "$1 missing: install the Debian package $2"
done
((failures == 0)) || finish
if dpkg-query -W -f='${Status}' vramtrace 2>/dev/null | grep -q "install ok installed"; then
    fail "a vramtrace package is already installed here; not replacing it"; finish
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if (cd "$build" && cpack -G DEB -B "$tmp/pkg") >"$tmp/cpack.log" 2>&1; then :; else cat "$tmp/cpack.log"; fail "cpack"; finish; fi
deb=$(ls "$tmp"/pkg/vramtrace_*.deb 2>/dev/null)
[[ -f $deb ]] && pass "built $(basename "$deb") ($(stat -c %s "$deb") bytes)" || { fail "no .deb"; finish; }
depends=$(dpkg-deb -f "$deb" Depends)
[[ $depends == *"libc6 (>="* && $depends == *"libstdc++6"* ]] && pass "Depends from dpkg-shlibdeps: $depends" || fail "Depends: '$depends'"

lintian --fail-on error "$deb" >"$tmp/lintian.log" 2>&1
rc=$?
grep -v -e '^N:' -e 'root privileges' "$tmp/lintian.log" | sed 's/^/  lintian: /'
errors=$(grep -c '^E:' "$tmp/lintian.log")
[[ $rc -eq 0 && $errors -eq 0 ]] && pass "lintian: no errors" || fail "lintian: $errors error(s), exit $rc"

dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' | grep -v '/$' >"$tmp/files"
if dpkg -i "$deb" >"$tmp/dpkg.log" 2>&1; then pass "dpkg -i"; else cat "$tmp/dpkg.log"; fail "dpkg -i"; finish; fi

cd "$tmp"
/usr/bin/vramtrace run --quiet --output "$tmp/demo.json" -- "$build/bin/leaky_pipeline" >"$tmp/demo.out" 2>"$tmp/demo.err"
rc=$?
want=$(grep -c '^expect-live ' "$tmp/demo.out")
[[ $rc -eq 0 && $want -eq 5 ]] && pass "installed vramtrace run on the demo: exit 0, 5 expect-live lines" || fail "demo: exit $rc, $want expect-live lines"
got=$(/usr/bin/vramtrace summary "$tmp/demo.json" 2>&1 | grep -c 'leaky_pipeline.cpp:')
[[ $got -ge 5 ]] && pass "installed vramtrace summary names the demo's call sites ($got lines)" || fail "summary: $got call-site lines"
ver=$(/usr/bin/vramtrace --version | head -1)
[[ $ver == "vramtrace $(dpkg-deb -f "$deb" Version)" ]] && pass "installed --version: $ver" || fail "--version: $ver"
page=$(MANWIDTH=100 man -l /usr/share/man/man1/vramtrace-export.1.gz 2>&1)
grep -q -- "--format FORMAT" <<<"$page" && grep -q "chrome" <<<"$page" && pass "man -l vramtrace-export.1.gz shows --format" || fail "man page: $page"
page=$(MANWIDTH=100 man -l /usr/share/man/man1/vramtrace.1.gz 2>&1)
grep -q "commands:" <<<"$page" && pass "man -l vramtrace.1.gz" || fail "man page vramtrace(1)"

if dpkg -r vramtrace >"$tmp/dpkg-r.log" 2>&1; then pass "dpkg -r"; else cat "$tmp/dpkg-r.log"; fail "dpkg -r"; fi
left=0
while read -r f; do [[ -e $f ]] && { echo "  left: $f"; left=$((left + 1)); }; done <"$tmp/files"
[[ -e /usr/share/doc/vramtrace || -e /usr/lib/cmake/vramtrace || -e /usr/include/vramtrace ]] && left=$((left + 1))
# CPack's postrm (ldconfig) keeps dpkg's record as "config-files" until a purge; the package has
# no conffiles, so that record is all that stays, and the purge removes it.
status=$(dpkg-query -W -f='${Status}' vramtrace 2>/dev/null)
conffiles=$(dpkg-query -W -f='${Conffiles}' vramtrace 2>/dev/null)
[[ $left -eq 0 && -z $conffiles && ( -z $status || $status == *"not-installed"* || $status == *"config-files"* ) ]] \
    && pass "nothing left after dpkg -r ($(wc -l <"$tmp/files") files gone, status '$status')" || fail "$left path(s) left; status '$status'"
dpkg -P vramtrace >/dev/null 2>&1
status=$(dpkg-query -W -f='${Status}' vramtrace 2>/dev/null)
[[ -z $status || $status == *"not-installed"* ]] && pass "dpkg -P: no record left" || fail "after dpkg -P: '$status'"
finish
