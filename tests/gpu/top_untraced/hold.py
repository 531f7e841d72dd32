# Holds a tensor on cuda:0 until GO exists: one process of run_top_untraced.sh (traced or not).
#   python3 hold.py READY GO MIB
import os
import sys
import time

import torch

ready, go, mib = sys.argv[1], sys.argv[2], int(sys.argv[3])
t = torch.empty(mib << 20, dtype=torch.uint8, device="cuda:0")
t.fill_(1)
torch.cuda.synchronize()
with open(ready + ".tmp", "w") as f:
    f.write("%d\n" % os.getpid())
os.rename(ready + ".tmp", ready)
while not os.path.exists(go):
    time.sleep(0.05)
print("held", t.numel())
