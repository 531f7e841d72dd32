# The struct reader on this machine's Python (tests/gpu/run_python_frames.sh): two driver allocations
# made through ctypes from one known line, first holding the GIL (ctypes.PyDLL; the first allocation
# with the GIL is where vramtrace cross-checks its struct reader against the interpreter's API, and a
# disagreement is a warning on stderr), then releasing it (ctypes.CDLL, as PyTorch's ops do). Prints
# "EXPECT file:line" for the line, from Python's own frame (never from vramtrace).
import ctypes
import inspect

import torch

torch.zeros(1, device="cuda")  # the primary context, current on this thread
with_gil = ctypes.PyDLL("libcuda.so.1")
without_gil = ctypes.CDLL("libcuda.so.1")
for lib in (with_gil, without_gil):
    lib.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
    lib.cuMemAlloc_v2.restype = ctypes.c_int


def alloc(lib, size):
    p = ctypes.c_uint64()
    line = inspect.currentframe().f_lineno + 1
    rc = lib.cuMemAlloc_v2(ctypes.byref(p), size)
    if rc != 0:
        raise SystemExit("cuMemAlloc_v2 failed: %d" % rc)
    return p, line


small, _ = alloc(with_gil, 64 << 20)
big, line = alloc(without_gil, 512 << 20)  # the largest allocation of the run, kept to the end
print("EXPECT %s:%d" % (__file__, line))
