"""Seed 002, "Module": the example CNN, run forward on a seeded batch."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.mp = nn.MaxPool2d(2)
        self.fc = nn.Linear(320, 10)

    def forward(self, x):
        in_size = x.size(0)
        x = F.relu(self.mp(self.conv1(x)))
        x = F.relu(self.mp(self.conv2(x)))
        x = x.view(in_size, -1)  # flatten the tensor
        x = self.fc(x)
        return F.log_softmax(x, dim=1)


torch.manual_seed(0)
model = Net()
print(model)
print(sum(p.numel() for p in model.parameters()))
x = torch.randn(2, 1, 28, 28)
out = model(x)
print(out.shape)
print(out)
print(out.exp().sum(1))
