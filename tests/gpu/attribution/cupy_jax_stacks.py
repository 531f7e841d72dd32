#!/usr/bin/env python3
"""CuPy or JAX allocations whose stacks the frame rules must attribute: array creation, a cuBLAS
matrix product, an FFT plan. Writes OUT_DIR/NAME.checkpoint.json through vramtrace_dump.
Usage: cupy_jax_stacks.py OUT_DIR cupy|jax"""
import ctypes
import os
import sys

PROCESS = ctypes.CDLL(None)


def dump(out_dir, name):
    if hasattr(PROCESS, "vramtrace_dump"):
        rc = PROCESS.vramtrace_dump(os.path.join(out_dir, name + ".checkpoint.json").encode())
        print("INFO %s: vramtrace_dump returned %d" % (name, rc), file=sys.stderr)


def cupy_run(out_dir):
    import cupy as cp
    a = cp.arange(1 << 20, dtype=cp.float32).reshape(1024, 1024)
    b = a @ a
    f = cp.fft.fft(cp.arange(1 << 16, dtype=cp.complex64))
    cp.cuda.Device().synchronize()
    print("cupy %.1f %.1f" % (float(b[0, 0]), float(abs(f[1]))))
    dump(out_dir, "cupy")


def jax_run(out_dir):
    import jax
    import jax.numpy as jnp
    a = jnp.ones((1024, 1024), dtype=jnp.float32)
    b = jnp.dot(a, a)
    f = jnp.fft.fft(jnp.arange(1 << 16, dtype=jnp.complex64))
    b.block_until_ready()
    print("jax %.1f %.1f" % (float(b[0, 0]), float(abs(f[1]))))
    dump(out_dir, "jax")


if __name__ == "__main__":
    {"cupy": cupy_run, "jax": jax_run}[sys.argv[2]](sys.argv[1])
