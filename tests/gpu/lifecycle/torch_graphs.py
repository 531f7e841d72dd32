#!/usr/bin/env python3
"""PyTorch under vramtrace in the allocator mode named by MODE (the caller sets PYTORCH_CUDA_ALLOC_CONF
to match), with torch.cuda.graph capture (default and cudaMallocAsync modes), checked at a
synchronized check point after a few replays:
  default           bytes whose stacks pass through the caching allocator == memory_reserved()
  cudaMallocAsync   bytes through the async allocator (live allocations and captured ones, graph
                    memory nodes) == memory_allocated(); the device's graph memory row > 0 and equal
                    to cudaDeviceGetGraphMemAttribute(ReservedMemCurrent)
  expandable        (no capture) bytes through the caching allocator == memory_reserved()
and the nvidia-smi remainder of that check point (A) against the one after everything is freed and
the cache emptied (B): check_smi.py. Also reports the bytes whose stacks pass through cuBLAS/cuDNN.
Writes smi-torch-MODE-A.json / -B.json in the current directory. Prints "torch-figure" lines on
stdout, PASS/FAIL/INFO on stderr.
usage: torch_graphs.py default|cudaMallocAsync|expandable"""
import ctypes
import os
import shutil
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "frameworks"))
import vt_snapshot as vt  # noqa: E402


def graph_mem_attr(dev, attr):
    rt = ctypes.CDLL("libcudart.so.13")
    v = ctypes.c_ulonglong(0)
    rc = rt.cudaDeviceGetGraphMemAttribute(ctypes.c_int(dev), ctypes.c_int(attr), ctypes.byref(v))
    return v.value if rc == 0 else -1


def keep(snap, name):
    """vt.dump() writes to a temporary file; keep a copy for check_smi.py."""
    path = "smi-torch-%s.json" % name
    with open(path, "w") as f:
        import json
        json.dump(snap, f)
    return path


def main():
    mode = sys.argv[1]
    torch.manual_seed(0)
    dev = torch.cuda.current_device()
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 1024)).cuda()
    static_x = torch.randn(256, 1024, device="cuda")
    graph = None
    if mode != "expandable":
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                model(static_x)
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_y = model(static_x)
        for _ in range(5):
            static_x.copy_(torch.randn(256, 1024, device="cuda"))
            graph.replay()
    else:
        for _ in range(5):
            static_y = model(torch.randn(256, 1024, device="cuda"))
    torch.cuda.synchronize()
    print("checksum %.4f" % static_y.float().sum().item())
    reserved, allocated = torch.cuda.memory_reserved(), torch.cuda.memory_allocated()
    # cudaGraphMemAttrUsedMemCurrent = 0, ReservedMemCurrent = 2
    graph_used, graph_reserved = graph_mem_attr(dev, 0), graph_mem_attr(dev, 2)
    for name, v in (("memory_reserved", reserved), ("memory_allocated", allocated),
                    ("graph_used", graph_used), ("graph_reserved", graph_reserved)):
        print("torch-figure %s %d" % (name, v))
    ok = True
    if not vt.LOADED:
        return 0
    snap = vt.dump()
    keep(snap, mode + "-A")
    row = [d for d in snap["devices"] if d["device"] == dev][0]
    extra = "apis=%s graph_row=%s/%s" % (",".join(vt.apis(snap)), row.get("graph_reserved_bytes"),
                                         row.get("graph_used_bytes"))
    if mode in ("default", "expandable"):
        t = vt.device_bytes(snap, dev, vt.in_function("CUDACachingAllocator"))
        ok &= vt.report(t == reserved, "torch %s (memory_reserved)" % mode, reserved, t, extra)
    else:
        t = vt.device_bytes(snap, dev, vt.in_function("CudaMallocAsync"), kinds={"device", "graph_pool"})
        ok &= vt.report(t == allocated, "torch cudaMallocAsync (memory_allocated, captured included)", allocated, t,
                        extra)
        gr = row.get("graph_reserved_bytes", -1)
        ok &= vt.report(gr == graph_reserved and gr > 0, "torch cudaMallocAsync graph memory row", graph_reserved, gr)
    cublas = vt.device_bytes(snap, dev, vt.in_module("libcublas"))
    cudnn = vt.device_bytes(snap, dev, vt.in_module("libcudnn"))
    print("INFO torch %s: bytes through cuBLAS %d (%.1f MiB), through cuDNN %d" % (mode, cublas, cublas / 2**20, cudnn),
          file=sys.stderr)
    # B: everything freed but the context, the modules and the libraries' handles.
    del model, static_x, static_y
    if graph is not None:
        graph.reset()
        del graph
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    torch.cuda.synchronize()
    rt = ctypes.CDLL("libcudart.so.13")
    rt.cudaDeviceGraphMemTrim(ctypes.c_int(dev))
    torch.cuda.synchronize()
    keep(vt.dump(), mode + "-B")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
