"""A small CNN with BatchNorm on MNIST-shaped data (1x28x28, 10 classes), as the MNIST examples train one:
random images whose class sets a bright patch, SGD with momentum for a few epochs over a DataLoader,
model.train()/model.eval(), test loss and accuracy after each epoch.

The runs part by more than rounding in the second epoch: max_pool2d windows whose two largest values
lie ~1e-6 apart pick a different winner once float32 rounding (summation order in conv and batch norm)
differs, and the gradient then flows to another pixel (`python -m torchlike compare --trace` shows it).
"""
# compare: --rtol 2e-3 --atol 1e-3

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


def make_data(n):
    labels = torch.randint(0, 10, (n,))
    images = torch.randn(n, 1, 28, 28)
    for c in range(10):
        idx = labels == c
        r, col = 2 + (c // 5) * 12, 2 + (c % 5) * 5
        images[idx, :, r : r + 8, col : col + 4] += 0.4
    return images, labels


train_x, train_y = make_data(512)
test_x, test_y = make_data(256)
train_loader = DataLoader(TensorDataset(train_x, train_y), batch_size=64, shuffle=True)
test_loader = DataLoader(TensorDataset(test_x, test_y), batch_size=128)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(16)
        self.fc1 = nn.Linear(16 * 7 * 7, 32)
        self.bn3 = nn.BatchNorm1d(32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.bn3(self.fc1(x)))
        return F.log_softmax(self.fc2(x), dim=1)


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)


def test():
    model.eval()
    loss, correct = 0.0, 0
    with torch.no_grad():
        for data, target in test_loader:
            output = model(data)
            loss += F.nll_loss(output, target, reduction="sum").item()
            correct += (output.argmax(dim=1) == target).sum().item()
    n = len(test_loader.dataset)
    print(f"test: average loss {loss / n:.4f}, accuracy {correct}/{n} ({100.0 * correct / n:.1f}%)")


for epoch in range(1, 4):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()
        if batch_idx % 4 == 0:
            print(f"epoch {epoch} [{batch_idx * len(data)}/{len(train_loader.dataset)}] loss {loss.item():.4f}")
    test()

print("running mean of bn1", [round(v, 4) for v in model.bn1.running_mean.tolist()])
print("running var of bn3[:4]", [round(v, 4) for v in model.bn3.running_var[:4].tolist()])
print("batches tracked", model.bn2.num_batches_tracked.item())
