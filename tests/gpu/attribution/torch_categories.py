#!/usr/bin/env python3
"""A small training loop whose memory categories are known, for the frame rules (docs/attribution.md).

At a checkpoint (after the optimizer's step of step 2, before zero_grad) the script writes, beside
the snapshot it asks vramtrace for (vramtrace_dump), what it knows itself: the device pointer and
bytes of every parameter and buffer, of every optimizer state tensor and of every gradient. With
PYTORCH_NO_CUDA_MEMORY_CACHING=1 or backend:cudaMallocAsync each tensor is its own allocation, so
the snapshot's allocations at those pointers must carry the categories parameter, optimizer_state
and backward (gradients), and their bytes are the script's own figures (storage bytes, rounded up
to the allocator's 512-byte granularity where the caching allocator rounds).

Usage: torch_categories.py OUT_DIR MODE  (MODE names the files: OUT_DIR/MODE.checkpoint.json and
OUT_DIR/MODE.truth.json). Exit status 0; check lines go to stderr."""
import ctypes
import json
import os
import sys

import torch

PROCESS = ctypes.CDLL(None)
LOADED = hasattr(PROCESS, "vramtrace_dump")


def storages(tensors):
    seen = {}
    for t in tensors:
        if t is None or not t.is_cuda:
            continue
        s = t.untyped_storage()
        seen[s.data_ptr()] = s.nbytes()
    return sorted(seen.items())


def main():
    out_dir, mode = sys.argv[1], sys.argv[2]
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3), torch.nn.BatchNorm2d(16), torch.nn.ReLU(), torch.nn.Flatten(),
        torch.nn.Linear(16 * 30 * 30, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    model.cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(64, 3, 32, 32, device="cuda")
    y = torch.randint(0, 10, (64,), device="cuda")
    for step in range(3):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        print("step %d loss %.6f" % (step, loss.item()))
    torch.cuda.synchronize()
    truth = {
        "mode": mode,
        "parameters": storages(list(model.parameters()) + list(model.buffers())),
        "optimizer_state": storages([v for st in opt.state.values() for v in st.values() if torch.is_tensor(v)]),
        "gradients": storages([p.grad for p in model.parameters()]),
        "inputs": storages([x, y]),
    }
    with open(os.path.join(out_dir, mode + ".truth.json"), "w") as f:
        json.dump(truth, f)
    if LOADED:
        rc = PROCESS.vramtrace_dump(os.path.join(out_dir, mode + ".checkpoint.json").encode())
        print("INFO %s: vramtrace_dump returned %d" % (mode, rc), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
