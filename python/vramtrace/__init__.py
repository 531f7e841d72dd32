"""vramtrace from Python: the exported C API of libvramtrace.so, for a process that runs under it.

Start the process under the library (`vramtrace run script.py`, `python -m vramtrace run
script.py`, or LD_PRELOAD); then:

    vramtrace.loaded()               True when libvramtrace.so is in this process
    vramtrace.mark("epoch 3")        a labelled point in the snapshot's event history
    vramtrace.dump("snap.json")      write a snapshot now (None: VRAMTRACE_OUTPUT); returns the path
    vramtrace.stats()                {device ordinal: {"current_bytes": ..., "peak_bytes": ..., ...}}
    with vramtrace.phase("forward"): an NVTX range (push/pop) that labels the allocations in it
    vramtrace.scope_reset()          start a per-interval peak on every device
    vramtrace.scope_stats()          {device: {"current_bytes": ..., "peak_bytes": ...}} since then

Without the library each call warns once (RuntimeWarning) and does nothing for vramtrace: mark
and scope_reset return None, dump returns None, stats and scope_stats return {}, phase still
makes its NVTX range for other tools. Device -1 is pinned host memory.
Sizes are bytes.
"""
import contextlib
import ctypes

from . import _native
from ._version import __version__

HOST_DEVICE = _native.HOST_DEVICE

__all__ = ["loaded", "mark", "dump", "stats", "phase", "scope_reset", "scope_stats", "HOST_DEVICE",
           "__version__", "load_ipython_extension"]


def loaded():
    """True when libvramtrace.so is loaded in this process (its vramtrace_dump is visible)."""
    return _native._lookup("vramtrace_dump") is not None


def _absent(what):
    _native.warn_once(what, "libvramtrace.so is not loaded in this process, so %s() does nothing "
                      "(run it under 'vramtrace run' or 'python -m vramtrace run')" % what)


def mark(label):
    """Records a mark (at most 63 bytes of label kept) in the snapshot's event history."""
    fn = _native.function("vramtrace_mark", ctypes.c_int, [ctypes.c_char_p])
    if fn is None:
        return _absent("mark")
    rc = fn(str(label).encode("utf-8"))
    if rc != _native.OK:
        raise RuntimeError("vramtrace.mark: " + _native.error_text(rc))


def dump(path=None):
    """Writes a snapshot to `path` (None: the configured VRAMTRACE_OUTPUT); returns `path`."""
    fn = _native.function("vramtrace_dump", ctypes.c_int, [ctypes.c_char_p])
    if fn is None:
        return _absent("dump")
    rc = fn(None if path is None else str(path).encode())
    if rc != _native.OK:
        raise RuntimeError("vramtrace.dump: " + _native.error_text(rc))
    return path


def _as_dicts(rows):
    out = {}
    for row in rows:
        out[row.device] = {name: getattr(row, name) for name, _ in row._fields_
                           if name not in ("device", "reserved_")}
    return out


def stats():
    """{device: {current_bytes, peak_bytes, allocation_count, free_count, total_allocated_bytes,
    total_freed_bytes}} for every device seen, as counted since the process started."""
    rows = _native.read_array("vramtrace_stats", _native.DeviceStats)
    if rows is None:
        _absent("stats")
        return {}
    return _as_dicts(rows)


def scope_reset():
    """Makes each device's scoped peak its current bytes (vramtrace_scope_reset)."""
    fn = _native.function("vramtrace_scope_reset", ctypes.c_int, [])
    if fn is None:
        return _absent("scope_reset")
    rc = fn()
    if rc != _native.OK:
        raise RuntimeError("vramtrace.scope_reset: " + _native.error_text(rc))


def scope_stats():
    """{device: {current_bytes, peak_bytes}}: the highest bytes live since scope_reset()."""
    rows = _native.read_array("vramtrace_scope_stats", _native.ScopePeak)
    if rows is None:
        _absent("scope_stats")
        return {}
    return _as_dicts(rows)


_bridge = None


@contextlib.contextmanager
def phase(name):
    """An NVTX range around the block (nvtxRangePushA / nvtxRangePop of the bundled bridge), so
    allocations in it carry `name` in the snapshot, and Nsight Systems shows the same range."""
    global _bridge
    if _bridge is None:
        _bridge = _native.nvtx_bridge() or False
    if not loaded():
        _native.warn_once("phase", "libvramtrace.so is not loaded in this process, so phase() labels "
                          "no allocation (its NVTX range still reaches other NVTX tools, such as "
                          "Nsight Systems)")
    if not _bridge:
        _native.warn_once("phase-bridge", "the NVTX bridge library could not be loaded; phase() "
                          "records nothing")
        yield
        return
    _bridge.vramtrace_py_range_push(str(name).encode("utf-8"))
    try:
        yield
    finally:
        _bridge.vramtrace_py_range_pop()


def load_ipython_extension(ipython):
    """%load_ext vramtrace: registers the %%vramtrace cell magic (vramtrace/ipython.py)."""
    from . import ipython as _ipython
    _ipython.register(ipython)
