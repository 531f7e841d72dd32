#!/usr/bin/env python3
"""CuPy under vramtrace: with the default memory pool, tracked device bytes == the pool's
total_bytes(); with MemoryAsyncPool (cudaMallocFromPoolAsync / cudaMallocAsync), tracked device bytes
from CuPy's stacks == the bytes CuPy's arrays hold (used_bytes()).
usage: cupy_pools.py default|async"""
import sys

import cupy as cp

import vt_snapshot as vt


def main():
    mode = sys.argv[1]
    if mode == "async":
        cp.cuda.set_allocator(cp.cuda.MemoryAsyncPool().malloc)
    arrays = [cp.arange(n, dtype=cp.float32) for n in (1000, 250000, 1 << 20, 3 << 20)]
    s = sum(float(a.sum()) for a in arrays)
    del arrays[1]
    cp.cuda.Device().synchronize()
    print("sum %.1f" % s)
    if not vt.LOADED:
        return 0
    snap = vt.dump()
    tracked = vt.device_bytes(snap, cp.cuda.Device().id)
    if mode == "default":
        oracle = cp.get_default_memory_pool().total_bytes()
    else:
        oracle = sum(a.data.mem.size for a in arrays)
    ok = vt.report(tracked == oracle, "cupy %s pool" % mode, oracle, tracked, "apis=%s" % ",".join(vt.apis(snap)))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
