"""Helpers shared by the framework checks: read vramtrace's counters through the C API (ctypes) and
split a snapshot taken with vramtrace_dump() by who asked for the memory (from the stacks)."""
import ctypes
import json
import os
import sys
import tempfile

PROCESS = ctypes.CDLL(None)
LOADED = hasattr(PROCESS, "vramtrace_stats")

COUNTED_KINDS = {"device", "managed", "vmm_physical"}


def dump():
    """Writes a snapshot now and returns it parsed."""
    path = os.path.join(tempfile.mkdtemp(), "checkpoint.json")
    rc = PROCESS.vramtrace_dump(path.encode())
    if rc != 0:
        raise RuntimeError("vramtrace_dump returned %d" % rc)
    with open(path) as f:
        return json.load(f)


def device_bytes(snap, device, owner=None, kinds=COUNTED_KINDS):
    """Live bytes on `device` whose stack matches owner(frames) (all when owner is None)."""
    modules = [os.path.basename(m["path"]) for m in snap["modules"]]
    frames = snap["frames"]
    stacks = {}
    for s in snap["stacks"]:
        stacks[s["id"]] = [(modules[frames[i]["module"]] if frames[i]["module"] >= 0 else "",
                            frames[i]["function"]) for i in s["frames"]]
    total = 0
    for a in snap["allocations"]:
        if a["device"] != device or a["kind"] not in kinds:
            continue
        if owner is None or owner(stacks.get(a["stack"], [])):
            total += a["size"]
    return total


def apis(snap):
    return sorted({a["api"] for a in snap["allocations"]})


def in_function(text):
    return lambda frames: any(text in fn for _, fn in frames)


def in_module(prefix):
    return lambda frames: any(m.startswith(prefix) for m, _ in frames)


def report(ok, what, oracle, tracked, extra=""):
    print("%s %s: oracle=%d tracked=%d%s" % ("PASS" if ok else "FAIL", what, oracle, tracked,
                                              (" " + extra) if extra else ""), file=sys.stderr)
    return ok
