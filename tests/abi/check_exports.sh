#!/usr/bin/env bash
# Checks what libvramtrace.so shows the processes it is loaded into:
#  - it exports exactly the rows of hooks.def, the vramtrace_* API, InitializeInjection (the CUDA
#    driver's injection entry, docs/cupti.md), InitializeInjectionNvtx2 and InitializeInjectionNvtxExtension (NVTX's, docs/nvtx.md) dlsym (under both glibc versions) and sigaction and signal (GLIBC_2.2.5, docs/triggers.md), nothing else (no libstdc++, libunwind, fmt or internal symbol that could clash);
#  - its NEEDED entries are only the libc family.
# Usage: check_exports.sh LIBRARY HOOKS_DEF
set -euo pipefail
lib=$1
hooks_def=$2
fail=0

expected=$( { grep -oE '^VT_[A-Z_]+\(([A-Za-z0-9_]+)' "$hooks_def" | sed -E 's/^VT_[A-Z_]+\(//';
              echo vramtrace_dump; echo vramtrace_stats; echo vramtrace_mark; echo vramtrace_scope_reset; echo vramtrace_scope_stats; echo dlsym; echo sigaction; echo signal;
              echo InitializeInjection; echo InitializeInjectionNvtx2; echo InitializeInjectionNvtxExtension; } | sort -u)
exported=$(nm -D --defined-only "$lib" | awk '$2 != "A" {print $3}' | sed 's/@.*//' | sort -u)

extra=$(comm -13 <(echo "$expected") <(echo "$exported"))
missing=$(comm -23 <(echo "$expected") <(echo "$exported"))
if [ -n "$extra" ]; then echo "exported but not allowed:"; echo "$extra"; fail=1; fi
if [ -n "$missing" ]; then echo "missing exports:"; echo "$missing"; fail=1; fi

# dlsym under both versions, runtime symbols under NVIDIA's version node.
versions=$(objdump -T "$lib")
for v in '\(GLIBC_2.2.5\) +dlsym$' 'GLIBC_2.2.5 +sigaction$' 'GLIBC_2.2.5 +signal$' 'GLIBC_2.34 +dlsym$' 'libcudart.so.13 +cudaMalloc$'; do
  if ! grep -qE "$v" <<<"$versions"; then echo "no export matching: $v"; fail=1; fi
done

allowed='^(libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1|ld-linux-x86-64\.so\.2)$'
needed=$(readelf -d "$lib" | sed -nE 's/.*\(NEEDED\).*\[(.*)\]/\1/p')
bad=$(grep -vE "$allowed" <<<"$needed" || true)
if [ -n "$bad" ]; then echo "NEEDED entries outside the libc family:"; echo "$bad"; fail=1; fi

count=$(wc -l <<<"$exported")
if [ $fail -eq 0 ]; then echo "ok: $count exported symbols, NEEDED: $(echo $needed)"; fi
exit $fail
