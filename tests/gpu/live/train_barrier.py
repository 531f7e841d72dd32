# A small PyTorch training loop (default caching allocator) that stops at a barrier: it prints
# torch.cuda.memory_reserved() and the loop's own source lines (from Python's frames, never from
# vramtrace), writes READY_FILE, then sleeps until GO_FILE exists (at most 300 s). For
# tests/gpu/run_live.sh, which reads it with `vramtrace top` meanwhile.
# Usage: train_barrier.py READY_FILE GO_FILE
import inspect
import os
import sys
import time

import torch
import torch.nn as nn

torch.manual_seed(0)
dev = "cuda"
LINES = {}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(1024, 4096)
        self.fc2 = nn.Linear(4096, 10)

    def forward(self, x):
        LINES["forward"] = inspect.currentframe().f_lineno + 1
        return self.fc2(torch.relu(self.fc1(x)))


model = Net().to(dev)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(30):
    LINES["batch"] = inspect.currentframe().f_lineno + 1
    x = torch.randn(512, 1024, device=dev)
    y = torch.randint(0, 10, (512,), device=dev)
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    LINES["step"] = inspect.currentframe().f_lineno + 1
    opt.step()
torch.cuda.synchronize()
print("reserved %d" % torch.cuda.memory_reserved())
for name in sorted(LINES):
    print("line %s %s:%d" % (name, os.path.abspath(__file__), LINES[name]))
sys.stdout.flush()
with open(sys.argv[1], "w") as f:
    f.write("%d\n" % os.getpid())
deadline = time.time() + 300
while not os.path.exists(sys.argv[2]) and time.time() < deadline:
    time.sleep(0.1)
print("loss", float(loss))
