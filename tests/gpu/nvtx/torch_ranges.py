"""NVTX ranges from PyTorch under vramtrace (tests/gpu/run_nvtx.sh), with the cudaMallocAsync
backend, where every tensor is one cudaMallocAsync of its own bytes.

mode "ranges": tensors allocated inside torch.cuda.nvtx.range_push("forward") / ("optimizer") on
the main thread, kept live; a backward pass whose gradients are allocated on PyTorch's autograd
device thread, which has no range open. The snapshot (vramtrace_dump) must show, per range stack,
exactly the bytes this script allocated in it; the gradients under no range, on another thread.
mode "emit_nvtx": the same backward under torch.autograd.profiler.emit_nvtx(): the autograd
thread's own ranges name the aten operators.
Prints PASS/FAIL lines.
"""
import ctypes
import json
import os
import sys
import threading

import torch

mode, snap = sys.argv[1], sys.argv[2]
failures = 0


def check(ok, what):
    global failures
    print(("PASS " if ok else "FAIL ") + what, flush=True)
    failures += 0 if ok else 1


def dump():
    rc = ctypes.CDLL(None).vramtrace_dump(snap.encode())
    check(rc == 0, f"vramtrace_dump returned {rc}")
    with open(snap) as f:
        return json.load(f)


def label(s, rid):
    if rid == 0:
        return ""
    for r in s.get("nvtx_ranges", []):
        if r["id"] == rid:
            return " > ".join((d + ":" if d else "") + n for d, n in zip(r["domains"], r["names"]))
    return "?"


torch.cuda.init()
main_tid = threading.get_native_id()
keep = []
expected = {"forward": 0, "optimizer": 0}
torch.cuda.synchronize()

if mode == "ranges":
    torch.cuda.nvtx.range_push("forward")
    for n in (3 << 20, (1 << 20) + 512, 4096 * 7):
        keep.append(torch.empty(n, dtype=torch.uint8, device="cuda"))
        expected["forward"] += n
    torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.range_push("optimizer")
    for n in (5 << 20, 12345 * 8):
        keep.append(torch.empty(n, dtype=torch.uint8, device="cuda"))
        expected["optimizer"] += n
    torch.cuda.nvtx.range_pop()
    w = torch.randn(256, 256, device="cuda", requires_grad=True)
    x = torch.randn(64, 256, device="cuda")
    torch.cuda.synchronize()
    loss = (x @ w).square().sum()
    loss.backward()  # w.grad: allocated on the autograd device thread
    torch.cuda.synchronize()
    s = dump()
    live = {}
    for a in s["allocations"]:
        if a["kind"] != "device":
            continue
        key = label(s, a.get("range", 0))
        live[key] = live.get(key, 0) + a["size"]
    for name, want in expected.items():
        check(live.get(name, 0) == want, f"range {name}: {live.get(name, 0)} B live, the script allocated {want} B")
    grad_ptr = w.grad.data_ptr()
    grads = [a for a in s["allocations"] if int(a["address"], 16) == grad_ptr]
    check(len(grads) == 1, "w.grad is one live allocation")
    if grads:
        g = grads[0]
        check(g.get("range", 0) == 0, f"w.grad is under (no range): {label(s, g.get('range', 0))!r}")
        check(g["thread_id"] != main_tid, f"w.grad was allocated on thread {g['thread_id']}, not main {main_tid}")
        check(g["size"] == w.grad.untyped_storage().nbytes(), f"w.grad size {g['size']}")
    peak = s["peaks"][0]
    check(sum(r["bytes"] for r in peak.get("ranges", [])) == peak["peak_bytes"], "peak by range sums to the peak")
else:
    w = torch.randn(512, 512, device="cuda", requires_grad=True)
    x = torch.randn(128, 512, device="cuda")
    with torch.autograd.profiler.emit_nvtx():
        loss = torch.nn.functional.gelu(x @ w).sum()
        loss.backward()
    torch.cuda.synchronize()
    keep.append(w.grad)
    s = dump()
    names = {n for r in s.get("nvtx_ranges", []) for n in r["names"]}
    check(any(n.startswith("aten::") for n in names), f"aten ranges named: {sorted(names)[:8]}")
    check(not any(", seq = " in n or "sizes = " in n for n in names), "range names carry no counters")
    other = [a for a in s["allocations"] if a["thread_id"] != main_tid and a.get("range", 0) != 0]
    check(bool(other), "an autograd-thread allocation carries its own aten range: " +
          (label(s, other[0]["range"]) if other else "none"))
    print("ranges:", len(s.get("nvtx_ranges", [])), "dropped:", s["dropped"], flush=True)
print(f"{failures} failure(s)", flush=True)
sys.exit(1 if failures else 0)
