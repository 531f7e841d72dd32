"""ctypes bindings of the exported C API (include/vramtrace/vramtrace.h) and the bundled files.

The functions are looked up in the process (RTLD_DEFAULT, like the header's inline wrappers): the
library is there only when the process runs under it (LD_PRELOAD, `vramtrace run`), never because
this module was imported, since loading it late would miss every earlier allocation.
"""
import ctypes
import os
import sys
import warnings

HOST_DEVICE = -1
OK, ERROR_NOT_LOADED, ERROR_IO, ERROR_INVALID, ERROR_DISABLED = 0, -1, -2, -3, -4
_ERRORS = {ERROR_NOT_LOADED: "not loaded", ERROR_IO: "the snapshot could not be written",
           ERROR_INVALID: "invalid argument", ERROR_DISABLED: "tracking is disabled"}

_HERE = os.path.dirname(os.path.abspath(__file__))


class DeviceStats(ctypes.Structure):
    _fields_ = [("device", ctypes.c_int32), ("reserved_", ctypes.c_uint32),
                ("current_bytes", ctypes.c_uint64), ("peak_bytes", ctypes.c_uint64),
                ("allocation_count", ctypes.c_uint64), ("free_count", ctypes.c_uint64),
                ("total_allocated_bytes", ctypes.c_uint64), ("total_freed_bytes", ctypes.c_uint64)]


class ScopePeak(ctypes.Structure):
    _fields_ = [("device", ctypes.c_int32), ("reserved_", ctypes.c_uint32),
                ("current_bytes", ctypes.c_uint64), ("peak_bytes", ctypes.c_uint64)]


def cli_path():
    """The bundled CLI (bin/vramtrace beside lib/libvramtrace.so, where it looks for it)."""
    return os.path.join(_HERE, "bin", "vramtrace")


def library_path():
    return os.path.join(_HERE, "lib", "libvramtrace.so")


def _lookup(name):
    try:
        return getattr(ctypes.CDLL(None), name)
    except AttributeError:
        return None


_warned = set()


def warn_once(what, message):
    if what in _warned:
        return
    _warned.add(what)
    warnings.warn("vramtrace: " + message, RuntimeWarning, stacklevel=3)


def function(name, restype, argtypes):
    fn = _lookup(name)
    if fn is not None:
        fn.restype = restype
        fn.argtypes = argtypes
    return fn


def read_array(name, struct):
    """Calls an exported `int f(struct *out, int capacity)`; None when the library is absent."""
    fn = function(name, ctypes.c_int, [ctypes.POINTER(struct), ctypes.c_int])
    if fn is None:
        return None
    capacity = 8
    while True:
        out = (struct * capacity)()
        n = fn(out, capacity)
        if n < 0:
            raise RuntimeError("vramtrace: %s: %s" % (name, _ERRORS.get(n, n)))
        if n <= capacity:
            return [out[i] for i in range(n)]
        capacity = n


def nvtx_bridge():
    """The bundled NVTX bridge (nvtx_bridge.c), or None when it cannot be loaded."""
    path = os.path.join(_HERE, "lib", "libvramtrace_nvtx.so")
    try:
        lib = ctypes.CDLL(path)
    except OSError:
        return None
    lib.vramtrace_py_range_push.argtypes = [ctypes.c_char_p]
    lib.vramtrace_py_range_push.restype = ctypes.c_int
    lib.vramtrace_py_range_pop.argtypes = []
    lib.vramtrace_py_range_pop.restype = ctypes.c_int
    return lib


def error_text(rc):
    return _ERRORS.get(rc, str(rc))


def stderr(message):
    sys.stderr.write("vramtrace: %s\n" % message)
