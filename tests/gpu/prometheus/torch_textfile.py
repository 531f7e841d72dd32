"""The Prometheus textfile of a PyTorch process on a real GPU, read by the process itself while it
runs (tests/gpu/run_prometheus.sh). With PYTORCH_NO_CUDA_MEMORY_CACHING=1 every tensor is one
cudaMalloc of its exact size, so the call-site series are known: 256 MiB from hold_weights and
64 MiB from hold_activations, at the lines printed as EXPECT. Prints PASS/FAIL lines."""
import os
import re
import sys
import time

import torch

MiB = 1 << 20
path = sys.argv[1].replace("%p", str(os.getpid()))  # this process's textfile
failures = 0


def check(ok, what):
    global failures
    print(("PASS " if ok else "FAIL ") + what, flush=True)
    failures += 0 if ok else 1


def hold_weights():
    line = sys._getframe().f_lineno + 1
    t = torch.empty(256 * MiB, dtype=torch.uint8, device="cuda")
    return t, line


def hold_activations():
    line = sys._getframe().f_lineno + 1
    t = torch.empty(64 * MiB, dtype=torch.uint8, device="cuda")
    return t, line


def read_samples(text):
    out = []
    for line in text.splitlines():
        if line.startswith("#") or not line:
            continue
        m = re.match(r'^([a-z_]+)\{(.*)\} (\S+)$', line)
        if not m:
            check(False, f"a sample line of the exposition format: {line!r}")
            continue
        labels = dict(re.findall(r'([a-z_]+)="((?:[^"\\]|\\.)*)"', m.group(2)))
        out.append((m.group(1), labels, float(m.group(3))))
    return out


w, w_line = hold_weights()
a, a_line = hold_activations()
torch.cuda.synchronize()
me = os.path.abspath(__file__)
text = ""
deadline = time.time() + 30
while time.time() < deadline:
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        text = ""
    if 'function="hold_activations"' in text:
        break
    time.sleep(0.1)
print(text, flush=True)
samples = read_samples(text)


def value(name, **want):
    got = [v for n, l, v in samples if n == name and all(l.get(k) == x for k, x in want.items())]
    return got[0] if len(got) == 1 else None


free, total = torch.cuda.mem_get_info(0)
current = value("vramtrace_device_current_bytes", device="0")
check(value("vramtrace_device_capacity_bytes", device="0") == total, f"capacity == cudaMemGetInfo total ({total})")
check(current is not None and current >= 320 * MiB, f"current bytes {current} hold the two tensors")
used = value("vramtrace_device_nvml_used_bytes", device="0")
untracked = value("vramtrace_device_untracked_bytes", device="0")
check(used is not None and untracked is not None and used - current == untracked and untracked > 0,
      f"NVML used {used} = tracked {current} + untracked {untracked}")
check(value("vramtrace_call_site_live_bytes", device="0", function="hold_weights", file_line=f"{me}:{w_line}") == 256 * MiB,
      f"hold_weights at {me}:{w_line}: 256 MiB")
check(value("vramtrace_call_site_live_bytes", device="0", function="hold_activations", file_line=f"{me}:{a_line}") == 64 * MiB,
      f"hold_activations at {me}:{a_line}: 64 MiB")
sites = sum(v for n, l, v in samples if n == "vramtrace_call_site_live_bytes" and l.get("device") == "0")
check(sites == current, f"device 0's call-site series sum to its current bytes ({sites})")
check(value("vramtrace_process_up") == 1.0, "process_up 1 while it runs")
check(all(l.get("uuid", "").startswith("GPU-") for n, l, v in samples if "device" in l),
      "every device series has the GPU's UUID")
del w, a
sys.exit(1 if failures else 0)
