"""The device and setup idioms of current example scripts: torch.accelerator for the device, thread and
determinism settings, a CNN trained with Adadelta and StepLR on MNIST-shaped synthetic data, and a test
loop under a bare @torch.no_grad decorator."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(1)
torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)
print("deterministic:", torch.are_deterministic_algorithms_enabled(), "threads:", torch.get_num_threads())

use_accel = torch.accelerator.is_available()
device = torch.accelerator.current_accelerator() if use_accel else torch.device("cpu")
print("accelerator:", torch.accelerator.current_accelerator(), "device:", device, "count:",
      torch.accelerator.device_count())
print("cuda build:", torch.version.cuda, "hip:", torch.version.hip)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, 1)
        self.conv2 = nn.Conv2d(4, 8, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.fc1 = nn.Linear(8 * 5 * 5, 16)
        self.fc2 = nn.Linear(16, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(self.dropout1(x), 1)
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


images = torch.rand(64, 1, 14, 14)
targets = torch.randint(0, 10, (64,))
train_loader = DataLoader(TensorDataset(images[:48], targets[:48]), batch_size=16, shuffle=True)
test_loader = DataLoader(TensorDataset(images[48:], targets[48:]), batch_size=8)

model = Net().to(device)
optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
scheduler = StepLR(optimizer, step_size=1, gamma=0.7)


def train(epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()
        print(f"Train Epoch: {epoch} [{batch_idx * len(data)}/{len(train_loader.dataset)}]\tLoss: {loss.item():.6f}")


@torch.no_grad
def test():
    model.eval()
    test_loss, correct = 0.0, 0
    for data, target in test_loader:
        output = model(data.to(device))
        test_loss += F.nll_loss(output, target, reduction="sum").item()
        correct += output.argmax(dim=1, keepdim=True).eq(target.view_as(output.argmax(dim=1, keepdim=True))).sum().item()
    n = len(test_loader.dataset)
    print(f"Test set: Average loss: {test_loss / n:.4f}, Accuracy: {correct}/{n} ({100.0 * correct / n:.0f}%)")
    print("grad enabled inside test:", torch.is_grad_enabled())


for epoch in range(1, 3):
    train(epoch)
    test()
    scheduler.step()
print("lr:", scheduler.get_last_lr())
torch.use_deterministic_algorithms(False)
