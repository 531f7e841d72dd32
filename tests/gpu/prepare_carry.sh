#!/usr/bin/env bash
# Packs what the GPU machine needs from a build made here into .gpu-carry/ (ignored by git), for
# the device tool's `carry`: bin/vramtrace and lib/libvramtrace.so without their debug info (the
# carry's size limit), since that machine has no libdw, this machine's libdw.so.1 beside the
# library (the symbolizer looks there first), and the CLI's libraries that machine lacks (libfmt,
# libsimdjson) in cli-lib/, found through the carried CLI's RUNPATH (patchelf), so that nothing
# reaches the traced programs' library path.
# Usage: tests/gpu/prepare_carry.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
rm -rf .gpu-carry && mkdir -p .gpu-carry/bin .gpu-carry/lib
cp "$build/bin/vramtrace" .gpu-carry/bin/
cp "$build/lib/libvramtrace.so" .gpu-carry/lib/
strip --strip-debug .gpu-carry/bin/vramtrace .gpu-carry/lib/libvramtrace.so
mkdir -p .gpu-carry/cli-lib
for name in libfmt.so.9 libsimdjson.so.14; do
  path=$(ldconfig -p | awk -v n="$name" '$1 == n && /x86-64/ {print $NF; exit}')
  [ -n "$path" ] && cp -L "$path" .gpu-carry/cli-lib/
done
patchelf --set-rpath '$ORIGIN/../cli-lib' .gpu-carry/bin/vramtrace
libdw=$(ldconfig -p | awk '/libdw.so.1 \(libc6,x86-64\)/{print $NF; exit}')
[ -n "$libdw" ] && cp -L "$libdw" .gpu-carry/lib/libdw.so.1
du -sh .gpu-carry
