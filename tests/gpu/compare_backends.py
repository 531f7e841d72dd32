#!/usr/bin/env python3
"""Compares two snapshots of the same program, one recorded by the preload hooks and one by the
CUPTI backend (docs/cupti.md): every allocation event (size, device, kind, call site: the function
of the first frame outside vramtrace, the runtime and the driver) in order, the allocations live at
exit, and how many addresses are the same in both runs. The `api` field is expected to differ (CUPTI sees the driver call a
runtime function makes) and is only listed.
usage: compare_backends.py NAME PRELOAD.json CUPTI.json   (PASS/FAIL/INFO lines; exit 1 on FAIL)"""
import collections
import json
import sys


def load(path):
    snap = json.load(open(path))
    frames, stacks = snap.get("frames", []), {s["id"]: s for s in snap.get("stacks", [])}

    def site(stack_id):
        s = stacks.get(stack_id)
        if not s or s.get("call_site", -1) < 0:
            return "?"
        f = frames[s["frames"][s["call_site"]]]
        return f.get("function") or f.get("module_offset", "?")

    allocs = [(e["address"], e["size"], e["device"], e["kind"], site(e.get("stack", 0)), e["api"])
              for e in snap.get("events", []) if e["type"] == "alloc"]
    live = [(a["address"], a["size"], a["device"], a["kind"], site(a.get("stack", 0)), a["api"])
            for a in snap.get("allocations", [])]
    return snap, allocs, live


def main():
    name, pre_path, cup_path = sys.argv[1:4]
    _, pre, pre_live = load(pre_path)
    _, cup, cup_live = load(cup_path)
    ok = True

    def check(cond, what):
        nonlocal ok
        print("%s %s: %s" % ("PASS" if cond else "FAIL", name, what))
        ok &= cond

    # Two runs of one program: device addresses repeat only as long as nothing else reserves device
    # address space first, and libcupti does (its own buffers), so an address may move; array
    # handles are host heap pointers. So allocations are matched in order on (size, device, kind,
    # call site), and addresses are compared apart (INFO: how many moved; docs/cupti.md).
    key = lambda t: t[1:5]
    check([key(t) for t in pre] == [key(t) for t in cup],
          "allocation events (size,device,kind,call site) identical, in order: preload %d, cupti %d" % (len(pre), len(cup)))
    check(sorted(map(key, pre_live)) == sorted(map(key, cup_live)),
          "live at exit identical: preload %d (%d B), cupti %d (%d B)" % (
              len(pre_live), sum(t[1] for t in pre_live), len(cup_live), sum(t[1] for t in cup_live)))
    if [key(t) for t in pre] != [key(t) for t in cup]:
        a = collections.Counter(map(key, pre))
        b = collections.Counter(map(key, cup))
        for t in list((a - b).elements())[:10]:
            print("   only preload:", t)
        for t in list((b - a).elements())[:10]:
            print("   only cupti:  ", t)
    pairs = list(zip(pre, cup))
    moved = collections.Counter(p[3] for p, c in pairs if p[0] != c[0])
    print("INFO %s: same address in both runs: %d of %d; moved by kind: %s" % (
        name, sum(1 for p, c in pairs if p[0] == c[0]), len(pairs), dict(moved) or "none"))
    apis = collections.Counter((p[5], c[5]) for p, c in zip(pre, cup))
    print("INFO %s: api preload -> cupti: %s" % (name, ", ".join("%s->%s x%d" % (p, c, n) for (p, c), n in sorted(apis.items()))))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
