#!/usr/bin/env bash
# The oldest glibc libvramtrace.so loads on: every GLIBC_x.y version its imports need (objdump -T)
# must be at most the ceiling (default 2.28, RHEL 8). The library's own versioned exports
# (dlsym@GLIBC_2.2.5 and dlsym@@GLIBC_2.34, defined by us) are not requirements and are skipped.
# Usage: check_glibc_floor.sh LIBRARY [CEILING]
set -euo pipefail
lib=$1
ceiling=${2:-2.28}
# Undefined symbols ("*UND*") only: their version is what the loader must find in glibc.
needed=$(objdump -T "$lib" | awk '$0 ~ /\*UND\*/' | grep -oE 'GLIBC_[0-9]+(\.[0-9]+)+' | sort -u -V || true)
fail=0
highest=
for v in $needed; do
  n=${v#GLIBC_}
  highest=$n
  if [ "$(printf '%s\n%s\n' "$n" "$ceiling" | sort -V | tail -n1)" != "$ceiling" ]; then
    echo "needs $v, above the ceiling GLIBC_$ceiling:"
    objdump -T "$lib" | awk '$0 ~ /\*UND\*/' | grep -F "($v)" | sed 's/^/  /'
    fail=1
  fi
done
# The ELF version requirements (readelf -V) say the same; check them too in case objdump hides one.
req=$(readelf -V "$lib" | sed -n "/Version needs section/,\$p" | grep -oE 'Name: GLIBC_[0-9.]+' | sed 's/Name: GLIBC_//' | sort -u -V || true)
for n in $req; do
  if [ "$(printf '%s\n%s\n' "$n" "$ceiling" | sort -V | tail -n1)" != "$ceiling" ]; then
    echo "version requirement GLIBC_$n above the ceiling GLIBC_$ceiling (readelf -V)"
    fail=1
  fi
done
if [ $fail -eq 0 ]; then echo "ok: highest glibc version needed: GLIBC_${highest:-none} (ceiling $ceiling)"; fi
exit $fail
