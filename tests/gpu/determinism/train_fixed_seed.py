"""A small PyTorch training loop with a fixed seed and deterministic kernels, for
tests/gpu/run_determinism.sh: prints every step's loss as float.hex() (bit-exact) and a SHA-256 of
the final parameters' bytes, then exits with status EXIT_STATUS (default 7), so that the run can
show that results and exit status are the same with and without vramtrace."""
import hashlib
import os
import sys

import torch

torch.manual_seed(1234)
torch.use_deterministic_algorithms(True)
torch.backends.cudnn.benchmark = False
dev = torch.device("cuda")

model = torch.nn.Sequential(
    torch.nn.Linear(512, 1024), torch.nn.GELU(),
    torch.nn.Linear(1024, 1024), torch.nn.LayerNorm(1024), torch.nn.GELU(),
    torch.nn.Linear(1024, 10),
).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
gen = torch.Generator(device="cpu").manual_seed(99)
x_all = torch.randn(64, 256, 512, generator=gen)
y_all = torch.randint(0, 10, (64, 256), generator=gen)

for step in range(64):
    x = x_all[step].to(dev, non_blocking=False)
    y = y_all[step].to(dev)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item().hex()}")

h = hashlib.sha256()
for name, p in sorted(model.state_dict().items()):
    h.update(name.encode())
    h.update(p.detach().cpu().contiguous().numpy().tobytes())
print(f"params sha256 {h.hexdigest()}")
sys.stdout.flush()
sys.exit(int(os.environ.get("EXIT_STATUS", "7")))
