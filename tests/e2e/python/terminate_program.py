# A Python program on the stand-in CUDA runtime that waits to be interrupted, for
# tests/e2e/termination_test.sh: python3 terminate_program.py LIBCUDART READY_FILE
# Holds 4 MiB from the line marked "# @hold", prints its expect-live line, writes its pid to
# READY_FILE and sleeps until a signal (at most 30 s). Ctrl-C gives Python's KeyboardInterrupt.
import ctypes
import os
import sys
import time

CUDART = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)
CUDART.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]


def hold(size):
    p = ctypes.c_void_p()
    if CUDART.cudaMalloc(ctypes.byref(p), size) != 0:  # @hold
        sys.exit("cudaMalloc failed")
    return p


kept = hold(4 << 20)
print("expect-live %d cudaMalloc 0 hold terminate_program.py" % (4 << 20), flush=True)
with open(sys.argv[2] + ".tmp", "w") as f:
    f.write("%d\n" % os.getpid())
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
time.sleep(30)
