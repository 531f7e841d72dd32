#!/usr/bin/env python3
"""JAX under vramtrace, checked against exact oracles (below) with
XLA_PYTHON_CLIENT_ALLOCATOR=platform (a device allocation per buffer) or the default
preallocation (one large block). JAX reaches the driver by plain dlsym of the VMM functions.
usage: jax_platform.py platform|preallocate"""
import sys

import jax
import jax.numpy as jnp

import vt_snapshot as vt


def stack_functions(snap):
    frames = snap["frames"]
    return {s["id"]: [frames[i]["function"] for i in s["frames"]] for s in snap["stacks"]}


def vmm_granularity(device):
    """cuMemGetAllocationGranularity (minimum) for pinned device memory, asked through ctypes."""
    import ctypes

    class Location(ctypes.Structure):
        _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]

    class Flags(ctypes.Structure):
        _fields_ = [("compressionType", ctypes.c_ubyte), ("gpuDirectRDMACapable", ctypes.c_ubyte),
                    ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 4)]

    class Prop(ctypes.Structure):
        _fields_ = [("type", ctypes.c_int), ("requestedHandleTypes", ctypes.c_int), ("location", Location),
                    ("win32HandleMetaData", ctypes.c_void_p), ("allocFlags", Flags)]

    cuda = ctypes.CDLL("libcuda.so.1")
    prop = Prop(type=1, location=Location(type=1, id=device))  # PINNED, LOCATION_TYPE_DEVICE
    g = ctypes.c_size_t(0)
    rc = cuda.cuMemGetAllocationGranularity(ctypes.byref(g), ctypes.byref(prop), 0)  # MINIMUM
    if rc != 0:
        raise RuntimeError("cuMemGetAllocationGranularity returned %d" % rc)
    return g.value


def main():
    mode = sys.argv[1]
    xs = [jnp.ones((n,), dtype=jnp.float32) for n in (1 << 10, 1 << 18, 3 << 20)]
    y = (xs[2] * 2.0).block_until_ready()
    print("sum %.1f" % float(y.sum()))
    if not vt.LOADED:
        return 0
    snap = vt.dump()
    dev = 0
    tracked = vt.device_bytes(snap, dev)
    live = sum(a.nbytes for a in jax.live_arrays())
    sizes = sorted((a["size"] for a in snap["allocations"] if a["device"] == dev), reverse=True)
    # Diagnostic detail, to choose an exact oracle: each tracked allocation with its kind, API and
    # the first frames of its stack (module:function), and what JAX says about its memory.
    if len(sys.argv) > 2 and sys.argv[2] == "--detail":
        modules = [m["path"].rsplit("/", 1)[-1] for m in snap["modules"]]
        frames = snap["frames"]
        stacks = {s["id"]: s for s in snap["stacks"]}
        for a in snap["allocations"]:
            st = stacks.get(a["stack"], {"frames": []})
            names = ["%s:%s" % (modules[frames[i]["module"]] if frames[i]["module"] >= 0 else "?",
                                frames[i]["function"][:60]) for i in st["frames"][:12]]
            print("DETAIL %d %s %s dev %d | %s" % (a["size"], a["kind"], a["api"], a["device"], " <- ".join(names)), file=sys.stderr)
        print("DETAIL memory_stats %s" % (jax.devices()[0].memory_stats(),), file=sys.stderr)
        print("DETAIL live arrays %s" % ([a.nbytes for a in jax.live_arrays()],), file=sys.stderr)
    # The oracles (found by reading the stacks on the H200, see docs/coverage.md):
    #  platform: XLA asks the VMM API for each buffer (StreamExecutorMemoryAllocator -> cuMemCreate),
    #    rounded up to the allocation granularity, so the physical bytes behind that allocator equal
    #    the live arrays' sizes each rounded up to the granularity the driver reports;
    #  preallocate: the BFC allocator takes one block (BFCAllocator::Extend -> cuMemCreate) of
    #    exactly memory_stats()["pool_bytes"].
    # Everything else tracked on the device must be cuDNN's own handle memory (cudnnCreate).
    stacks = stack_functions(snap)
    def through(a, text):
        return any(text in f for f in stacks.get(a["stack"], []))
    on_dev = [a for a in snap["allocations"] if a["device"] == dev and a["kind"] in vt.COUNTED_KINDS]
    if mode == "platform":
        g = vmm_granularity(dev)
        want = sorted(-(-a.nbytes // g) * g for a in jax.live_arrays())
        got = sorted(a["size"] for a in on_dev if through(a, "StreamExecutorMemoryAllocator"))
        ok = want == got
        print("%s jax platform: per-buffer VMM allocations %s == live arrays rounded to the %d-byte granularity %s"
              % ("PASS" if ok else "FAIL", got, g, want), file=sys.stderr)
        ours = sum(got)
    else:
        pool = jax.devices()[0].memory_stats()["pool_bytes"]
        got = [a["size"] for a in on_dev if through(a, "BFCAllocator")]
        ok = got == [pool]
        print("%s jax preallocate: one BFC block %s == memory_stats pool_bytes %d"
              % ("PASS" if ok else "FAIL", got, pool), file=sys.stderr)
        ours = sum(got)
    rest = [a for a in on_dev if not through(a, "StreamExecutorMemoryAllocator") and not through(a, "BFCAllocator")]
    cudnn = sum(a["size"] for a in rest if through(a, "cudnnCreate"))
    other = sum(a["size"] for a in rest) - cudnn
    ok2 = other == 0 and tracked == ours + cudnn
    print("%s jax %s: tracked %d = XLA %d + cuDNN's own %d (other %d)" % ("PASS" if ok2 else "FAIL", mode, tracked, ours, cudnn, other),
          file=sys.stderr)
    print("INFO jax %s: live arrays %d bytes, tracked %d bytes in %d allocations (largest %s), apis=%s"
          % (mode, live, tracked, len(sizes), sizes[:3], ",".join(vt.apis(snap))), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
