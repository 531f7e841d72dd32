#!/usr/bin/env python3
"""Opens a `vramtrace export --format pickle` file with PyTorch's own memory snapshot tools, the
way a user would: torch.cuda._memory_viz's trace_plot and segment_plot (the HTML pages of
pytorch.org/memory_viz), plus its text reports segsum and trace, which walk every segment, block
and trace entry. Also checks what the browser viewer relies on: protocol 2-4, blocks that tile
their segment in address order, one device_traces list per ordinal.

usage: check_memory_viz.py PICKLE [OUTDIR]
Writes OUTDIR/trace_plot.html and OUTDIR/segment_plot.html (default: beside PICKLE) and prints
PASS or FAIL lines; exit status 0 when all pass."""
import os
import sys
import traceback

# The restricted unpickler every test loads vramtrace's pickles with (globals refused).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli"))
from restricted_unpickle import load_restricted  # noqa: E402

failures = 0


def check(name, fn):
    global failures
    try:
        detail = fn()
        print(f"PASS {name}{': ' + detail if detail else ''}")
    except Exception:  # report every failure, then go on
        failures += 1
        print(f"FAIL {name}")
        traceback.print_exc(limit=3)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    path = sys.argv[1]
    outdir = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(os.path.abspath(path))
    os.makedirs(outdir, exist_ok=True)
    raw = open(path, "rb").read()
    state = {}

    def load():
        assert raw[0] == 0x80 and 2 <= raw[1] <= 4, f"pickle protocol {raw[1]} (the viewer reads 2 to 4)"
        state["data"] = load_restricted(raw)
        d = state["data"]
        return f"{len(d['segments'])} segments, {sum(len(t) for t in d['device_traces'])} trace entries"

    def structure():
        d = state["data"]
        for seg in d["segments"]:
            addr = seg["address"]
            for b in seg["blocks"]:
                assert b["address"] == addr, f"block at {b['address']:#x}, expected {addr:#x}"
                addr += b["size"]
            assert addr == seg["address"] + seg["total_size"], "blocks do not fill their segment"
        devices = {seg["device"] for seg in d["segments"]}
        assert all(0 <= dev < len(d["device_traces"]) for dev in devices), "a segment's device has no trace list"
        return ""

    check("load", load)
    if "data" not in state:
        return 1
    check("structure", structure)
    try:
        from torch.cuda import _memory_viz as mv
    except ImportError as e:
        print(f"FAIL import torch.cuda._memory_viz: {e}")
        return 1

    def plot(fn, name):
        def run():
            html = fn(state["data"])
            assert "snapshot.pickle" in html
            out = os.path.join(outdir, name)
            with open(out, "w") as f:
                f.write(html)
            return out
        return run

    check("trace_plot", plot(mv.trace_plot, "trace_plot.html"))
    check("segment_plot", plot(mv.segment_plot, "segment_plot.html"))
    check("segsum", lambda: mv.segsum(state["data"]).splitlines()[-7].strip())
    check("trace", lambda: f"{len(mv.trace(state['data']).splitlines())} lines")
    print("PASS" if failures == 0 else f"FAIL ({failures} checks failed)")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
