#!/usr/bin/env python3
"""PyTorch with torch.cuda.graph capture under vramtrace, in the allocator mode the caller sets
(PYTORCH_CUDA_ALLOC_CONF). After a few replays, at a synchronized check point:
  default           bytes whose stacks pass through the caching allocator == memory_reserved()
  cudaMallocAsync   bytes through the async allocator == memory_allocated(); the device's graph
                    memory row > 0 and equal to cudaDeviceGetGraphMemAttribute's reserved bytes
Prints "torch-figure NAME VALUE" lines on stdout (also untraced), PASS/FAIL on stderr when traced.
usage: torch_graphs.py MODE"""
import ctypes
import sys

import torch

sys.path.insert(0, __import__("os").path.join(__import__("os").path.dirname(__file__), "..", "frameworks"))
import vt_snapshot as vt  # noqa: E402


def graph_mem_attr(dev, attr):
    rt = ctypes.CDLL("libcudart.so.13")
    v = ctypes.c_ulonglong(0)
    rc = rt.cudaDeviceGetGraphMemAttribute(ctypes.c_int(dev), ctypes.c_int(attr), ctypes.byref(v))
    return v.value if rc == 0 else -1


def main():
    mode = sys.argv[1]
    torch.manual_seed(0)
    dev = torch.cuda.current_device()
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 1024)).cuda()
    static_x = torch.randn(256, 1024, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            model(static_x)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        static_y = model(static_x)
    for i in range(5):
        static_x.copy_(torch.randn(256, 1024, device="cuda"))
        g.replay()
    torch.cuda.synchronize()
    print("checksum %.4f" % static_y.float().sum().item())
    reserved, allocated = torch.cuda.memory_reserved(), torch.cuda.memory_allocated()
    # cudaGraphMemAttrUsedMemCurrent = 0, UsedMemHigh = 1, ReservedMemCurrent = 2, ReservedMemHigh = 3
    graph_used, graph_reserved = graph_mem_attr(dev, 0), graph_mem_attr(dev, 2)
    for name, v in (("memory_reserved", reserved), ("memory_allocated", allocated),
                    ("graph_used", graph_used), ("graph_reserved", graph_reserved)):
        print("torch-figure %s %d" % (name, v))
    ok = True
    if vt.LOADED:
        snap = vt.dump()
        total = vt.device_bytes(snap, dev)
        rows = [d for d in snap["devices"] if d["device"] == dev]
        graph_row = rows[0].get("graph_memory", {}) if rows else {}
        extra = "total=%d apis=%s graph_row=%s" % (total, ",".join(vt.apis(snap)), graph_row)
        if mode == "default":
            t = vt.device_bytes(snap, dev, vt.in_function("CUDACachingAllocator"))
            ok &= vt.report(t == reserved, "torch graphs default (memory_reserved)", reserved, t, extra)
        else:
            t = vt.device_bytes(snap, dev, vt.in_function("CudaMallocAsync"))
            ok &= vt.report(t == allocated, "torch graphs cudaMallocAsync (memory_allocated)", allocated, t, extra)
            gr = graph_row.get("reserved_bytes", -1)
            ok &= vt.report(gr == graph_reserved and gr > 0, "torch graphs cudaMallocAsync graph memory row",
                            graph_reserved, gr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
