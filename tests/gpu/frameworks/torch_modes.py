#!/usr/bin/env python3
"""PyTorch under vramtrace in one allocator mode (set by the caller through PYTORCH_CUDA_ALLOC_CONF or
PYTORCH_NO_CUDA_MEMORY_CACHING), checked against PyTorch's own figures at a synchronized check
point in the middle of a small training loop:
  default                  allocator-attributed tracked bytes == torch.cuda.memory_reserved()
  expandable_segments      the same, the memory coming through cuMemCreate (VMM)
  cudaMallocAsync backend  tracked bytes from the async allocator == torch.cuda.memory_allocated()
  no caching               before the first matrix product: tracked == the live tensors' bytes
usage: torch_modes.py MODE   (MODE names the row above; prints PASS/FAIL on stderr, losses on stdout)"""
import sys

import torch

import vt_snapshot as vt


def main():
    mode = sys.argv[1]
    torch.manual_seed(0)
    dev = torch.cuda.current_device()
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(512, 1024, device="cuda")
    y = torch.randint(0, 10, (512,), device="cuda")
    ok = True
    if mode == "no_caching" and vt.LOADED:
        torch.cuda.synchronize()
        known = sum(p.untyped_storage().nbytes() for p in model.parameters()) + \
            x.untyped_storage().nbytes() + y.untyped_storage().nbytes()
        snap = vt.dump()
        tracked = vt.device_bytes(snap, dev)
        ok &= vt.report(tracked == known, "torch no_caching (live tensors, before cuBLAS)", known, tracked,
                        "apis=%s" % ",".join(vt.apis(snap)))
    for step in range(6):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        print("step %d loss %.6f" % (step, loss.item()))
        if step == 3 and vt.LOADED and mode != "no_caching":
            torch.cuda.synchronize()
            snap = vt.dump()
            torch_bytes = vt.device_bytes(snap, dev, vt.in_function("CUDACachingAllocator"))
            async_bytes = vt.device_bytes(snap, dev, vt.in_function("CudaMallocAsync"))
            total = vt.device_bytes(snap, dev)
            cublas = vt.device_bytes(snap, dev, vt.in_module("libcublas"))
            extra = "total=%d cublas_own=%d apis=%s" % (total, cublas, ",".join(vt.apis(snap)))
            if mode in ("default", "expandable_segments"):
                oracle = torch.cuda.memory_reserved()
                ok &= vt.report(torch_bytes == oracle, "torch %s (memory_reserved)" % mode, oracle, torch_bytes, extra)
                if mode == "expandable_segments":
                    ok &= vt.report("cuMemCreate" in vt.apis(snap), "torch expandable_segments uses cuMemCreate", 1,
                                    int("cuMemCreate" in vt.apis(snap)))
            elif mode == "cudaMallocAsync":
                oracle = torch.cuda.memory_allocated()
                ok &= vt.report(async_bytes == oracle, "torch cudaMallocAsync (memory_allocated)", oracle, async_bytes, extra)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
