#!/usr/bin/env python3
"""Prints the result tables (markdown) of bench/run_cpu.sh from the files it left in OUT_DIR.

Usage: bench/report.py OUT_DIR
Single-thread times are CPU time per iteration, the fastest of the repetitions (the machine is
shared: wall time also counts waiting for a core, and slower repetitions are other people's builds);
thread scaling uses the median throughput over wall time. An iteration is one alloc+free pair, one
capture, or one table insert+erase.
"""
import glob
import json
import os
import re
import sys


def load(path):
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return []
    start = text.find("{")
    if start < 0:
        return []
    return json.JSONDecoder().raw_decode(text[start:])[0].get("benchmarks", [])


def aggregate(path, which="median"):
    """run_name -> that aggregate over the repetitions (or the only run when there were none)."""
    out = {}
    for b in load(path):
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == which:
                out[b["run_name"]] = b
        else:
            out.setdefault(b["run_name"], b)
    return out


def medians(path):
    return aggregate(path, "median")


def minima(path):
    """The fastest repetition where the benchmark reports a "min" statistic, else the median."""
    out = medians(path)
    out.update(aggregate(path, "min"))
    return out


def fastest(out, pattern, name):
    """The lowest CPU time (ns) of benchmark `name` over the files matching `pattern` (rounds)."""
    vals = [ns(minima(p).get(name)) for p in sorted(glob.glob(os.path.join(out, pattern)))]
    vals = [v for v in vals if v is not None]
    return min(vals) if vals else None


def ns(b, key="cpu_time"):
    if b is None:
        return None
    scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[b.get("time_unit", "ns")]
    return b[key] * scale


def fmt(v, digits=0):
    return "-" if v is None else f"{v:,.{digits}f}"


def main():
    out = sys.argv[1]
    print("### Machine\n")
    with open(os.path.join(out, "machine.txt")) as f:
        for line in f:
            print("    " + line.rstrip())
    print()

    print("### Stack capture alone (ns per capture, CPU time, fastest repetition)\n")
    cap = {fp: minima(os.path.join(out, f"capture_{fp}.json")) for fp in ("fp", "nofp")}
    print("| frames of recursion / limit | frames captured | cached, -fno-omit-frame-pointer | cached, -fomit-frame-pointer | libunwind walk, fp | libunwind walk, no fp |")
    print("| --- | --- | --- | --- | --- | --- |")
    for frames, limit in ((0, 32), (16, 16), (32, 32), (64, 64)):
        key = f"/frames:{frames}/limit:{limit}"
        c = [cap[fp].get("capture/cached" + key) for fp in ("fp", "nofp")]
        u = [cap[fp].get("capture/libunwind" + key) for fp in ("fp", "nofp")]
        got = c[0]["frames_captured"] if c[0] and "frames_captured" in c[0] else "-"
        print(f"| {frames} / {limit} | {fmt(got) if got != '-' else got} | {fmt(ns(c[0]))} | {fmt(ns(c[1]))} | {fmt(ns(u[0]))} | {fmt(ns(u[1]))} |")
    mixed = [cap[fp].get("capture/cached/alternating_paths/frames:32/limit:32") for fp in ("fp", "nofp")]
    rec = [cap[fp].get("capture/recursion_only/alternating_paths/frames:32/limit:32") for fp in ("fp", "nofp")]
    if any(mixed):
        cells = []
        for m, r0 in zip(mixed, rec):
            cells.append("-" if m is None or r0 is None else fmt(ns(m) - ns(r0)))
        print(f"\nFour call paths in turn (the per-thread memo never matches; recursion time subtracted), "
              f"32 frames: {cells[0]} ns with frame pointers, {cells[1]} ns without.")
    print()

    for api, name in (("BM_MallocFreeAsync", "cudaMallocAsync + cudaFreeAsync"), ("BM_MallocFree", "cudaMalloc + cudaFree")):
        print(f"### Hook path: {name} pair on the stand-in runtime (ns per pair, CPU time, fastest repetition of all rounds)\n")
        print("| VRAMTRACE_STACK_DEPTH = frames of recursion | build | untraced | traced | overhead |")
        print("| --- | --- | --- | --- | --- |")
        for d in (0, 16, 32, 64):
            for fp in ("fp", "nofp"):
                p = fastest(out, f"hook_{fp}_plain_{d}_r*.json", f"{api}/frames:{d}/bytes:4096")
                t = fastest(out, f"hook_{fp}_traced_{d}_r*.json", f"{api}/frames:{d}/bytes:4096")
                over = t - p if p is not None and t is not None else None
                label = "frame pointers" if fp == "fp" else "-fomit-frame-pointer"
                print(f"| {d} | {label} | {fmt(p)} | {fmt(t)} | {fmt(over)} |")
        print()

    tr = medians(os.path.join(out, "tracking.json"))
    print("### Tracking core, threads (Mops/s = million alloc+free pairs per second, all threads; median, wall time)\n")
    print("| threads | LiveTable, 1,024 live/thread | speed-up | mutex map, 1,024 live/thread | speed-up | "
          "LiveTable, 65,536 live/thread | speed-up | mutex map, 65,536 live/thread | speed-up | "
          "hook bookkeeping (depth 32, 1,024 live) | StackDepot intern hit (depth 32) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    rows = {}
    for name, b in tr.items():
        m = re.match(r"(\w+)/.*?(?:live:(\d+)/)?real_time/threads:(\d+)$", name)
        if m:
            key = m.group(1) + ("/" + m.group(2) if m.group(2) and m.group(1) != "HookBookkeeping" else "")
            rows.setdefault(int(m.group(3)), {})[key] = b
    base = rows.get(1, {})

    def rate(r, k):
        b = r.get(k)
        return None if b is None else b.get("items_per_second", 0) / 1e6

    def speed(r, k):
        b0, b = base.get(k), r.get(k)
        if b0 is None or b is None or not b0.get("items_per_second"):
            return None
        return b["items_per_second"] / b0["items_per_second"]

    for t in sorted(rows):
        r = rows[t]
        cells = []
        for k in ("LiveTable/1024", "MutexMap/1024", "LiveTable/65536", "MutexMap/65536"):
            cells += [fmt(rate(r, k), 2), fmt(speed(r, k), 2) + "x"]
        cells += [fmt(rate(r, "HookBookkeeping"), 2), fmt(rate(r, "StackDepot"), 2)]
        print(f"| {t} | " + " | ".join(cells) + " |")
    print()
    print("Single thread, CPU time per insert+erase (fastest repetition): " + ", ".join(
        f"{k.replace('/', ' ')} live {fmt(ns(minima(os.path.join(out, 'tracking.json')).get(n)))} ns"
        for k, n in (("LiveTable/1024", "LiveTable/insert+erase/live:1024/real_time/threads:1"),
                     ("mutex map/1024", "MutexMap/insert+erase/live:1024/real_time/threads:1"),
                     ("LiveTable/65536", "LiveTable/insert+erase/live:65536/real_time/threads:1"),
                     ("mutex map/65536", "MutexMap/insert+erase/live:65536/real_time/threads:1"),
                     ("StackDepot intern hit/depth 32", "StackDepot/intern_hit/depth:32/real_time/threads:1"))) + ".\n")
    tmin = minima(os.path.join(out, "tracking.json"))
    hot = tmin.get("HookBookkeeping/depth:32/live:1")
    cold = base.get("HookBookkeeping")
    if hot or cold:
        print("Hook bookkeeping without unwinding (depot intern of a known depth-32 stack, clock, insert, "
              "erase, counters), 1 thread: "
              f"{fmt(ns(hot))} ns per alloc+free with one live allocation (CPU time, fastest repetition); "
              f"{fmt(ns(cold, 'real_time'))} ns with 1,024 live (wall time, median).\n")

    print("### Tracker memory\n")
    print("| what | count | mapped MiB | bytes each |")
    print("| --- | --- | --- | --- |")
    for name, b in sorted(tr.items()):
        if name.startswith("Memory/per_live_allocation"):
            print(f"| live allocations (LiveTable::mapped_bytes) | {fmt(b['live'])} | {fmt(b['mapped_MiB'], 1)} | {fmt(b['bytes_per_live'], 1)} |")
    for name, b in sorted(tr.items()):
        if name.startswith("Memory/per_unique_stack"):
            print(f"| unique stacks of depth {int(b['depth'])} (StackDepot::mapped_bytes) | {fmt(b['stacks'])} | "
                  f"{fmt(b['mapped_MiB'], 1)} | {fmt(b['bytes_per_stack'], 1)} ({fmt(b['bytes_per_stack_above_empty'], 1)} above the empty depot) |")
    print()

    print("### Dump, summary, symbolization\n")
    for fname in ("dump.txt", "symbolize.txt"):
        try:
            with open(os.path.join(out, fname)) as f:
                for line in f:
                    print("    " + line.rstrip())
        except OSError:
            pass


if __name__ == "__main__":
    main()
