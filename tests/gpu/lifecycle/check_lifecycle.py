#!/usr/bin/env python3
"""Checks a vramtrace snapshot of tests/e2e/programs/standin_prog_lifecycle.cpp run on a real GPU
against the program's own oracle lines (the same checks as tests/e2e/test_context_lifecycle.cpp):
  expect-live      the exit snapshot's live set (kinds that are address space excluded)
  expect-teardown  the snapshot's teardowns (api, cause, device, ended count and bytes)
  checkpoint       a vramtrace_dump the program took: vmm physical / mapped / reserved bytes, or the
                   device's graph memory as cudaDeviceGetGraphMemAttribute said
usage: check_lifecycle.py SCENARIO STDOUT SNAPSHOT DIR [--static-cudart]
Prints PASS/FAIL lines; exit status 1 on any FAIL."""
import json
import os
import sys

STATIC = {"cudaMalloc": "cuMemAlloc_v2", "cudaMallocHost": "cuMemAllocHost_v2", "cudaMallocAsync": "cuMemAllocAsync"}
# NVIDIA's cudart (driver 580) reaches cudaDeviceReset's reset through the pointer cuGetProcAddress
# gives for "cuDevicePrimaryCtxReset", the driver's exported legacy name of the same function.
SAME_CALL = {"cuDevicePrimaryCtxReset": "cuDevicePrimaryCtxReset_v2"}


def main():
    scenario, out_path, snap_path, run_dir = sys.argv[1:5]
    static = "--static-cudart" in sys.argv
    out = open(out_path).read().splitlines()
    snap = json.load(open(snap_path))
    ok = True

    def report(good, what):
        nonlocal ok
        ok &= good
        print("%s %s: %s" % ("PASS" if good else "FAIL", scenario, what))

    def frames_of(s):
        return s["frames"]

    stacks = {st["id"]: st for st in snap["stacks"]}

    def site(a):
        st = stacks.get(a["stack"])
        if not st or st["call_site"] < 0:
            return ("", "", 0)
        f = frames_of(snap)[st["frames"][st["call_site"]]]
        return (f["function"].split("(")[0].split("::")[-1], os.path.basename(f["file"]), f["line"])

    live = sorted((a["size"], a["api"], a["device"]) + site(a) for a in snap["allocations"]
                  if a["kind"] not in ("vmm_mapping", "va_reservation"))
    expected = []
    for l in out:
        if l.startswith("expect-live "):
            b, api, dev, fn, fl = l.split()[1:6]
            file, line = fl.rsplit(":", 1)
            expected.append((int(b), STATIC.get(api, api) if static else api, int(dev), fn, file, int(line)))
    expected.sort()
    report(live == expected, "live set at exit %s == expected %s" % (live, expected))
    want_td = [l.split()[1:] for l in out if l.startswith("expect-teardown ")]
    got_td = [[SAME_CALL.get(t["api"], t["api"]), t["cause"], str(t["device"]), str(t["ended_count"]), str(t["ended_bytes"]),
               str(t["ended_host_bytes"])]
              for t in snap.get("teardowns", [])]
    report(got_td == want_td, "teardowns %s == expected %s" % (got_td, want_td))
    for l in out:
        if not l.startswith("checkpoint "):
            continue
        name, file = l.split()[1:3]
        figures = dict((kv.split("=")[0], int(kv.split("=")[1])) for kv in l.split()[3:])
        cp = json.load(open(os.path.join(run_dir, file)))
        kinds = {}
        for a in cp["allocations"]:
            kinds[a["kind"]] = kinds.get(a["kind"], 0) + a["size"]
        dev0 = [d for d in cp["devices"] if d["device"] == 0]
        dev0 = dev0[0] if dev0 else {}
        if "physical" in figures:
            got = (kinds.get("vmm_physical", 0), kinds.get("vmm_mapping", 0), kinds.get("va_reservation", 0),
                   dev0.get("current_bytes", 0))
            want = (figures["physical"], figures["mapped"], figures["reserved"], figures["physical"])
            report(got == want, "checkpoint %s: physical, mapped, reserved, device current %s == %s" % (name, got, want))
        if "graph_reserved" in figures:
            got = (dev0.get("graph_reserved_bytes"), dev0.get("graph_used_bytes"))
            want = (figures["graph_reserved"], figures["graph_used"])
            report(got == want, "checkpoint %s: graph memory (reserved, used) %s == the driver's %s" % (name, got, want))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
