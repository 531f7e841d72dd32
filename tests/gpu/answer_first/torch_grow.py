#!/usr/bin/env python3
"""A PyTorch training loop whose cache grows every step, for the summary's headline on a real GPU
(tests/gpu/run_answer_first.sh, docs/cli.md "Live at exit").

The model's parameters (4 x 64 MiB) are made before the first vramtrace_mark; then STEPS steps,
each after vramtrace_mark("step K"): a forward and backward pass whose activations are freed, and
one tensor appended to a cache that is never emptied, each larger than the last (64 MiB + K x 2 MiB)
so that no freed block can hold it and the caching allocator reserves a new segment every step.
Prints, from its own frames, the lines the summary must name:
    EXPECT held FILE:LINE     the line that moves the model to the GPU
    EXPECT grew FILE:LINE     the line that appends to the cache
    EXPECT mark step N        the last step, where the peak is
"""
import ctypes
import inspect
import os
import sys

import torch

STEPS = 10
MiB = 1 << 20


def here():
    frame = inspect.currentframe().f_back
    return "%s:%d" % (os.path.basename(frame.f_code.co_filename), frame.f_lineno + 1)


def main():
    mark = getattr(ctypes.CDLL(None), "vramtrace_mark", None)
    if mark is None:
        print("vramtrace is not loaded", file=sys.stderr)
        return 1
    torch.manual_seed(1)
    layers = [torch.nn.Linear(4096, 4096, bias=False) for _ in range(4)]
    held = here()
    model = torch.nn.Sequential(*layers).cuda()
    cache = []
    grew = None
    for step in range(STEPS):
        mark(("step %d" % step).encode())
        x = torch.randn(256, 4096, device="cuda")
        loss = model(x).square().mean()
        loss.backward()
        model.zero_grad(set_to_none=True)
        grew = here()
        cache.append(torch.empty((64 + 2 * step) * MiB, dtype=torch.uint8, device="cuda"))
        del x, loss
    torch.cuda.synchronize()
    # Without PyTorch's cache every tensor is freed back to the driver as the interpreter ends, so
    # nothing of the loop is live at exit: VT_DUMP_AT_END names a snapshot taken here instead.
    end = os.environ.get("VT_DUMP_AT_END")
    if end:
        dump = ctypes.CDLL(None).vramtrace_dump
        dump.argtypes = [ctypes.c_char_p]
        if dump(end.encode()) != 0:
            print("vramtrace_dump failed", file=sys.stderr)
            return 1
    print("EXPECT held %s" % held)
    print("EXPECT grew %s" % grew)
    print("EXPECT mark step %d" % (STEPS - 1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
