#!/usr/bin/env python3
"""Markdown tables from bench/run's results.json (bench/README.md says which table is which).

Usage: bench/summarize.py RESULTS_JSON [--out FILE]
Single-thread times take the fastest round (a shared machine's slow rounds are other people's
work); throughput with threads and PyTorch steps take the median; every A/B table gives the median
with the spread (min-max) of the rounds, and calls a difference real only where the two spreads do
not overlap.
"""
import json
import re
import sys


def fmt(v, digits=0):
    return "-" if v is None else f"{v:,.{digits}f}"


class Results:
    def __init__(self, doc):
        self.doc = doc
        self.cases = doc.get("cases", {})
        self.libs = list(doc.get("variants", {}))

    def fig(self, case, variant, key, stat="min"):
        f = self.cases.get(case, {}).get("figures", {}).get(variant, {}).get(key)
        return None if f is None else f[stat]

    def keys(self, case, variant):
        return self.cases.get(case, {}).get("figures", {}).get(variant, {})


def machine(r):
    m = r.doc.get("machine", {})
    print("### Machine\n")
    print(f"    suite {r.doc['suite']}; commit {r.doc.get('commit', '?')}; build {m.get('build_type', '?')}"
          f" ({r.doc.get('build', '?')})")
    print(f"    cpu: {m.get('cpu', '?')}, {m.get('cores', '?')} cores; kernel {m.get('kernel', '?')}")
    if "gpu" in m:
        print(f"    gpu: {m['gpu']}")
    print(f"    load before {m.get('load_before', '?')}, after {m.get('load_after', '?')}; "
          f"rounds {r.doc.get('rounds')}")
    for name, v in r.doc.get("variants", {}).items():
        env = "".join(f", {k}={x}" for k, x in v.get("env", {}).items())
        print(f"    variant {name}: {v['lib']}{env}")
    for f in r.doc.get("failures", []):
        print(f"    FAILED {f['case']} [{f['variant']}] round {f['round']}: {f['why']} {f['stderr']}")
    print()


def clock(r):
    c = lambda k: r.fig("clock_cost", "untraced", k)
    if c("rdtsc_ns") is not None:
        print(f"Clock reads (bench/clock_cost.cpp, best of 5): rdtsc {fmt(c('rdtsc_ns'), 1)} ns, rdtscp "
              f"{fmt(c('rdtscp_ns'), 1)} ns, clock_gettime(CLOCK_MONOTONIC) {fmt(c('clock_gettime_ns'), 1)} ns.\n")


def capture(r):
    if "capture_fp" not in r.cases:
        return
    print("### Stack capture alone (ns per capture, CPU time, fastest repetition)\n")
    print("| frames of recursion / limit | frames captured | cached, frame pointers | cached, "
          "-fomit-frame-pointer | libunwind walk, fp | libunwind walk, no fp |")
    print("| --- | --- | --- | --- | --- | --- |")
    for frames, limit in ((0, 32), (16, 16), (32, 32), (64, 64)):
        k = f"/frames:{frames}/limit:{limit}"
        got = r.fig("capture_fp", "untraced", "capture/cached" + k + "|frames_captured", "median")
        cells = [fmt(r.fig(f"capture_{fp}", "untraced", f"capture/{w}{k}|cpu_ns"))
                 for w in ("cached", "libunwind") for fp in ("fp", "nofp")]
        print(f"| {frames} / {limit} | {fmt(got)} | " + " | ".join(cells) + " |")
    k = "/alternating_paths/frames:32/limit:32|cpu_ns"
    cells = []
    for fp in ("fp", "nofp"):
        m, rec = (r.fig(f"capture_{fp}", "untraced", f"capture/{w}{k}") for w in ("cached", "recursion_only"))
        cells.append("-" if m is None or rec is None else fmt(m - rec))
    print(f"\nFour call paths in turn (recursion time subtracted), 32 frames: {cells[0]} ns with frame "
          f"pointers, {cells[1]} ns without.")
    cold = [fmt(r.fig(f"capture_{fp}", "untraced", f"capture/cached/16_paths_cold{own}/frames:32/limit:32/manual_time|real_ns",
                      "median")) for own in ("", "_own_sp") for fp in ("fp", "nofp")]
    print(f"Sixteen call paths in turn, 2 MiB of other memory traffic between captures (only the capture "
          f"timed, median), 32 frames: {cold[0]} ns with frame pointers, {cold[1]} ns without; each path "
          f"from its own stack pointer: {cold[2]} and {cold[3]} ns.")
    for note in sorted(set(r.cases["capture_fp"].get("notes", []) + r.cases.get("capture_nofp", {}).get("notes", []))):
        print(f"\n    {note}")
    print()


def hook(r):
    if "hook_fp_0" not in r.cases:
        return
    for api, name in (("BM_MallocFreeAsync", "cudaMallocAsync + cudaFreeAsync"), ("BM_MallocFree", "cudaMalloc + cudaFree")):
        print(f"### Hook path: {name} pair on the stand-in runtime (ns per pair, CPU time, fastest of all "
              "repetitions and rounds)\n")
        head = "".join(f" {v} | overhead |" for v in r.libs)
        print("| VRAMTRACE_STACK_DEPTH = frames of recursion | build | untraced |" + head)
        print("| --- | --- | --- |" + " --- | --- |" * len(r.libs))
        for d in (0, 16, 32, 64):
            for fp in ("fp", "nofp"):
                key = f"{api}/frames:{d}/bytes:4096|cpu_ns"
                p = r.fig(f"hook_{fp}_{d}", "untraced", key)
                cells = []
                for v in r.libs:
                    t = r.fig(f"hook_{fp}_{d}", v, key)
                    cells += [fmt(t), fmt(None if t is None or p is None else t - p)]
                label = "frame pointers" if fp == "fp" else "-fomit-frame-pointer"
                print(f"| {d} | {label} | {fmt(p)} | " + " | ".join(cells) + " |")
        print()


def tracking(r):
    figs = r.keys("tracking", "untraced")
    if not figs:
        return
    rows = {}
    for key in figs:
        run, _, what = key.partition("|")
        m = re.match(r"(\w+)/.*?(?:live:(\d+)/)?real_time/threads:(\d+)$", run)
        if m and what == "items_per_second":
            k = m.group(1) + ("/" + m.group(2) if m.group(2) and m.group(1) != "HookBookkeeping" else "")
            rows.setdefault(int(m.group(3)), {})[k] = figs[key]["median"] / 1e6
    print("### Tracking core, threads (Mops/s = million insert+erase pairs per second, all threads; "
          "median, wall time)\n")
    cols = ("LiveTable/1024", "MutexMap/1024", "LiveTable/65536", "MutexMap/65536")
    print("| threads | LiveTable, 1,024 live/thread | speed-up | mutex map, 1,024 live/thread | speed-up | "
          "LiveTable, 65,536 live/thread | speed-up | mutex map, 65,536 live/thread | speed-up | "
          "hook bookkeeping (depth 32, 1,024 live) | StackDepot intern hit (depth 32) |")
    print("| --- |" + " --- |" * 10)
    base = rows.get(1, {})
    for t in sorted(rows):
        cells = []
        for k in cols:
            v, b = rows[t].get(k), base.get(k)
            cells += [fmt(v, 2), fmt(None if v is None or not b else v / b, 2) + "x"]
        cells += [fmt(rows[t].get("HookBookkeeping"), 2), fmt(rows[t].get("StackDepot"), 2)]
        print(f"| {t} | " + " | ".join(cells) + " |")
    one = lambda run: r.fig("tracking", "untraced", run + "|cpu_ns")
    print("\nSingle thread, CPU time per insert+erase (fastest repetition): " + ", ".join(
        f"{label} {fmt(one(run))} ns" for label, run in (
            ("LiveTable 1,024 live", "LiveTable/insert+erase/live:1024/real_time/threads:1"),
            ("mutex map 1,024 live", "MutexMap/insert+erase/live:1024/real_time/threads:1"),
            ("LiveTable 65,536 live", "LiveTable/insert+erase/live:65536/real_time/threads:1"),
            ("mutex map 65,536 live", "MutexMap/insert+erase/live:65536/real_time/threads:1"),
            ("StackDepot intern hit, depth 32", "StackDepot/intern_hit/depth:32/real_time/threads:1"))) + ".")
    hot = one("HookBookkeeping/depth:32/live:1")
    cold = r.fig("tracking", "untraced", "HookBookkeeping/depth:32/live:1024/real_time/threads:1|real_ns", "median")
    print(f"\nHook bookkeeping without unwinding, 1 thread: {fmt(hot)} ns per alloc+free with one live "
          f"allocation (CPU time, fastest repetition); {fmt(cold)} ns with 1,024 live (wall time, median).\n")
    print("### Tracker memory\n")
    print("| what | count | mapped MiB | bytes each |")
    print("| --- | --- | --- | --- |")
    runs = sorted({k.partition("|")[0] for k in figs})
    g = lambda run, c: figs.get(run + "|" + c, {}).get("median")
    for run in runs:
        if run.startswith("Memory/per_live_allocation"):
            print(f"| live allocations (LiveTable::mapped_bytes) | {fmt(g(run, 'live'))} | "
                  f"{fmt(g(run, 'mapped_MiB'), 1)} | {fmt(g(run, 'bytes_per_live'), 1)} |")
    for run in runs:
        if run.startswith("Memory/per_unique_stack"):
            print(f"| unique stacks of depth {fmt(g(run, 'depth'))} (StackDepot::mapped_bytes) | "
                  f"{fmt(g(run, 'stacks'))} | {fmt(g(run, 'mapped_MiB'), 1)} | {fmt(g(run, 'bytes_per_stack'), 1)} "
                  f"({fmt(g(run, 'bytes_per_stack_above_empty'), 1)} above the empty depot) |")
    print()


def dump(r):
    if not any(c in r.cases for c in ("dump", "summary", "symbolize")):
        return
    print("### Dump, summary, symbolization (one run each)\n")
    for v in r.libs:
        d = lambda k: r.fig("dump", v, k)
        if d("dump_s") is not None:
            print(f"    [{v}] allocations={fmt(d('allocations'))} unique_stacks={fmt(d('unique_stacks'))} "
                  f"tracked_live={fmt(d('tracked_live'))} alloc_loop_s={fmt(d('alloc_loop_s'), 3)} "
                  f"dump_s={fmt(d('dump_s'), 3)} snapshot_bytes={fmt(d('bytes'))}")
    s = r.fig("summary", "untraced", "wall_s")
    if s is not None:
        print(f"    vramtrace summary of that snapshot: summary_s={fmt(s, 3)}")
    y = lambda k: r.fig("symbolize", "untraced", k)
    if y("symbolize_s") is not None:
        print(f"    symbolize: code_bytes={fmt(y('code_bytes'))} frames={fmt(y('frames'))} "
              f"symbolize_s={fmt(y('symbolize_s'), 3)} named={fmt(y('named'))} with_file_line={fmt(y('with_file_line'))}")
    print()


def instructions(r):
    rows = []
    for v in r.libs:
        p = r.fig("pair_instructions", v, "instructions_per_pair")
        py = [r.fig("python_instructions", v, f"frames={d}|instructions_per_pair") for d in (3, 12, 32)]
        if p is not None or any(x is not None for x in py):
            rows.append((v, p, py))
    if not rows:
        return
    base = r.doc.get("base") or rows[0][0]
    ref = next((row for row in rows if row[0] == base), rows[0])
    print("### Instructions per traced pair inside the hooks (callgrind, stand-in driver; exact)\n")
    print(f"| variant | stream-ordered pair | vs {ref[0]} | Python pair, 3 frames | vs {ref[0]} | "
          f"12 frames | vs {ref[0]} | 32 frames | vs {ref[0]} |")
    print("| --- |" + " --- |" * 8)
    diff = lambda a, b: "-" if a is None or b is None else f"{a - b:+,.0f}"
    for v, p, py in rows:
        cells = [fmt(p), diff(p, ref[1])]
        for x, b in zip(py, ref[2]):
            cells += [fmt(x), diff(x, b)]
        print(f"| {v} | " + " | ".join(cells) + " |")
    print()


def python_frames(r):
    if "python_frames_gil" not in r.cases:
        return
    print("### Python frames: cudaMalloc + cudaFree from Python, stand-in runtime (ns per pair, fastest round)\n")
    names = ["untraced"] + r.libs
    print("| Python frames | " + " | ".join(f"{n}, GIL held | {n}, GIL released" for n in names) + " |")
    print("| --- |" + " --- | --- |" * len(names))
    for d in (3, 12, 52):
        cells = [fmt(r.fig(f"python_frames_{m}", n, f"depth={d}|ns_per_pair")) for n in names for m in ("gil", "released")]
        print(f"| {d} | " + " | ".join(cells) + " |")
    print()


def gpu_pairs(r):
    if not any(f"pairs_{c}_{a}" in r.cases for c in ("static", "shared") for a in ("async", "sync")):
        return
    print("### Allocation pairs, 1 thread, 32 frames deep (ns per pair; fastest round, median in brackets)\n")
    print("| cudart | API | untraced |" + "".join(f" {v} | {v} / untraced | overhead ns |" for v in r.libs))
    print("| --- | --- | --- |" + " --- | --- | --- |" * len(r.libs))
    for cudart in ("static", "shared"):
        for api, label in (("async", "cudaMallocAsync+cudaFreeAsync"), ("sync", "cudaMalloc+cudaFree")):
            c = f"pairs_{cudart}_{api}"
            u = r.fig(c, "untraced", "ns_per_pair")
            cells = [f"{fmt(u, 1)} ({fmt(r.fig(c, 'untraced', 'ns_per_pair', 'median'), 1)})"]
            for v in r.libs:
                t = r.fig(c, v, "ns_per_pair")
                cells += [f"{fmt(t, 1)} ({fmt(r.fig(c, v, 'ns_per_pair', 'median'), 1)})",
                          fmt(None if t is None or not u else t / u, 3), fmt(None if t is None or u is None else t - u, 1)]
            print(f"| {cudart} | {label} | " + " | ".join(cells) + " |")
    print()
    if "threads_1" in r.cases:
        print("### Threads allocating at once (cudaMallocAsync+cudaFreeAsync, shared cudart, 32 frames; "
              "M pairs/s, median)\n")
        print("| threads | untraced |" + "".join(f" {v} | {v} / untraced |" for v in r.libs))
        print("| --- | --- |" + " --- | --- |" * len(r.libs))
        for t in (1, 2, 4, 8, 16):
            g = lambda v: r.fig(f"threads_{t}", v, "pairs_per_s", "median")
            u = g("untraced")
            cells = [fmt(None if u is None else u / 1e6, 2)]
            for v in r.libs:
                x = g(v)
                cells += [fmt(None if x is None else x / 1e6, 2), fmt(None if x is None or not u else x / u, 3)]
            print(f"| {t} | " + " | ".join(cells) + " |")
        print()


def torch(r):
    if not any(c.startswith("torch_") for c in r.cases):
        return
    print("### PyTorch training step (median ms per step: median over rounds, min-max)\n")
    print("| size | configuration | ms/step | ratio to its untraced baseline | allocations/step |")
    print("| --- | --- | --- | --- | --- |")
    for size in ("small", "medium"):
        for alloc, label in (("async", "cudaMallocAsync backend"), ("caching", "caching allocator")):
            c = f"torch_{size}_{alloc}"
            u = r.fig(c, "untraced", "median_ms", "median")
            for v in ["untraced"] + r.libs:
                m = r.fig(c, v, "median_ms", "median")
                if m is None:
                    continue
                spread = f"{fmt(m, 3)} ({fmt(r.fig(c, v, 'median_ms'), 3)}-{fmt(r.fig(c, v, 'median_ms', 'max'), 3)})"
                per = r.fig(c, v, "allocs_per_step", "median") if v != "untraced" else None
                print(f"| {size} | {label}, {v} | {spread} | {fmt(m / u if u else None, 3)} | "
                      f"{fmt(per) if per is not None and per >= 0 else ''} |")
            if alloc == "caching":
                for rec in ("python", "all"):
                    m = r.fig(f"torch_{size}_recorder_{rec}", "untraced", "median_ms", "median")
                    if m is not None:
                        print(f"| {size} | caching allocator, _record_memory_history(stacks=\"{rec}\") | "
                              f"{fmt(m, 3)} | {fmt(m / u if u else None, 3)} | |")
    print()


MAIN = re.compile(r"(\|cpu_ns|ns_per_pair|instructions_per_pair|median_ms|diff_ns|pairs_per_s|dump_s|wall_s)$")


def ab(r):
    """Every main figure of the cases run under more than one variant: median (min-max)."""
    names = ["untraced"] + r.libs
    base = r.doc.get("base")
    rows = []
    for case, c in r.cases.items():
        if c.get("runs") not in ("ab", "libs", "args"):
            continue
        keys = sorted({k for v in c.get("figures", {}).values() for k in v if MAIN.search(k)})
        for k in keys:
            rows.append((case, k))
    if not rows:
        return
    print("### Every variant, every round (median (min-max) over rounds)\n")
    head = f" | {base} - other, beyond the spread?" if base else ""
    print("| case | figure | " + " | ".join(names) + head + " |")
    print("| --- | --- |" + " --- |" * (len(names) + (1 if base else 0)))
    for case, k in rows:
        cells = []
        for n in names:
            f = r.cases[case]["figures"].get(n, {}).get(k)
            cells.append("" if f is None else f"{fmt(f['median'], 1)} ({fmt(f['min'], 1)}-{fmt(f['max'], 1)})")
        if base:
            b = r.cases[case]["figures"].get(base, {}).get(k)
            verdicts = []
            for n in r.libs:
                f = r.cases[case]["figures"].get(n, {}).get(k)
                if n == base or f is None or b is None:
                    continue
                apart = b["min"] > f["max"] or f["min"] > b["max"]
                verdicts.append(f"{n}: {b['median'] - f['median']:+,.1f} {'yes' if apart else 'no'}")
            cells.append("; ".join(verdicts))
        print(f"| {case} | {k.replace('|', chr(92) + '|')} | " + " | ".join(cells) + " |")
    print()


def main():
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if args else 2
    with open(args[0]) as f:
        r = Results(json.load(f))
    if "--out" in args:
        sys.stdout = open(args[args.index("--out") + 1], "w")
    machine(r)
    for table in (clock, capture, hook, tracking, dump, instructions, python_frames, gpu_pairs, torch, ab):
        table(r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
