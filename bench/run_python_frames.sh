#!/bin/sh
# Cost of Python frames (docs/python-frames.md): ns per cudaMalloc+cudaFree pair from Python, on the
# stand-in runtime: without the library; with it and VRAMTRACE_PYTHON=0; with the public-API reader
# only (VRAMTRACE_PYTHON_STRUCTS=0, the first implementation); with the default struct reader; each
# from a call that keeps the GIL (ctypes.PyDLL), and the last also from one that releases it (CDLL).
# Usage: bench/run_python_frames.sh BUILD_DIR [PYTHON] [PAIRS]
set -eu
build=${1:?build directory}
python=${2:-/usr/bin/python3}
pairs=${3:-20000}
here=$(cd "$(dirname "$0")" && pwd)
ext="$build/bin/libvt_python_ext.so"
lib="$build/lib/libvramtrace.so"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$python" --version
echo "-- no library (GIL held)"
"$python" "$here/python_frames_bench.py" "$ext" "$pairs" gil
echo "-- no library (GIL released)"
"$python" "$here/python_frames_bench.py" "$ext" "$pairs" released
echo "-- library, VRAMTRACE_PYTHON=0 (native frames only)"
VRAMTRACE_PYTHON=0 VRAMTRACE_SUMMARY=0 VRAMTRACE_OUTPUT="$out/a.json" LD_PRELOAD="$lib" \
    "$python" "$here/python_frames_bench.py" "$ext" "$pairs" gil
echo "-- library, public-API reader only (VRAMTRACE_PYTHON_STRUCTS=0), GIL held"
VRAMTRACE_PYTHON_STRUCTS=0 VRAMTRACE_SUMMARY=0 VRAMTRACE_OUTPUT="$out/b.json" LD_PRELOAD="$lib" \
    "$python" "$here/python_frames_bench.py" "$ext" "$pairs" gil
echo "-- library, Python frames on (default: struct reader + cache), GIL held"
VRAMTRACE_SUMMARY=0 VRAMTRACE_OUTPUT="$out/c.json" LD_PRELOAD="$lib" \
    "$python" "$here/python_frames_bench.py" "$ext" "$pairs" gil
echo "-- library, Python frames on (default), GIL released"
VRAMTRACE_SUMMARY=0 VRAMTRACE_OUTPUT="$out/d.json" LD_PRELOAD="$lib" \
    "$python" "$here/python_frames_bench.py" "$ext" "$pairs" released
