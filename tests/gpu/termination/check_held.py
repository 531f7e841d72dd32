# Checks an exit snapshot written because of a terminating signal against what the program said
# it held:  check_held.py NAME SNAPSHOT PROGRAM_OUTPUT SIGNAL [SCRIPT]
# - process.reason is "exit" and process.signal is SIGNAL;
# - with SCRIPT (a Python program): per "held NAME BYTES" line, the live bytes whose innermost
#   Python frame is SCRIPT's line marked "# @NAME" equal BYTES;
# - without SCRIPT: the live allocations are exactly the "expect-live" lines (size, function,
#   file:line), and "extra N" allocations of 4096 bytes beyond them when the output says so.
# Prints PASS/FAIL lines; exits 1 on a failure.
import collections
import json
import os
import sys

name, snap_path, out_path, signal = sys.argv[1:5]
script = sys.argv[5] if len(sys.argv) > 5 else None
failures = 0


def check(ok, what):
    global failures
    print("%s %s: %s" % ("PASS" if ok else "FAIL", name, what))
    failures += 0 if ok else 1


snap = json.load(open(snap_path))
p = snap["process"]
check(p["reason"] == "exit" and p.get("signal") == signal,
      "reason %s, signal %s (expected exit, %s)" % (p["reason"], p.get("signal"), signal))
stacks = {s["id"]: s for s in snap["stacks"]}
frames = snap["frames"]
out = open(out_path).read().splitlines()
if script:
    lines = {}
    for number, text in enumerate(open(script).read().splitlines(), 1):
        if "# @" in text:
            lines[number] = text.split("# @", 1)[1].strip()
    held = collections.Counter()
    for a in snap["allocations"]:
        for f in stacks[a["stack"]]["frames"]:
            fr = frames[f]
            if fr.get("python") and os.path.basename(fr.get("file", "")) == os.path.basename(script):
                held[lines.get(fr.get("line"), "line %s" % fr.get("line"))] += a["size"]
                break
    for line in out:
        if line.startswith("held "):
            _, what, nbytes = line.split()
            check(held.get(what, 0) == int(nbytes),
                  "%s: %d bytes live from its line, the script held %s" % (what, held.get(what, 0), nbytes))
else:
    want = sorted(l for l in out if l.startswith("expect-live"))
    got = []
    small = 0
    for a in snap["allocations"]:
        st = stacks[a["stack"]]
        fr = frames[st["frames"][st["call_site"]]]
        function = fr.get("function", "").removesuffix("()")
        if a["size"] == 4096 and function != "hold_params" and function != "hold_cache":
            small += 1
            continue
        got.append("expect-live %d %s %d %s %s:%s" % (a["size"], a["api"], a["device"], function,
                                                      os.path.basename(fr.get("file", "")), fr.get("line")))
    check(sorted(got) == want, "live set %s, expected %s" % (sorted(got), want))
    extra = int(os.environ.get("STANDIN_TERMINATE_EXTRA", "0"))
    check(small == extra, "%d further 4 KiB allocations live, expected %d" % (small, extra))
sys.exit(1 if failures else 0)
