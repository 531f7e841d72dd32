#!/usr/bin/env python3
"""JAX under vramtrace: prints (INFO) the live arrays' bytes and what vramtrace tracks, with
XLA_PYTHON_CLIENT_ALLOCATOR=platform (a device allocation per buffer) or the default
preallocation (one large block). JAX reaches the driver by plain dlsym of the VMM functions.
usage: jax_platform.py platform|preallocate"""
import sys

import jax
import jax.numpy as jnp

import vt_snapshot as vt


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
    # No exact oracle is known for XLA's own buffers: print what was seen for the record.
    print("INFO jax %s: live arrays %d bytes, tracked %d bytes in %d allocations (largest %s), apis=%s"
          % (mode, live, tracked, len(sizes), sizes[:3], ",".join(vt.apis(snap))), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
