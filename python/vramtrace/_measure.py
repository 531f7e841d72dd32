"""One measured interval (a test, a notebook cell): mark, reset the scoped peak, run, read back.

Memory counts as the CUDA driver and runtime hand it out, which for PyTorch is its caching
allocator's segments (torch.cuda.memory_reserved), not tensor bytes: a tensor freed into the cache
stays allocated. So before reading what the interval left, when PyTorch has initialised CUDA, the
interval's streams are synchronised and torch.cuda.empty_cache() returns the unused cached
segments; what stays is memory that tensors still hold.
"""
import itertools
import os
import sys
import tempfile

import vramtrace

from . import _interval

_counter = itertools.count(1)


def _torch_release_cache():
    torch = sys.modules.get("torch")
    if torch is None:
        return
    try:
        if torch.cuda.is_initialized():
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
    except Exception:  # a broken CUDA state is the test's to report, not ours
        pass


class Result:
    def __init__(self):
        self.peaks = {}      # device -> scoped peak bytes during the interval
        self.sites = {}      # device -> [(bytes, count, call site)] at that peak
        self.held_before = {}  # device -> bytes of the peak held from before the interval
        self.left = {}       # device -> [(bytes, count, call site)] allocated and still live
        self.note = None     # why call sites are missing, when they are

    def peak(self):
        return max(self.peaks.values(), default=0)

    def left_bytes(self):
        return sum(b for rows in self.left.values() for b, _, _ in rows)

    def top_site(self):
        best = None
        for rows in self.sites.values():
            for row in rows:
                if best is None or row[0] > best[0]:
                    best = row
        return best[2] if best else "-"


class Interval:
    """with Interval("name") as m: ...; then m.result (None when the library is not loaded)."""

    def __init__(self, name, prefer_file=None):
        self.prefer_file = prefer_file
        self.label = ("%d:%s" % (next(_counter), name))[:63]
        self.result = None

    def __enter__(self):
        if vramtrace.loaded():
            vramtrace.mark(self.label)
            vramtrace.scope_reset()
        return self

    def __exit__(self, *exc):
        if vramtrace.loaded():
            self.result = self._read()
        return False

    def _read(self):
        _torch_release_cache()
        r = Result()
        r.peaks = {d: s["peak_bytes"] for d, s in vramtrace.scope_stats().items() if d >= 0}
        fd, path = tempfile.mkstemp(prefix="vramtrace-interval-", suffix=".json")
        os.close(fd)
        try:
            vramtrace.dump(path)
            snap = _interval.Snapshot(path, self.prefer_file)
        finally:
            os.unlink(path)
        start = snap.mark_time(self.label)
        if start is None:
            r.note = snap.history_note()
            return r
        for d, peak in r.peaks.items():
            r.sites[d] = snap.peak_sites(d, start)
            r.held_before[d] = max(0, peak - sum(b for b, _, _ in r.sites[d]))
        r.left = snap.left_live(start)
        return r


def describe_peak(result, device, limit=None):
    lines = []
    for b, c, site in result.sites.get(device, [])[:5]:
        lines.append("  %12s  %s  (%d allocation%s)" % (_interval.human(b), site, c, "" if c == 1 else "s"))
    held = result.held_before.get(device, 0)
    if held:
        lines.append("  %12s  held from before" % _interval.human(held))
    if result.note:
        lines.append("  (" + result.note + ")")
    return lines
