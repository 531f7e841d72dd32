#!/usr/bin/env bash
# Packs what the GPU machine needs from a build made here into .gpu-carry/ (ignored by git), for
# the device tool's `carry`: bin/vramtrace, lib/libvramtrace.so and, since that machine has no
# libdw, this machine's libdw.so.1 beside the library (the symbolizer looks there first).
# Usage: tests/gpu/prepare_carry.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
rm -rf .gpu-carry && mkdir -p .gpu-carry/bin .gpu-carry/lib
cp "$build/bin/vramtrace" .gpu-carry/bin/
cp "$build/lib/libvramtrace.so" .gpu-carry/lib/
libdw=$(ldconfig -p | awk '/libdw.so.1 \(libc6,x86-64\)/{print $NF; exit}')
[ -n "$libdw" ] && cp -L "$libdw" .gpu-carry/lib/libdw.so.1
du -sh .gpu-carry
