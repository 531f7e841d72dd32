#!/usr/bin/env python3
"""Step time of a small PyTorch training loop, for the traced / untraced / PyTorch-recorder ratios.

    python3 train_step.py [--size small|medium] [--steps N] [--record python|all]

The allocator backend comes from PYTORCH_CUDA_ALLOC_CONF as the caller set it (bench/run's torch_*
cases use backend:cudaMallocAsync, where every tensor is one cudaMallocAsync, and the default
caching allocator for PyTorch's own recorder, which the cudaMallocAsync backend does not support).
--record turns on torch.cuda.memory._record_memory_history(stacks=...) before the first step.
Prints one line:
    RESULT size=small backend=... record=none traced=1 steps=200 median_ms=... mean_ms=... host_median_ms=...
           probe_median_ms=... allocs_per_step=...
median_ms is the step with its torch.cuda.synchronize(); host_median_ms the same step up to the return
of its last call, before the synchronize: the host's share (Python, PyTorch's dispatch, the autograd
thread's backward, the allocator and what intercepts it), which the GPU's clocks do not move as long as
the launch queue does not fill. While tracing only adds host time and leaves the GPU's part alone, the
traced / untraced ratio of the host parts is at least that of the steps (a step is never shorter than
its host part); each is the median over its own steps.
probe_median_ms times 1,000 multiply-adds on small CPU tensors (PyTorch's dispatcher and Python, no CUDA
call, nothing intercepted), every 10 steps: the host's speed in this process, by which the step of
another process on a faster or slower host can be scaled (bench/run keeps it as probe_median_ms).
(allocs_per_step comes from vramtrace_stats when libvramtrace.so is loaded, else -1).
"""
import argparse
import ctypes
import os
import statistics
import sys
import time

import torch


class Block(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm1 = torch.nn.LayerNorm(d)
        self.attn = torch.nn.MultiheadAttention(d, max(1, d // 64), batch_first=True)
        self.norm2 = torch.nn.LayerNorm(d)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(d, 4 * d), torch.nn.GELU(), torch.nn.Linear(4 * d, d))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


def vramtrace_allocations():
    """Allocations counted by vramtrace so far on device 0, or None without the library."""

    class Stats(ctypes.Structure):
        _fields_ = [("device", ctypes.c_int32), ("reserved_", ctypes.c_uint32)] + [
            (n, ctypes.c_uint64) for n in ("current_bytes", "peak_bytes", "allocation_count", "free_count",
                                           "total_allocated_bytes", "total_freed_bytes")]

    try:
        fn = ctypes.CDLL(None).vramtrace_stats
    except AttributeError:
        return None
    arr = (Stats * 16)()
    n = fn(arr, 16)
    if n < 0:
        return None
    return sum(arr[i].allocation_count for i in range(min(n, 16)) if arr[i].device >= 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", choices=("small", "medium"), default="small")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--record", choices=("none", "python", "all"), default="none")
    args = ap.parse_args()

    # small: CPU-bound (the allocator and the interceptor show most); medium: closer to a real job.
    d, layers, batch, seq = (256, 4, 16, 128) if args.size == "small" else (1024, 8, 16, 512)
    torch.manual_seed(0)
    dev = torch.device("cuda", 0)
    model = torch.nn.Sequential(*[Block(d) for _ in range(layers)], torch.nn.Linear(d, 1)).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(batch, seq, d, device=dev)
    y = torch.randn(batch, seq, 1, device=dev)

    backend = torch.cuda.memory.get_allocator_backend()
    if args.record != "none":
        try:
            torch.cuda.memory._record_memory_history(enabled="all", context="all", stacks=args.record,
                                                     max_entries=100000)
        except Exception as e:  # the cudaMallocAsync backend refuses it
            print(f"RESULT size={args.size} backend={backend} record={args.record} unsupported={type(e).__name__}")
            return 0

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss

    # The host's speed in this process, measured with no CUDA call: small CPU tensors through the
    # same dispatcher and Python, whose memory comes from PyTorch's CPU allocator (nothing a CUDA
    # interceptor sees). One probe every 10 steps, so that it spans the same time as the steps.
    a = torch.ones(64)
    b = torch.ones(64)

    def cpu_probe():
        t0 = time.perf_counter()
        c = a
        for _ in range(1000):
            c = torch.add(torch.mul(c, 0.5), b)
        return (time.perf_counter() - t0) * 1e3

    for _ in range(args.warmup):
        step()
    cpu_probe()
    torch.cuda.synchronize()
    before = vramtrace_allocations()
    times = []
    host = []
    probes = []
    for i in range(args.steps):
        if i % 10 == 0:
            probes.append(cpu_probe())
        t0 = time.perf_counter()
        step()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
        host.append((t1 - t0) * 1e3)
    after = vramtrace_allocations()
    per_step = -1 if before is None else (after - before) / args.steps
    traced = 0 if before is None else 1
    print(f"RESULT size={args.size} backend={backend} record={args.record} traced={traced} steps={args.steps} "
          f"median_ms={statistics.median(times):.3f} mean_ms={statistics.mean(times):.3f} "
          f"host_median_ms={statistics.median(host):.3f} probe_median_ms={statistics.median(probes):.3f} "
          f"allocs_per_step={per_step:.0f}", flush=True)
    if args.record != "none":
        torch.cuda.memory._record_memory_history(enabled=None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
