#!/usr/bin/env python3
"""PyTorch under vramtrace (default caching allocator): at a check point in the middle of a small
training loop, the device bytes vramtrace tracks (read through the C API with ctypes) must equal
torch.cuda.memory_reserved() exactly, since the caching allocator holds device memory only as
cudaMalloc'ed segments. Prints deterministic output (the losses) so that the caller can compare
stdout with and without the preload; vramtrace-specific lines go to stderr."""
import ctypes
import sys

import torch


class DeviceStats(ctypes.Structure):
    _fields_ = [("device", ctypes.c_int32), ("reserved_", ctypes.c_uint32),
                ("current_bytes", ctypes.c_uint64), ("peak_bytes", ctypes.c_uint64),
                ("allocation_count", ctypes.c_uint64), ("free_count", ctypes.c_uint64),
                ("total_allocated_bytes", ctypes.c_uint64), ("total_freed_bytes", ctypes.c_uint64)]


def tracked_device_bytes(device):
    process = ctypes.CDLL(None)
    try:
        stats_fn = process.vramtrace_stats
    except AttributeError:
        return None
    stats = (DeviceStats * 16)()
    n = stats_fn(stats, 16)
    for i in range(min(n, 16)):
        if stats[i].device == device:
            return stats[i].current_bytes
    return 0


def main():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(512, 1024, device="cuda")
    y = torch.randint(0, 10, (512,), device="cuda")
    status = 0
    for step in range(6):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        print("step %d loss %.6f" % (step, loss.item()))
        if step == 3:
            torch.cuda.synchronize()
            reserved = torch.cuda.memory_reserved()
            tracked = tracked_device_bytes(torch.cuda.current_device())
            if tracked is None:
                print("vramtrace: not loaded (untraced run)", file=sys.stderr)
            else:
                verdict = "PASS" if tracked == reserved else "FAIL"
                print("%s torch default allocator: memory_reserved=%d tracked=%d" % (verdict, reserved, tracked),
                      file=sys.stderr)
                status = 0 if tracked == reserved else 1
    return status


if __name__ == "__main__":
    sys.exit(main())
