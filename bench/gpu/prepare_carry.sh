#!/usr/bin/env bash
# Packs what bench/gpu/run_all.sh needs from a build made here into .gpu-carry/ (ignored by git), for
# the device tool's `carry`, laid out like a build directory so that bench/run_cpu.sh runs on it too:
#   bin/      vramtrace, bench_tracking, bench_capture_{fp,nofp}, bench_hook_pair_{fp,nofp},
#             bench_dump_program, bench_symbolize
#   lib/      libvramtrace.so (+ this machine's libdw.so.1 beside it, as tests/gpu/prepare_carry.sh
#             does), Google Benchmark's library, libvt_capture_probe.so
#   standin/  the stand-in libcuda.so.1 and libcudart.so.13 (the CPU benchmarks run on them there
#             too, on 16 idle cores)
# The CUDA program and the PyTorch loop are built / run from source on the GPU machine.
# Usage: bench/gpu/prepare_carry.sh [BUILD_DIR]      (default: build)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
rm -rf .gpu-carry && mkdir -p .gpu-carry/bin .gpu-carry/lib .gpu-carry/standin
cp "$build/bin/vramtrace" .gpu-carry/bin/
for b in bench_tracking bench_capture_fp bench_capture_nofp bench_hook_pair_fp bench_hook_pair_nofp \
         bench_dump_program bench_symbolize; do
  cp "$build/bin/$b" .gpu-carry/bin/
done
cp "$build/lib/libvramtrace.so" "$build/lib/libvt_capture_probe.so" .gpu-carry/lib/
# Google Benchmark: the build's own copy, or Debian's package (libbenchmark.so.1debian), whichever the
# benchmarks were linked with; the GPU machine has neither.
for so in $(ldd "$build/bin/bench_tracking" | awk '/libbenchmark/{print $3}'); do cp -L "$so" .gpu-carry/lib/; done
cp -L "$build/standin/libcuda.so.1" "$build/standin/libcudart.so.13" .gpu-carry/standin/
libdw=$(ldconfig -p | awk '/libdw.so.1 \(libc6,x86-64\)/{print $NF; exit}')
[ -n "$libdw" ] && cp -L "$libdw" .gpu-carry/lib/libdw.so.1
cp "$build/CMakeCache.txt" .gpu-carry/CMakeCache.txt # the build type, for the report
du -sh .gpu-carry
