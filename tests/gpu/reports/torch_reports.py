#!/usr/bin/env python3
"""PyTorch under vramtrace: the report triggers and what the reports hold, checked against
PyTorch's own figures (default caching allocator unless PYTORCH_CUDA_ALLOC_CONF says otherwise).

stdout: the losses, as float.hex(), so the caller can check they are bit-identical traced and
untraced. stderr: PASS/FAIL lines (only when libvramtrace.so is loaded). Exit status 0, or 1 when
a check failed; the same with and without vramtrace.

Environment: VT_SIGNAL (signal number vramtrace dumps on), VT_SIGNAL_FILE, VT_OOM_FILE (where the
signal and OOM snapshots are expected)."""
import ctypes
import json
import os
import signal
import sys
import time

import torch

PROCESS = ctypes.CDLL(None)
LOADED = hasattr(PROCESS, "vramtrace_mark")
ASYNC = "cudaMallocAsync" in os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
COUNTED = {"device", "managed", "vmm_physical"}
failures = 0


def check(ok, text):
    global failures
    failures += 0 if ok else 1
    print("%s %s" % ("PASS" if ok else "FAIL", text), file=sys.stderr)


def mark(label):
    if LOADED:
        PROCESS.vramtrace_mark(label.encode())


def dump(path):
    rc = PROCESS.vramtrace_dump(path.encode())
    check(rc == 0, "vramtrace_dump(%s) returned %d" % (os.path.basename(path), rc))
    return json.load(open(path))


def owners(snap):
    """stack id -> 'torch' (through c10's caching allocator), 'cublas' or 'other'."""
    modules = [os.path.basename(m["path"]) for m in snap["modules"]]
    frames = snap["frames"]
    out = {}
    for s in snap["stacks"]:
        fns = [frames[i]["function"] for i in s["frames"]]
        mods = [modules[frames[i]["module"]] if frames[i]["module"] >= 0 else "" for i in s["frames"]]
        if any("CUDACachingAllocator" in f or "CudaMallocAsync" in f for f in fns):
            out[s["id"]] = "torch"
        elif any(m.startswith("libcublas") for m in mods):
            out[s["id"]] = "cublas"
        else:
            out[s["id"]] = "other"
    return out


def live_split(snap, device):
    own = owners(snap)
    split = {"torch": 0, "cublas": 0, "other": 0}
    for a in snap["allocations"]:
        if a["device"] == device and a["kind"] in COUNTED:
            split[own.get(a["stack"], "other")] += a["size"]
    return split


def wait_for(path, seconds=20):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if os.path.exists(path):
            return True
        time.sleep(0.05)
    return False


def train(model, opt, x, y, steps, first):
    for step in range(first, first + steps):
        mark("step %d" % step)
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        print("step %d loss %s" % (step, loss.item().hex()), flush=True)


def main():
    torch.manual_seed(0)
    dev = torch.cuda.current_device()
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(),
                                torch.nn.Linear(4096, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(512, 1024, device="cuda")
    y = torch.randint(0, 10, (512,), device="cuda")
    train(model, opt, x, y, 3, 0)
    big = torch.empty(2 << 30, dtype=torch.uint8, device="cuda")  # crosses a 1 GiB threshold
    big.fill_(1)
    torch.cuda.synchronize()
    del big  # the caching allocator keeps the 2 GiB segment as reserved but unused
    train(model, opt, x, y, 2, 3)
    torch.cuda.synchronize()
    out_dir = os.path.dirname(os.environ.get("VT_OOM_FILE", "/tmp/x"))

    prom = os.environ.get("VT_PROM_FILE")
    if LOADED and prom:
        # Written every VRAMTRACE_PROMETHEUS_PERIOD (1 s here) while the process runs; removed at exit.
        time.sleep(1.5)
        got = wait_for(prom)
        text = open(prom).read() if got else ""
        line = [l for l in text.splitlines() if l.startswith('vramtrace_device_current_bytes{device="0"')]
        mode = oct(os.stat(prom).st_mode & 0o777) if got else None
        check(got and bool(line) and mode == "0o644", "prometheus textfile (mode %s): %s" % (mode, line[:1]))

    if LOADED and not ASYNC:
        # Peak composition: the allocator only grows here, so at the tracked peak its segments
        # equal max_memory_reserved() and everything else is cuBLAS's own workspace.
        snap = dump(os.path.join(out_dir, "checkpoint.json"))
        own = owners(snap)
        peak = [p for p in snap.get("peaks", []) if p["device"] == dev]
        check(len(peak) == 1, "peaks: one entry for device %d" % dev)
        if peak:
            p = peak[0]
            sites = sum(s["bytes"] for s in p["sites"])
            check(sites == p["peak_bytes"], "peak composition: sum of sites %d == peak_bytes %d" % (sites, p["peak_bytes"]))
            by_owner = {"torch": 0, "cublas": 0, "other": 0}
            for s in p["sites"]:
                by_owner[own.get(s["stack"], "other")] += s["bytes"]
            check(by_owner["torch"] == torch.cuda.max_memory_reserved(),
                  "peak composition: allocator part %d == torch.cuda.max_memory_reserved() %d (cuBLAS %d, other %d)"
                  % (by_owner["torch"], torch.cuda.max_memory_reserved(), by_owner["cublas"], by_owner["other"]))
            check(by_owner["other"] == 0, "peak composition: nothing unattributed (%d)" % by_owner["other"])
        labels = [e["label"] for e in snap.get("events", []) if e["type"] == "mark"]
        check(labels == ["step %d" % i for i in range(5)], "marks in the event history in order: %s" % labels)

    if LOADED and os.environ.get("VT_SIGNAL"):
        reserved = torch.cuda.memory_reserved()
        os.kill(os.getpid(), int(os.environ["VT_SIGNAL"]))
        path = os.environ["VT_SIGNAL_FILE"]
        got = wait_for(path)
        check(got, "signal: snapshot %s written while the program runs" % os.path.basename(path))
        if got and not ASYNC:
            time.sleep(0.5)  # the rename is atomic; the file is complete once it exists
            split = live_split(json.load(open(path)), dev)
            check(split["torch"] == reserved, "signal snapshot: allocator bytes %d == memory_reserved() %d"
                  % (split["torch"], reserved))

    # Out of memory: PyTorch frees its cache and retries right after the first failure, so only a
    # report made inside the failing call shows the 2 GiB cached segment.
    reserved_before = torch.cuda.memory_reserved()
    total = torch.cuda.mem_get_info()[1]
    request = 200 << 30
    try:
        torch.empty(request, dtype=torch.uint8, device="cuda")
        check(False, "oom: 200 GiB allocation unexpectedly succeeded")
    except torch.OutOfMemoryError as e:
        print("torch said: %s" % str(e).splitlines()[0], file=sys.stderr)
    reserved_after = torch.cuda.memory_reserved()
    if LOADED:
        path = os.environ["VT_OOM_FILE"]
        got = wait_for(path)
        check(got, "oom: snapshot %s written" % os.path.basename(path))
        if got:
            time.sleep(0.5)
            snap = json.load(open(path))
            o = snap["ooms"][0] if snap.get("ooms") else {}
            api = "cudaMallocAsync" if ASYNC else "cudaMalloc"
            check(o.get("requested_bytes") == request and o.get("device") == dev and o.get("api") == api,
                  "oom: failing request %s bytes on device %s via %s (want %d, %d, %s)"
                  % (o.get("requested_bytes"), o.get("device"), o.get("api"), request, dev, api))
            check(o.get("device_total_bytes") == total, "oom: device total %s == mem_get_info total %d"
                  % (o.get("device_total_bytes"), total))
            if not ASYNC:
                split = live_split(snap, dev)
                check(split["torch"] == reserved_before,
                      "oom snapshot: allocator bytes %d == memory_reserved() before the failing call %d "
                      "(after PyTorch's retry: %d)" % (split["torch"], reserved_before, reserved_after))
    train(model, opt, x, y, 2, 5)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
