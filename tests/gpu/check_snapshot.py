#!/usr/bin/env python3
"""Compares a vramtrace snapshot with a program's own "expect-live" lines (the same rule as the
stand-in end-to-end tests in tests/e2e/harness.cpp): every line must match exactly one live
allocation by size, device, API, and call site function + file:line, and nothing else may be live.

usage: check_snapshot.py SNAPSHOT PROGRAM_STDOUT [--static-cudart]
Prints PASS or FAIL with both lists; exit status 0 on PASS."""
import json
import os
import sys

DRIVER_APIS = {
    "cudaMalloc": {"cuMemAlloc_v2"},
    "cudaMallocAsync": {"cuMemAllocAsync", "cuMemAllocAsync_ptsz"},
    "cudaMallocManaged": {"cuMemAllocManaged"},
    "cudaMallocHost": {"cuMemAllocHost_v2", "cuMemHostAlloc"},
    "cudaHostAlloc": {"cuMemAllocHost_v2", "cuMemHostAlloc"},
    "cudaMallocPitch": {"cuMemAllocPitch_v2"},
    "cudaMallocArray": {"cuArrayCreate_v2", "cuArray3DCreate_v2"},
    "cudaMalloc3DArray": {"cuArray3DCreate_v2"},
    "cudaMallocMipmappedArray": {"cuMipmappedArrayCreate"},
    "cudaMallocFromPoolAsync": {"cuMemAllocFromPoolAsync", "cuMemAllocFromPoolAsync_ptsz"},
    "cudaHostRegister": {"cuMemHostRegister_v2"},
}


def expectations(text):
    out = []
    for line in text.splitlines():
        w = line.split()
        if not w or w[0] != "expect-live":
            continue
        f, l = w[5].rsplit(":", 1)
        out.append(dict(bytes=int(w[1]), api=w[2], device=int(w[3]), function=w[4], file=f, line=int(l)))
    return out


def live(snapshot):
    stacks = {s["id"]: s for s in snapshot["stacks"]}
    frames = snapshot["frames"]
    out = []
    for a in snapshot["allocations"]:
        if a["kind"] in ("vmm_mapping", "graph_pool"):  # listed, not counted (checked apart)
            continue
        entry = dict(bytes=a["size"], api=a["api"], device=a["device"], function="", file="", line=0)
        s = stacks.get(a["stack"])
        if s and s["call_site"] >= 0:
            fr = frames[s["frames"][s["call_site"]]]
            entry.update(function=fr["function"].split("(")[0], file=os.path.basename(fr["file"]), line=fr["line"])
        out.append(entry)
    return out


def main():
    snapshot = json.load(open(sys.argv[1]))
    expected = expectations(open(sys.argv[2]).read())
    static = "--static-cudart" in sys.argv
    tracked = live(snapshot)
    unmatched = list(tracked)
    ok = len(expected) == len(tracked) and len(expected) > 0
    for e in expected:
        apis = DRIVER_APIS.get(e["api"], {e["api"]}) if static else {e["api"]}
        hit = next((t for t in unmatched if t["bytes"] == e["bytes"] and t["device"] == e["device"]
                    and t["api"] in apis and t["function"] == e["function"] and t["file"] == e["file"]
                    and t["line"] == e["line"]), None)
        if hit is None:
            ok = False
        else:
            unmatched.remove(hit)
    # Graph memory (graph memory nodes, allocations made while a stream is captured): listed with
    # kind graph_pool and not counted; the program prints "expect-graph <bytes>" for each.
    want_graph = sorted(int(l.split()[1]) for l in open(sys.argv[2]).read().splitlines() if l.startswith("expect-graph "))
    got_graph = sorted(a["size"] for a in snapshot["allocations"] if a["kind"] == "graph_pool")
    if want_graph or got_graph:
        ok = ok and want_graph == got_graph
        print("  graph memory: expected %s, listed %s" % (want_graph, got_graph))
    print("PASS" if ok else "FAIL", sys.argv[1])
    print("  expected:")
    for e in expected:
        print("   ", e["bytes"], e["api"], "dev", e["device"], e["function"], "%s:%d" % (e["file"], e["line"]))
    print("  tracked:")
    for t in tracked:
        print("   ", t["bytes"], t["api"], "dev", t["device"], t["function"], "%s:%d" % (t["file"], t["line"]))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
