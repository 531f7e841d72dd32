# ns per traced cudaMalloc + cudaFree pair made from Python at several Python stack depths, for
# docs/python-frames.md. Run by bench/run (cases python_frames_*) untraced and under each library
# variant (VRAMTRACE_PYTHON=0 is one: bench/README.md). The pair goes through
# tests/e2e/python/python_alloc_ext.c on the stand-in runtime, loaded with ctypes.PyDLL (mode
# "gil": the GIL is held during the call) or ctypes.CDLL (mode "released": the GIL is released
# around it, as PyTorch's ops do).
# Usage: python_frames_bench.py EXTENSION [PAIRS] [gil|released] [DEPTH]
# With DEPTH, makes PAIRS pairs once at that many Python frames and times nothing (for
# bench/count_python_instructions.sh, which counts instructions under callgrind).
import ctypes
import sys
import time

mode = sys.argv[3] if len(sys.argv) > 3 else "gil"
loader = ctypes.PyDLL if mode == "gil" else ctypes.CDLL
ext = loader(sys.argv[1], mode=ctypes.RTLD_GLOBAL)
ext.vt_py_alloc.argtypes = [ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p)]
ext.vt_py_free.argtypes = [ctypes.c_void_p]
pairs = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
p = ctypes.c_void_p()
ref = ctypes.byref(p)
alloc, free = ext.vt_py_alloc, ext.vt_py_free


def loop(n):
    for _ in range(n):
        alloc(4096, ref)
        free(p)


def at_depth(depth, n):
    if depth <= 1:
        t0 = time.perf_counter_ns()
        loop(n)
        return time.perf_counter_ns() - t0
    return at_depth(depth - 1, n)


if len(sys.argv) > 4:
    at_depth(int(sys.argv[4]) - 2, pairs)
    sys.exit(0)

for depth in (1, 10, 50):
    at_depth(depth, pairs // 10)  # warm: stacks interned, caches filled
    best = min(at_depth(depth, pairs) for _ in range(5))
    print("depth=%d ns_per_pair=%.0f" % (depth + 2, best / pairs))  # + main and <module>
