"""What tutorials print about a network: its graph through grad_fn.next_functions, and whole-model
pickling with torch.save(model) / torch.load(weights_only=False); indexing with a Python range."""

import io

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10, bias=False)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


net = Net()
print(net)
x = torch.randn(1, 1, 32, 32)
output = net(x)
target = torch.randn(10).view(1, -1)
loss = nn.MSELoss()(output, target)
print(loss.grad_fn)
print(loss.grad_fn.next_functions[0][0])
print(loss.grad_fn.next_functions[0][0].next_functions[0][0])


def walk(fn, depth=0):
    print("  " * depth + (fn.name() if fn is not None else "None"))
    if fn is not None and depth < 5:
        for nxt, _ in fn.next_functions:
            walk(nxt, depth + 1)


walk(loss.grad_fn)
net.zero_grad()
loss.backward()
print("conv1.bias.grad", net.conv1.bias.grad)

seq = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.LayerNorm(8), nn.Linear(8, 2))
buf = io.BytesIO()
torch.save(seq, buf)
buf.seek(0)
loaded = torch.load(buf, weights_only=False)
print(type(loaded), type(loaded[0]), loaded)
inp = torch.randn(3, 4)
print(torch.equal(seq(inp), loaded(inp)))
print(nn.modules.linear.Linear is nn.Linear, nn.modules.activation.ReLU.__module__)

rows = torch.arange(20.0).view(5, 4)
print(rows[range(1, 4)], rows[:, range(0, 4, 2)])
