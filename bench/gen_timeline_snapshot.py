#!/usr/bin/env python3
"""Writes a snapshot shaped like a training loop, for measuring the HTML report (not a test).

    gen_timeline_snapshot.py OUT.json --events E [--params P] [--per-step K] [--stacks S] [--seed X]

P parameters allocated first and live to the dump; then steps, each allocating K activations (sizes
log-uniform from 512 B to 64 MiB, rounded to 512 B) and freeing them in reverse order, until the
history holds E events (one alloc or free per microsecond). One device; S stacks of 12 frames; the
peak and its composition replayed exactly from the events. Prints "events bands peak_bytes".
"""
import argparse
import math
import random


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--events", type=int, required=True)
    ap.add_argument("--params", type=int, default=2000)
    ap.add_argument("--per-step", type=int, default=500)
    ap.add_argument("--stacks", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rnd = random.Random(a.seed)

    def size():
        return 512 * max(1, int(math.exp(rnd.uniform(math.log(1), math.log(131072)))))

    events, live, t = [], {}, 1_000_000_000
    current = peak = 0
    peak_sites, peak_time = {}, t
    addr = 0x7f0000000000

    def alloc(stack):
        nonlocal current, peak, peak_sites, peak_time, t, addr
        s = size()
        addr += 1 << 20
        live[addr] = (s, stack)
        events.append((t, "alloc", addr, s, stack))
        current += s
        if current > peak:
            peak, peak_time = current, t
            peak_sites = None  # recomputed below when the peak is final
        t += 1000
        return addr

    def free(address):
        nonlocal current, t
        s, stack = live.pop(address)
        events.append((t, "free", address, s, stack))
        current -= s
        t += 1000

    # The peak's composition: replay once more, stopping at the peak's time.
    for _ in range(min(a.params, a.events)):
        alloc(rnd.randrange(a.stacks) + 1)
    while len(events) < a.events:
        step = [alloc(rnd.randrange(a.stacks) + 1) for _ in range(min(a.per_step, (a.events - len(events)) // 2))]
        if not step:
            break
        for address in reversed(step):
            free(address)
    comp, replay = {}, {}
    for (when, kind, address, s, stack) in events:
        if when > peak_time:
            break
        if kind == "alloc":
            replay[address] = (s, stack)
        else:
            replay.pop(address)
    for s, stack in replay.values():
        b, c = comp.get(stack, (0, 0))
        comp[stack] = (b + s, c + 1)
    n_alloc = sum(1 for e in events if e[1] == "alloc")

    with open(a.out, "w", buffering=1 << 20) as w:
        w.write('{"format": "vramtrace-snapshot", "schema_version": 1,\n')
        w.write('"process": {"pid": 7, "ppid": 1, "command_line": ["./train"], "executable": "/opt/train", "host": "bench", '
                '"start_time_ns": 1764466245000000000, "dump_time_ns": %d, "driver_version": 13000, "reason": "exit", '
                '"vramtrace_version": "0.1.0", "stack_depth": 32, "dump_monotonic_ns": %d},\n'
                % (1764466245000000000 + t - 1_000_000_000 + 1000, t + 1000))
        w.write('"devices": [{"device": 0, "current_bytes": %d, "peak_bytes": %d, "allocation_count": %d, "free_count": %d, '
                '"total_allocated_bytes": %d, "total_freed_bytes": %d}],\n'
                % (current, peak, n_alloc, len(events) - n_alloc, sum(e[3] for e in events if e[1] == "alloc"),
                   sum(e[3] for e in events if e[1] == "free")))
        w.write('"dropped": {"allocations": 0, "stacks": 0, "peak_sites": 0}, "oom_count": 0,\n')
        sites = sorted(comp.items(), key=lambda kv: (-kv[1][0], kv[0]))
        w.write('"peaks": [{"device": 0, "peak_bytes": %d, "time_ns": %d, "sites": [%s]}],\n'
                % (peak, peak_time, ", ".join('{"stack": %d, "bytes": %d, "count": %d}' % (st, b, c) for st, (b, c) in sites)))
        w.write('"ooms": [], "pools": [],\n')
        w.write('"event_history": {"capacity": %d, "recorded": %d, "wrapped": false, "complete_from_ns": 1000000000},\n'
                % (len(events), len(events)))
        w.write('"modules": [{"path": "/opt/train", "base": "0x555500000000", "build_id": "00"}],\n"frames": [\n')
        n_frames = 4 * a.stacks
        w.write(",\n".join('{"address": "0x%x", "module": 0, "module_offset": "0x%x", "function": "fn_%d(int)", '
                           '"file": "/src/train/file_%d.cpp", "line": %d}' % (0x555500000000 + 16 * f, 16 * f, f, f % 97, 10 + f % 500)
                           for f in range(n_frames)))
        w.write('],\n"stacks": [\n')
        w.write(",\n".join('{"id": %d, "frames": [%s], "call_site": 0}'
                           % (s + 1, ", ".join(str((s * 7 + k * 13) % n_frames) for k in range(12))) for s in range(a.stacks)))
        w.write('],\n"allocations": [\n')
        w.write(",\n".join('{"address": "0x%x", "size": %d, "kind": "device", "device": 0, "api": "cudaMalloc", "stream": "0x0", '
                           '"thread_id": 7, "time_ns": %d, "stack": %d}' % (address, s, 1_000_000_000, stack)
                           for address, (s, stack) in live.items()))
        w.write('],\n"events": [\n')
        w.write(",\n".join('{"type": "%s", "time_ns": %d, "thread_id": 7, "device": 0, "address": "0x%x", "kind": "device", '
                           '"size": %d, "api": "%s", "stack": %d}' % (kind, when, address, s, "cudaMalloc" if kind == "alloc" else "cudaFree", stack)
                           for (when, kind, address, s, stack) in events))
        w.write(']}\n')
    print(len(events), n_alloc, peak)


if __name__ == "__main__":
    main()
