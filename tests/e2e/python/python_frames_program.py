# Allocates through a small C extension (python_alloc_ext.c) on the stand-in CUDA runtime, from
# known lines of this file, for tests/e2e/test_python_frames.cpp. Lines that matter carry a
# "# @name" marker; the test finds them in this file, never from vramtrace's output.
import ctypes
import sys
import threading

EXT = sys.argv[1]
# RTLD_GLOBAL: vramtrace finds the real cudaMalloc with dlsym(RTLD_NEXT), which does not see a
# libcudart that only a RTLD_LOCAL library pulled in (ctypes' default mode).
WITH_GIL = ctypes.PyDLL(EXT, mode=ctypes.RTLD_GLOBAL)    # calls keep the GIL
WITHOUT_GIL = ctypes.CDLL(EXT, mode=ctypes.RTLD_GLOBAL)  # calls release the GIL
for lib in (WITH_GIL, WITHOUT_GIL):
    lib.vt_py_alloc.argtypes = [ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p)]
    lib.vt_py_free.argtypes = [ctypes.c_void_p]
    lib.vt_py_alloc_native_thread.argtypes = [ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p)]
    lib.vt_py_alloc_native_series.argtypes = [ctypes.c_size_t, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p)]

MiB = 1 << 20
kept = []


def allocate(lib, size):
    p = ctypes.c_void_p()
    rc = lib.vt_py_alloc(size, ctypes.byref(p))  # @allocate
    if rc != 0:
        sys.exit("allocation failed: %d" % rc)
    return p


class Model:
    def forward(self, size):
        return allocate(WITH_GIL, size)  # @forward


def nested(depth, size):
    if depth == 0:
        return allocate(WITH_GIL, size)  # @nested-leaf
    return nested(depth - 1, size)  # @nested-call


def without_gil():
    # The frames of this thread outside this function, as the interpreter itself reports them,
    # for the test to compare with (threading's own lines vary between Python versions).
    f = sys._getframe(1)
    while f is not None:
        code = f.f_code
        print("outer", getattr(code, "co_qualname", code.co_name), code.co_filename, f.f_lineno)
        f = f.f_back
    kept.append(allocate(WITHOUT_GIL, 2 * MiB))  # @thread


def café(size):
    # A Latin-1 name: the struct reader converts the str's one-byte text to UTF-8.
    return allocate(WITHOUT_GIL, size)  # @latin1


def native_thread(size):
    # The extension allocates from a pthread of its own, which never ran Python.
    p = ctypes.c_void_p()
    if WITHOUT_GIL.vt_py_alloc_native_thread(size, ctypes.byref(p)) != 0:  # @native-thread
        sys.exit("allocation failed")
    return p


def take_turns(rounds):
    # Two lines that reach the extension through the same native path, taking turns: their stacks
    # differ only in this frame's line. The stacks of the later rounds come from the lane's memo of
    # Python stacks (lib/python/python_stack_memo.h).
    out = []
    for i in range(rounds):
        out.append(allocate(WITH_GIL, 16 * MiB + 4096 * i))  # @turn-a
        out.append(allocate(WITH_GIL, 32 * MiB + 4096 * i))  # @turn-b
    return out


def main():
    kept.append(Model().forward(8 * MiB))  # @main-forward
    kept.append(nested(2, 4 * MiB))  # @main-nested
    kept.append(allocate(WITHOUT_GIL, 3 * MiB))  # @main-released
    kept.append(native_thread(5 * MiB))  # @main-native
    kept.append(café(6 * MiB))  # @main-latin1
    worker = threading.Thread(target=without_gil)
    worker.start()
    worker.join()
    freed = allocate(WITH_GIL, 1 * MiB)  # @freed
    WITH_GIL.vt_py_free(freed)
    turns = take_turns(5)  # @main-turns
    print("turns", len(turns))
    series = (ctypes.c_void_p * 5)()
    if WITHOUT_GIL.vt_py_alloc_native_series(48 * MiB, 5, series) != 0:
        sys.exit("allocation failed")
    print("allocated", len(kept))


main()  # @module
