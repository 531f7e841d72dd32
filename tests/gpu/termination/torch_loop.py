# A PyTorch loop that holds known tensors and waits to be interrupted, for
# tests/gpu/run_termination.sh:  python3 torch_loop.py READY_FILE
# Holds 2 "parameter" tensors of 64 MiB (line "# @params") and adds one 32 MiB "cache" tensor per
# step for 8 steps (line "# @cache"), each its own caching-allocator segment; prints
# "held NAME BYTES" for both, writes its pid to READY_FILE, then sleeps until a signal (at most
# 60 s). Nothing is freed, so the live set at any signal is exactly what it printed.
import os
import sys
import time

import torch

MiB = 1 << 20
params = [torch.empty(64 * MiB, dtype=torch.uint8, device="cuda") for _ in range(2)]  # @params
cache = []
for step in range(8):
    cache.append(torch.empty(32 * MiB, dtype=torch.uint8, device="cuda"))  # @cache
torch.cuda.synchronize()
print("held params %d" % (2 * 64 * MiB), flush=True)
print("held cache %d" % (8 * 32 * MiB), flush=True)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d\n" % os.getpid())
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(60)
