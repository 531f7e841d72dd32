# Checks one snapshot for tests/gpu/run_python_frames.sh: the call site of the largest allocation
# live at device 0's peak (the site with the most bytes there; and the largest single allocation
# live at exit, when that is still the peak's) is the script line the script printed as
# "EXPECT file:line".
# Usage: check_call_site.py NAME SNAPSHOT STDOUT_FILE
import json
import os
import sys

name, snap_path, out_path = sys.argv[1:4]
expect = [l.split(" ", 1)[1].strip() for l in open(out_path) if l.startswith("EXPECT ")]
if not expect:
    sys.exit(print("FAIL %s: the script printed no EXPECT line" % name))
file, line = expect[0].rsplit(":", 1)
file, line = os.path.realpath(file), int(line)
s = json.load(open(snap_path))
stacks = {st["id"]: st for st in s["stacks"]}
frames = s["frames"]
print("INFO %s: python=%s" % (name, s["process"].get("python", "(none)")))


def describe(stack_id):
    st = stacks.get(stack_id)
    if st is None:
        return None, "(no stack)"
    py = [frames[i] for i in st["frames"] if frames[i].get("python")]
    if st["call_site"] < 0:
        return None, "(no call site)"
    f = frames[st["frames"][st["call_site"]]]
    text = "%s at %s:%s%s" % (f["function"], f["file"], f["line"], "" if py else " [no Python frames]")
    return f, text


def verdict(what, stack_id):
    f, text = describe(stack_id)
    ok = f is not None and f.get("python") and os.path.realpath(f["file"]) == file and f["line"] == line
    print("%s %s: %s: %s (want %s:%d)" % ("PASS" if ok else "FAIL", name, what, text, file, line))
    return ok


peak = [p for p in s.get("peaks", []) if p["device"] == 0]
ok = bool(peak and peak[0]["sites"])
if ok:
    ok = verdict("top site at the peak (%d bytes)" % peak[0]["sites"][0]["bytes"], peak[0]["sites"][0]["stack"])
else:
    print("FAIL %s: no peak composition for device 0" % name)
held = [a for a in s["allocations"] if a["device"] == 0 and a["kind"] not in ("vmm_mapping", "ipc_imported")]
# At exit: the largest allocation still live, when it is the one from the peak. PyTorch with
# expandable segments, cudaMallocAsync or no caching, and JAX, give the big buffer back while the
# interpreter shuts down (before vramtrace's exit report), so there it is gone: INFO, not a check.
top_bytes = peak[0]["sites"][0]["bytes"] if peak and peak[0]["sites"] else 0
if held:
    big = max(held, key=lambda a: a["size"])
    what = "largest allocation live at exit (%d bytes, %s)" % (big["size"], big["api"])
    if big["size"] >= top_bytes:
        ok = verdict(what, big["stack"]) and ok
    else:
        print("INFO %s: %s: %s; the peak's %d bytes were freed before exit" % (name, what, describe(big["stack"])[1], top_bytes))
no_py = sum(1 for st in s["stacks"] if not any(frames[i].get("python") for i in st["frames"]))
print("INFO %s: %d of %d stacks without Python frames" % (name, no_py, len(s["stacks"])))
sys.exit(0 if ok else 1)
