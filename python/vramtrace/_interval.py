"""What one interval (a test, a cell) did with device memory, from a snapshot and a start mark.

The scoped peak (vramtrace_scope_stats) gives the exact peak bytes; the snapshot's event history
(VRAMTRACE_EVENTS, the most recent events) gives who held them: replaying the allocations and frees
after the start mark finds the moment of the interval's peak and, at it, the live bytes of the
allocations made during the interval per call site; the rest of the peak is memory held from
before the interval. What the interval left is the snapshot's live allocations made after the mark.
"""
import json
import re

_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40, "k": 2**10, "m": 2**20, "g": 2**30}


def parse_size(text):
    """'512 MiB', '24 MB', '1.5GiB', '4096' -> bytes (MB = 10^6, MiB = 2^20); ValueError otherwise."""
    if isinstance(text, int):
        return text
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*", str(text))
    if not m or m.group(2).lower() not in _UNITS:
        raise ValueError("not a size: %r (examples: '512 MiB', '24 MB', '4096')" % (text,))
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def human(n):
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= size:
            return "%.1f %s" % (n / size, unit)
    return "%d B" % n


class Snapshot:
    def __init__(self, path, prefer_file=None):
        # prefer_file(file name) -> bool: a frame of such a file, the innermost one, names the call
        # site instead of the frame rules' choice (the IPython extension's cells, whose
        # "<ipython-input-N-...>" names the rules pass over as not being a program's file).
        self._prefer = prefer_file
        with open(path, encoding="utf-8") as f:
            self.doc = json.load(f)
        self._frames = self.doc.get("frames", [])
        self._stacks = {s["id"]: s for s in self.doc.get("stacks", [])}

    def call_site(self, stack_id):
        """'file:line (function)' of the frame the stack's call site names."""
        stack = self._stacks.get(stack_id)
        if stack is None:
            return "(no stack)"
        # call_site is a position in the stack's own frame list (0: the innermost)
        frames = stack.get("frames", [])
        position = stack.get("call_site", 0)
        index = frames[position] if 0 <= position < len(frames) else None
        if self._prefer is not None:
            index = next((i for i in frames if i < len(self._frames) and
                          self._prefer(self._frames[i].get("file", ""))), index)
        if index is None or index >= len(self._frames):
            return "(unknown frame)"
        frame = self._frames[index]
        function = frame.get("function") or frame.get("address", "?")
        if frame.get("file"):
            return "%s:%d (%s)" % (frame["file"], frame.get("line", 0), function)
        return function

    def mark_time(self, label):
        """CLOCK_MONOTONIC ns of the last mark with this label, or None when it is not kept."""
        found = None
        for e in self.doc.get("events", []):
            if e.get("type") == "mark" and e.get("label") == label:
                found = e["time_ns"]
        return found

    def peak_sites(self, device, start_ns):
        """[(bytes, count, call site)] of the allocations made after start_ns and live at the
        highest point of the replay on `device`, largest first."""
        live = {}
        by_stack = {}
        level = best = 0
        best_sites = {}
        for e in self.doc.get("events", []):
            if e.get("time_ns", 0) < start_ns or e.get("device") != device:
                continue
            size = e.get("size", 0)
            if e["type"] == "alloc":
                live[e["address"]] = (size, e.get("stack", 0))
                b, c = by_stack.get(e.get("stack", 0), (0, 0))
                by_stack[e.get("stack", 0)] = (b + size, c + 1)
                level += size
                if level > best:
                    best = level
                    best_sites = dict(by_stack)
            elif e["type"] == "free":
                level -= size
                held = live.pop(e["address"], None)
                if held is not None:
                    b, c = by_stack[held[1]]
                    by_stack[held[1]] = (b - held[0], c - 1)
        rows = [(b, c, self.call_site(s)) for s, (b, c) in best_sites.items() if b > 0]
        return sorted(rows, key=lambda r: -r[0])

    def left_live(self, start_ns):
        """{device: [(bytes, count, call site)]} of live device allocations made after start_ns."""
        out = {}
        for a in self.doc.get("allocations", []):
            if a.get("time_ns", 0) < start_ns or a.get("device", -1) < 0:
                continue
            per = out.setdefault(a["device"], {})
            b, c = per.get(a.get("stack", 0), (0, 0))
            per[a.get("stack", 0)] = (b + a["size"], c + 1)
        return {d: sorted(((b, c, self.call_site(s)) for s, (b, c) in per.items()), key=lambda r: -r[0])
                for d, per in out.items()}

    def history_note(self):
        h = self.doc.get("event_history", {})
        if h.get("capacity", 0) == 0:
            return "the event history is off (VRAMTRACE_EVENTS=0), so the call sites are unknown"
        return ("the event history no longer reaches back to the start (raise VRAMTRACE_EVENTS, now %d)"
                % h.get("capacity", 0))


def site_lines(rows, limit=5):
    lines = ["  %12s  %s  (%d allocation%s)" % (human(b), site, c, "" if c == 1 else "s")
             for b, c, site in rows[:limit]]
    if len(rows) > limit:
        lines.append("  %12s  in %d more call sites" % (human(sum(r[0] for r in rows[limit:])), len(rows) - limit))
    return lines
