#!/usr/bin/env bash
# Packs what the GPU machine needs from a build made here into .gpu-carry/ (ignored by git), for
# the device tool's `carry`, laid out like a build directory: bin/vramtrace and lib/libvramtrace.so
# without their debug info (the carry's size limit), since that machine has no libdw, this
# machine's libdw.so.1 beside the library (the symbolizer looks there first), and the CLI's
# libraries that machine lacks (libfmt, libsimdjson) in cli-lib/, found through the carried CLI's
# RUNPATH (patchelf), so that nothing reaches the traced programs' library path.
# A build with the benchmarks (VRAMTRACE_BUILD_BENCH) also gives what `bench/run cpu --build
# .gpu-carry` needs there: bin/bench_*, lib/libvt_capture_probe.so and Google Benchmark's library
# as the programs were linked (their RUNPATH looks in ../lib), bin/libvt_python_ext.so, and the
# stand-in driver and runtime in standin/. CMakeCache.txt and COMMIT name the build type and the
# source's commit for the results (that machine's copy of the tree has no git history).
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
if [ -x "$build/bin/bench_tracking" ]; then
  mkdir -p .gpu-carry/standin
  for b in "$build"/bin/bench_*; do cp "$b" .gpu-carry/bin/; done
  cp "$build/lib/libvt_capture_probe.so" .gpu-carry/lib/
  [ -f "$build/bin/libvt_python_ext.so" ] && cp "$build/bin/libvt_python_ext.so" .gpu-carry/bin/
  strip --strip-debug .gpu-carry/bin/bench_* .gpu-carry/lib/libvt_capture_probe.so
  # Google Benchmark: the build's own copy or Debian's libbenchmark.so.1debian, whichever the
  # programs were linked with; the GPU machine has neither.
  for so in $(ldd "$build/bin/bench_tracking" | awk '/libbenchmark/{print $3}'); do cp -L "$so" .gpu-carry/lib/; done
  cp -L "$build/standin/libcuda.so.1" "$build/standin/libcudart.so.13" .gpu-carry/standin/
fi
cp "$build/CMakeCache.txt" .gpu-carry/CMakeCache.txt
git rev-parse --short HEAD >.gpu-carry/COMMIT 2>/dev/null || echo '?' >.gpu-carry/COMMIT
git diff --quiet HEAD 2>/dev/null || sed -i 's/$/ + local changes/' .gpu-carry/COMMIT
du -sh .gpu-carry
