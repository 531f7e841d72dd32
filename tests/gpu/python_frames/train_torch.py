# A small PyTorch training run, then one evaluation step whose Probe.forward makes the largest
# tensor of the run (1 GiB, kept to the end). Prints "EXPECT file:line" for that line, from Python's
# own frame (never from vramtrace). For tests/gpu/run_python_frames.sh, in every allocator mode.
import inspect
import torch
import torch.nn as nn

torch.manual_seed(0)
dev = "cuda"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(512, 2048)
        self.fc2 = nn.Linear(2048, 10)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class Probe(nn.Module):
    def forward(self, h):
        Probe.line = inspect.currentframe().f_lineno + 1
        return torch.einsum("bi,bj->bij", h, h)  # 64 x 2048 x 2048 floats: 1 GiB


def train(model, steps):
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(steps):
        x = torch.randn(256, 512, device=dev)
        y = torch.randint(0, 10, (256,), device=dev)
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()


def evaluate(model, probe):
    with torch.no_grad():
        h = torch.relu(model.fc1(torch.randn(64, 512, device=dev)))
        return probe(h)


model = Net().to(dev)
train(model, 20)
big = evaluate(model, Probe())
torch.cuda.synchronize()
print("EXPECT %s:%d" % (__file__, Probe.line))
print("sum", float(big[0, 0, 0]) * 0)
