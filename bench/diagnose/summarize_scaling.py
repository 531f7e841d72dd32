#!/usr/bin/env python3
"""The table of bench/diagnose/thread_scaling.sh's RESULT lines: per shape (threads) and variant, the
median ns per pair per thread, and the median (min-max) over rounds of its ratio to the untraced
run of the same round (and, given --base NAME, of each variant to variant NAME).

    bench/diagnose/summarize_scaling.py OUT_DIR/scaling.txt [--base NAME]

Rounds are told apart by order: each untraced run of a shape opens a new round of that shape.
"""
import argparse
import collections
import re
import statistics


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--base")
    args = ap.parse_args()
    rounds = collections.defaultdict(list)  # threads -> [ {variant: ns} ]
    for line in open(args.results):
        m = re.search(r"variant=(\S+) .*threads=(\d+) .*ns_per_pair=([0-9.]+)", line)
        if not m:
            continue
        variant, threads, ns = m.group(1), int(m.group(2)), float(m.group(3))
        if variant == "compute-sanitizer":
            threads = 16
        if variant == "untraced" or not rounds[threads]:
            rounds[threads].append({})
        rounds[threads][-1][variant] = ns
    for threads in sorted(rounds, reverse=True):
        rs = rounds[threads]
        variants = sorted({v for r in rs for v in r}, key=lambda v: (v != "untraced", v))
        print(f"{threads} thread(s), {len(rs)} rounds: variant | median ns/pair | ratio to untraced "
              f"(median, min-max)" + (f" | ratio to {args.base}" if args.base else ""))
        for v in variants:
            ns = [r[v] for r in rs if v in r]
            ratios = [r[v] / r["untraced"] for r in rs if v in r and "untraced" in r]
            row = f"  {v} | {statistics.median(ns):.0f} | "
            if ratios:
                row += f"{statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})"
            diffs = [r[v] - r["untraced"] for r in rs if v in r and "untraced" in r]
            if diffs:
                row += f", +{statistics.median(diffs):.0f} ns ({min(diffs):.0f}..{max(diffs):.0f})"
            if args.base:
                b = [r[v] / r[args.base] for r in rs if v in r and args.base in r]
                if b:
                    row += f" | {statistics.median(b):.3f} ({min(b):.3f}-{max(b):.3f})"
            print(row)


if __name__ == "__main__":
    main()
