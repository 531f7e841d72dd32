#!/usr/bin/env python3
"""Checks a checkpoint of torch_categories.py against what the script knew (its .truth.json).

every-tensor modes (PYTORCH_NO_CUDA_MEMORY_CACHING=1, backend:cudaMallocAsync): the live bytes on
the device whose stacks vramtrace's frame rules call `parameter` equal the bytes of the model's
parameters and buffers, `optimizer_state` the optimizer's state tensors, `backward` the gradients
(nothing else made by the backward pass is alive after the step), and the categories together
are every live byte.

caching mode (default allocator): the call sites of `vramtrace summary` are the script's lines with
the PyTorch entry they went through, the autograd nodes and the library calls listed below.

Usage: check_categories.py SNAPSHOT TRUTH [SUMMARY_TEXT]   (exit 1 when a check fails)"""
import json
import sys

CACHING_SITES = [
    "torch_categories.py:47 (python) via at::cuda::getCUDABlasLtWorkspace",
    "torch_categories.py:49 (python) via torch.optim.adam.Adam.step",
    "torch_categories.py:41 (python) via torch.nn.modules.module.Module.cuda",
    "torch_categories.py:47 (python) via torch.nn.modules.container.Sequential.forward",
    "cublasCreate_v2 (libcublas.so.13) [no Python frames]",
    "AddmmBackward0 (libtorch_cpu.so) [no Python frames]",
]


def main():
    snap = json.load(open(sys.argv[1]))
    truth = json.load(open(sys.argv[2]))
    mode = truth["mode"]
    ok = True

    def check(cond, text):
        nonlocal ok
        ok &= bool(cond)
        print("%s %s: %s" % ("PASS" if cond else "FAIL", mode, text))

    category = {s["id"]: s.get("category", "") for s in snap["stacks"]}
    by_category = {}
    live = 0
    for a in snap["allocations"]:
        if a["device"] < 0 or a["kind"] != "device":
            continue
        c = category.get(a["stack"], "")
        by_category[c] = by_category.get(c, 0) + a["size"]
        live += a["size"]
    known = {k: sum(n for _, n in truth[k]) for k in ("parameters", "optimizer_state", "gradients")}
    print("INFO %s: live %d by category %s; script: %s" % (mode, live, json.dumps(by_category, sort_keys=True),
                                                         json.dumps(known, sort_keys=True)))
    check("" not in by_category, "every stack has a category")
    check(sum(by_category.values()) == live, "the categories add up to the %d live bytes" % live)
    if mode == "torch_default":
        summary = open(sys.argv[3]).read()
        for site in CACHING_SITES:
            check(site in summary, "call site '%s'" % site)
        check("CUDACachingAllocator" not in summary, "no call site inside the caching allocator")
        check("a segment has the category of the request that created it" in summary, "the caching caveat is printed")
    else:
        check(by_category.get("parameter", 0) == known["parameters"],
              "parameter %d == the model's parameters and buffers %d" % (by_category.get("parameter", 0), known["parameters"]))
        check(by_category.get("optimizer_state", 0) == known["optimizer_state"],
              "optimizer_state %d == the optimizer's state %d" % (by_category.get("optimizer_state", 0), known["optimizer_state"]))
        check(by_category.get("backward", 0) == known["gradients"],
              "backward %d == the gradients %d" % (by_category.get("backward", 0), known["gradients"]))
        rest = live - known["parameters"] - known["optimizer_state"]
        others = sum(v for k, v in by_category.items() if k not in ("parameter", "optimizer_state"))
        check(others == rest, "activation + backward + library_workspace + other = %d = the rest of the live bytes %d" % (others, rest))
        check(by_category.get("library_workspace", 0) > 0, "cuBLAS/cuDNN workspaces are library_workspace")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
