#!/usr/bin/env python3
"""Two-process all-reduce through torch.distributed (NCCL), one GPU per rank, each rank traced by
vramtrace into its own snapshot. At a check point after the all-reduce, each rank dumps a
snapshot and reports (INFO) the bytes on its own device whose stack passes through libnccl, and
checks (PASS/FAIL) that no tracked byte sits on the other rank's device and that NCCL's bytes are
non-empty on its own device.
usage: torchrun --nproc-per-node 2 nccl_allreduce.py   (or: python3 -m torch.distributed.run ...)"""
import os
import sys

import torch
import torch.distributed as dist

import vt_snapshot as vt


def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(rank)
    t = torch.full((1 << 20,), float(rank + 1), device="cuda")
    dist.all_reduce(t)
    torch.cuda.synchronize()
    value = t[0].item()
    ok = True
    if vt.LOADED:
        snap = vt.dump()
        other = 1 - rank
        nccl = vt.device_bytes(snap, rank, vt.in_module("libnccl"))
        own = vt.device_bytes(snap, rank)
        elsewhere = vt.device_bytes(snap, other)
        print("INFO rank %d: device %d holds %d tracked bytes, %d of them from libnccl stacks; apis=%s"
              % (rank, rank, own, nccl, ",".join(vt.apis(snap))), file=sys.stderr)
        ok &= vt.report(elsewhere == 0, "nccl rank %d: nothing tracked on device %d" % (rank, other), 0, elsewhere)
        ok &= vt.report(nccl > 0 and nccl <= own, "nccl rank %d: NCCL buffers on device %d" % (rank, rank), own, nccl)
    print("rank %d value %.1f" % (rank, value))
    dist.destroy_process_group()
    return 0 if ok and value == 3.0 else 1


if __name__ == "__main__":
    sys.exit(main())
