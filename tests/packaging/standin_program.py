# A Python program on the stand-in CUDA runtime (its libcudart.so.13 through ctypes) that uses the
# vramtrace API, for check_wheel.sh: run as `python -m vramtrace run --output OUT -- THIS CUDART`.
# It prints "stats N" lines and the dump's path for the check to compare with the snapshot.
import ctypes
import sys

import vramtrace

MiB = 1 << 20
cudart = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)
cudart.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
cudart.cudaFree.argtypes = [ctypes.c_void_p]


def alloc(size):
    p = ctypes.c_void_p()
    if cudart.cudaMalloc(ctypes.byref(p), size) != 0:
        sys.exit("cudaMalloc failed")
    return p


print("loaded", vramtrace.loaded())
vramtrace.mark("before forward")
with vramtrace.phase("forward"):
    a = alloc(3 * MiB)
vramtrace.mark("after forward")
b = alloc(5 * MiB)
cudart.cudaFree(b)
vramtrace.scope_reset()
c = alloc(2 * MiB)
cudart.cudaFree(c)
s = vramtrace.stats()[0]
print("stats current", s["current_bytes"], "peak", s["peak_bytes"], "allocs", s["allocation_count"])
print("scope peak", vramtrace.scope_stats()[0]["peak_bytes"])
print("dumped", vramtrace.dump(sys.argv[2]))
