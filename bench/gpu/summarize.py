#!/usr/bin/env python3
"""Tables (markdown) from bench/gpu/run_all.sh's RESULT lines and bench_tracking's JSON.

Usage: summarize.py RESULTS_TXT [TRACKING_JSON]
Where a configuration ran more than once (run_all.sh alternates untraced and traced runs), the best
(fastest) run is taken for each side.
"""
import json
import re
import sys


def results(path):
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith("RESULT "):
                rows.append(dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv))
    return rows


def best(rows, key, lower=True, **match):
    vals = [float(r[key]) for r in rows if key in r and all(r.get(k) == v for k, v in match.items())]
    if not vals:
        return None
    return min(vals) if lower else max(vals)


def f(v, d=1):
    return "-" if v is None else f"{v:,.{d}f}"


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def main():
    rows = results(sys.argv[1])
    failed = [r for r in rows if r.get("failed")]
    with open(sys.argv[1]) as fh:
        head = [l.rstrip() for l in fh if not l.startswith("RESULT") and not l.startswith("==")][:4]
    print("### Machine\n")
    for l in head:
        print("    " + l)
    print()

    print("### (1) Allocation pairs, 1 thread, 32 frames deep (ns per pair, best of 2 runs)\n")
    print("| cudart | API | untraced | traced | traced / untraced | overhead ns |")
    print("| --- | --- | --- | --- | --- | --- |")
    for cudart in ("static", "shared"):
        for api in ("async", "sync"):
            m = dict(bench="pairs", cudart=cudart, api=api, threads="1")
            u = best(rows, "ns_per_pair", vt="0", **m)
            t = best(rows, "ns_per_pair", vt="1", **m)
            name = "cudaMallocAsync+cudaFreeAsync" if api == "async" else "cudaMalloc+cudaFree"
            print(f"| {cudart} | {name} | {f(u)} | {f(t)} | {f(ratio(t, u), 3)} | {f(None if u is None or t is None else t - u)} |")
    print()

    print("### (3) Threads allocating at once (cudaMallocAsync+cudaFreeAsync, shared cudart, 32 frames)\n")
    print("| threads | untraced Mpairs/s | traced Mpairs/s | traced / untraced throughput | traced speed-up vs 1 thread |")
    print("| --- | --- | --- | --- | --- |")
    t1 = best(rows, "pairs_per_s", lower=False, bench="threads", threads="1", vt="1")
    for t in ("1", "2", "4", "8", "16"):
        u = best(rows, "pairs_per_s", lower=False, bench="threads", threads=t, vt="0")
        tr = best(rows, "pairs_per_s", lower=False, bench="threads", threads=t, vt="1")
        print(f"| {t} | {f(None if u is None else u / 1e6, 2)} | {f(None if tr is None else tr / 1e6, 2)} | "
              f"{f(ratio(tr, u), 3)} | {f(ratio(tr, t1), 2)}x |")
    print()

    if len(sys.argv) > 2:
        try:
            with open(sys.argv[2]) as fh:
                text = fh.read()
            benches = json.JSONDecoder().raw_decode(text[text.find("{"):])[0].get("benchmarks", [])
        except (OSError, ValueError):
            benches = []
        rate = {}
        for b in benches:
            if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
                continue
            m = re.match(r"(\w+)/insert\+erase/live:(\d+)/real_time/threads:(\d+)$", b["run_name"])
            if m:
                rate[(m.group(1), int(m.group(2)), int(m.group(3)))] = b.get("items_per_second", 0)
        if rate:
            print("### (3) LiveTable vs mutex + unordered_map (bench_tracking, Mops/s of insert+erase, all threads, median)\n")
            print("| threads | LiveTable, 1,024 live/thread | speed-up | mutex map | speed-up | "
                  "LiveTable, 65,536 live/thread | speed-up | mutex map | speed-up |")
            print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
            for t in sorted({k[2] for k in rate}):
                cells = []
                for live in (1024, 65536):
                    for table in ("LiveTable", "MutexMap"):
                        v = rate.get((table, live, t))
                        cells += [f(v and v / 1e6, 2), f(ratio(v, rate.get((table, live, 1))), 2) + "x"]
                print(f"| {t} | " + " | ".join(cells) + " |")
            print()

    print("### (2) PyTorch training step (median ms per step, best of runs)\n")
    print("| size | configuration | ms/step | ratio to its untraced baseline | allocations/step (vramtrace) |")
    print("| --- | --- | --- | --- | --- |")
    for size in ("small", "medium"):
        a0 = best(rows, "median_ms", bench="torch", size=size, backend="cudaMallocAsync", record="none", vt="0")
        a1 = best(rows, "median_ms", bench="torch", size=size, backend="cudaMallocAsync", record="none", vt="1")
        n0 = best(rows, "median_ms", bench="torch", size=size, backend="native", record="none", vt="0")
        n1 = best(rows, "median_ms", bench="torch", size=size, backend="native", record="none", vt="1")
        rp = best(rows, "median_ms", bench="torch", size=size, backend="native", record="python", vt="0")
        ra = best(rows, "median_ms", bench="torch", size=size, backend="native", record="all", vt="0")
        alloc_a = best(rows, "allocs_per_step", lower=False, bench="torch", size=size, backend="cudaMallocAsync", vt="1")
        alloc_n = best(rows, "allocs_per_step", lower=False, bench="torch", size=size, backend="native", vt="1")
        print(f"| {size} | cudaMallocAsync backend, untraced | {f(a0, 3)} | 1 | |")
        print(f"| {size} | cudaMallocAsync backend, vramtrace | {f(a1, 3)} | {f(ratio(a1, a0), 3)} | {f(alloc_a, 0)} |")
        print(f"| {size} | caching allocator, untraced | {f(n0, 3)} | 1 | |")
        print(f"| {size} | caching allocator, vramtrace | {f(n1, 3)} | {f(ratio(n1, n0), 3)} | {f(alloc_n, 0)} |")
        print(f"| {size} | caching allocator, _record_memory_history(stacks=\"python\") | {f(rp, 3)} | {f(ratio(rp, n0), 3)} | |")
        print(f"| {size} | caching allocator, _record_memory_history(stacks=\"all\") | {f(ra, 3)} | {f(ratio(ra, n0), 3)} | |")
        for r in rows:
            if r.get("bench") == "torch" and r.get("size") == size and r.get("unsupported"):
                print(f"| {size} | {r.get('backend')} backend, _record_memory_history(stacks=\"{r.get('record')}\") | "
                      f"refused ({r['unsupported']}) | | |")
    print()
    if failed:
        print("Failed runs (see stderr.txt):", ", ".join(" ".join(f"{k}={v}" for k, v in r.items()) for r in failed))


if __name__ == "__main__":
    main()
