#!/usr/bin/env python3
"""Writes a large, valid vramtrace snapshot for measuring the CLI's memory and time (not a test).

    gen_big_snapshot.py OUT.json [--allocations N] [--stacks S] [--sizes K] [--events E] [--seed X]

N live allocations spread over S distinct stacks (each of 12 frames, from a pool of 4 * S frames
in one module), each stack allocating K distinct sizes (multiples of 512 B, as a caching allocator
rounds them), on 2 devices; an event history of E events (allocs and frees that agree with the
device counters, so the summary replays it); per device a peak made of the largest stacks. The
layout is the library's (docs/snapshot-format.md): one record per line, long arrays last. Prints
"allocations bytes" to stdout.
"""
import argparse
import random
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--allocations", type=int, default=2_000_000)
    ap.add_argument("--stacks", type=int, default=4000)
    ap.add_argument("--sizes", type=int, default=4)
    ap.add_argument("--events", type=int, default=65536)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    n_frames = 4 * a.stacks
    stack_sizes = [[512 * rnd.randint(1, 4096) for _ in range(a.sizes)] for _ in range(a.stacks)]

    # Live allocations: (stack, device, size).
    live_bytes = [0, 0]
    live_count = [0, 0]
    per_stack = {}
    w = open(a.out, "w", buffering=1 << 20)
    alloc_lines = []

    def allocation(i):
        st = rnd.randrange(a.stacks)
        dev = st % 2
        size = stack_sizes[st][rnd.randrange(a.sizes)]
        live_bytes[dev] += size
        live_count[dev] += 1
        b, c = per_stack.get((dev, st + 1), (0, 0))
        per_stack[(dev, st + 1)] = (b + size, c + 1)
        return ('    {"address": "0x%x", "size": %d, "kind": "device", "device": %d, "api": "cudaMalloc", '
                '"stream": "0x0", "thread_id": %d, "time_ns": %d, "stack": %d}'
                % (0x7f0000000000 + i * 4096, size, dev, 1000 + st % 8, 1000000 + i, st + 1))

    # Allocations are generated first (their totals go into devices/peaks, which come first in the
    # file), written to a side file and copied in at the end.
    side_path = a.out + ".allocs.tmp"
    with open(side_path, "w", buffering=1 << 20) as side:
        for i in range(a.allocations):
            side.write(allocation(i))
            side.write(",\n" if i + 1 < a.allocations else "\n")

    # Events: E/2 alloc+free pairs of a transient buffer per device (so the replay agrees with the
    # counters: totals = live + transient).
    pairs = a.events // 2
    ev_bytes = [0, 0]
    ev_count = [0, 0]
    events = []
    t = 2000000000
    for k in range(pairs):
        dev = k % 2
        size = 512 * (1 + k % 2048)
        addr = 0x7e0000000000 + k * 4096
        st = (k % a.stacks) + 1
        events.append('    {"type": "alloc", "time_ns": %d, "thread_id": 1000, "device": %d, "address": "0x%x", '
                      '"kind": "device", "size": %d, "api": "cudaMalloc", "stack": %d}' % (t, dev, addr, size, st))
        events.append('    {"type": "free", "time_ns": %d, "thread_id": 1000, "device": %d, "address": "0x%x", '
                      '"kind": "device", "size": %d, "api": "cudaFree", "stack": %d}' % (t + 1, dev, addr, size, st))
        t += 2
        ev_bytes[dev] += size
        ev_count[dev] += 1
    # The history holds only the transients; the live allocations came before it (not complete:
    # the summary leaves per-kind peaks unknown, but still replays every event).

    w.write('{\n  "format": "vramtrace-snapshot",\n  "schema_version": 1,\n')
    w.write('  "process": {"pid": 4242, "ppid": 1, "command_line": ["./big"], "executable": "/opt/big/bin/big", '
            '"host": "bench", "start_time_ns": 1764466245000000000, "dump_time_ns": 1764466250000000000, '
            '"driver_version": 13000, "reason": "exit", "vramtrace_version": "0.1.0", "stack_depth": 32, '
            '"dump_monotonic_ns": 6000000000, "rank": "0"},\n')
    w.write('  "devices": [\n')
    for dev in range(2):
        peak = live_bytes[dev] + 512 * 2048
        w.write('    {"device": %d, "current_bytes": %d, "peak_bytes": %d, "allocation_count": %d, "free_count": %d, '
                '"total_allocated_bytes": %d, "total_freed_bytes": %d, "uuid": "GPU-0000000%d"}%s\n'
                % (dev, live_bytes[dev], peak, live_count[dev] + ev_count[dev], ev_count[dev],
                   live_bytes[dev] + ev_bytes[dev], ev_bytes[dev], dev, "," if dev == 0 else ""))
    w.write('  ],\n  "dropped": {"allocations": 0, "stacks": 0, "peak_sites": 0},\n  "oom_count": 0,\n')
    w.write('  "peaks": [\n')
    for dev in range(2):
        sites = sorted(((b, st, c) for (d, st), (b, c) in per_stack.items() if d == dev), key=lambda x: (-x[0], x[1]))
        extra = 512 * 2048
        body = ", ".join('{"stack": %d, "bytes": %d, "count": %d}' % (st, b, c) for b, st, c in sites)
        body += (", " if body else "") + '{"stack": 0, "bytes": %d, "count": 1}' % extra
        w.write('    {"device": %d, "peak_bytes": %d, "time_ns": 1500000000, "sites": [%s]}%s\n'
                % (dev, live_bytes[dev] + extra, body, "," if dev == 0 else ""))
    w.write('  ],\n  "ooms": [],\n  "pools": [],\n')
    w.write('  "event_history": {"capacity": %d, "recorded": %d, "wrapped": false, "complete_from_ns": 1000000000},\n'
            % (max(a.events, 1), len(events)))
    w.write('  "modules": [\n    {"path": "/opt/big/bin/big", "base": "0x555500000000", "build_id": "00"}\n  ],\n')
    w.write('  "frames": [\n')
    for f in range(n_frames):
        w.write('    {"address": "0x%x", "module": 0, "module_offset": "0x%x", "function": "fn_%d(int)", '
                '"file": "/src/big/file_%d.cpp", "line": %d}%s\n'
                % (0x555500000000 + 16 * f, 16 * f, f, f % 97, 10 + f % 500, "," if f + 1 < n_frames else ""))
    w.write('  ],\n  "stacks": [\n')
    for s in range(a.stacks):
        frames = [(s * 7 + k * 13) % n_frames for k in range(12)]
        w.write('    {"id": %d, "frames": [%s], "call_site": 0}%s\n'
                % (s + 1, ", ".join(map(str, frames)), "," if s + 1 < a.stacks else ""))
    w.write('  ],\n  "allocations": [\n')
    w.flush()
    with open(side_path) as side:
        while True:
            chunk = side.read(1 << 22)
            if not chunk:
                break
            w.write(chunk)
    w.write('  ],\n  "events": [\n')
    for k, e in enumerate(events):
        w.write(e + (",\n" if k + 1 < len(events) else "\n"))
    w.write('  ]\n}\n')
    w.close()
    import os
    os.unlink(side_path)
    print(a.allocations, sum(live_bytes))


if __name__ == "__main__":
    sys.exit(main())
