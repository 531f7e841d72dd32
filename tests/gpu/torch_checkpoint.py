#!/usr/bin/env python3
"""PyTorch under vramtrace (default caching allocator), checked against PyTorch's own figures.

Check point A, after the model and data are on the GPU and before any matrix product: the device
bytes vramtrace tracks (C API, through ctypes) equal torch.cuda.memory_reserved() exactly, since
the caching allocator holds device memory only as cudaMalloc'ed segments.

Check point B, in the middle of training: the first cuBLAS call has made cuBLAS allocate memory
of its own (cublasCreate_v2, outside PyTorch's allocator, invisible to memory_reserved). A
snapshot taken there (vramtrace_dump) must split exactly into the bytes whose stack passes through
c10's CUDACachingAllocator (== memory_reserved()) and the bytes whose stack passes through
libcublas (the rest), with nothing else.

Losses go to stdout (so the caller can compare stdout with and without the preload); check lines
go to stderr. The exit status is 0 whether or not vramtrace is loaded; 1 when a check fails."""
import ctypes
import json
import os
import sys
import tempfile

import torch


class DeviceStats(ctypes.Structure):
    _fields_ = [("device", ctypes.c_int32), ("reserved_", ctypes.c_uint32),
                ("current_bytes", ctypes.c_uint64), ("peak_bytes", ctypes.c_uint64),
                ("allocation_count", ctypes.c_uint64), ("free_count", ctypes.c_uint64),
                ("total_allocated_bytes", ctypes.c_uint64), ("total_freed_bytes", ctypes.c_uint64)]


PROCESS = ctypes.CDLL(None)
LOADED = hasattr(PROCESS, "vramtrace_stats")


def tracked_device_bytes(device):
    stats = (DeviceStats * 16)()
    n = PROCESS.vramtrace_stats(stats, 16)
    return sum(stats[i].current_bytes for i in range(min(n, 16)) if stats[i].device == device)


def split_snapshot(path, device):
    """Live bytes on `device` by owner: torch's caching allocator, cuBLAS, or anything else."""
    snap = json.load(open(path))
    modules = [os.path.basename(m["path"]) for m in snap["modules"]]
    frames = snap["frames"]
    owner_of_stack = {}
    for s in snap["stacks"]:
        names = [modules[frames[i]["module"]] if frames[i]["module"] >= 0 else "" for i in s["frames"]]
        fns = [frames[i]["function"] for i in s["frames"]]
        if any("CUDACachingAllocator" in f for f in fns):
            owner_of_stack[s["id"]] = "torch"
        elif any(n.startswith("libcublas") for n in names):
            owner_of_stack[s["id"]] = "cublas"
        else:
            owner_of_stack[s["id"]] = "other"
    split = {"torch": 0, "cublas": 0, "other": 0}
    for a in snap["allocations"]:
        if a["device"] == device:
            split[owner_of_stack.get(a["stack"], "other")] += a["size"]
    return split


def check(ok, text):
    print("%s %s" % ("PASS" if ok else "FAIL", text), file=sys.stderr)
    return ok


def main():
    torch.manual_seed(0)
    device = torch.cuda.current_device()
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(512, 1024, device="cuda")
    y = torch.randint(0, 10, (512,), device="cuda")
    ok = True
    if LOADED:
        torch.cuda.synchronize()
        reserved, tracked = torch.cuda.memory_reserved(), tracked_device_bytes(device)
        ok &= check(tracked == reserved, "torch A (before cuBLAS): memory_reserved=%d tracked=%d" % (reserved, tracked))
    for step in range(6):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        print("step %d loss %.6f" % (step, loss.item()))
        if step == 3 and LOADED:
            torch.cuda.synchronize()
            reserved, tracked = torch.cuda.memory_reserved(), tracked_device_bytes(device)
            path = os.path.join(tempfile.mkdtemp(), "checkpoint.json")
            rc = PROCESS.vramtrace_dump(path.encode())
            split = split_snapshot(path, device)
            ok &= check(rc == 0, "torch B: vramtrace_dump returned %d" % rc)
            ok &= check(split["torch"] == reserved,
                        "torch B (mid-training): memory_reserved=%d tracked in CUDACachingAllocator=%d"
                        % (reserved, split["torch"]))
            ok &= check(split["torch"] + split["cublas"] == tracked and split["other"] == 0,
                        "torch B: tracked=%d = allocator %d + cuBLAS's own %d (other %d)"
                        % (tracked, split["torch"], split["cublas"], split["other"]))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
