"""A small MLP classifier trained with CrossEntropyLoss and SGD with momentum; train/eval modes."""

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
X = torch.randn(32, 4)
labels = (X[:, 0] + X[:, 1] > 0).long()


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 16)
        self.drop = nn.Dropout(0.1)
        self.fc2 = nn.Linear(16, 2)

    def forward(self, x):
        return self.fc2(self.drop(F.relu(self.fc1(x))))


model = MLP()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
criterion = nn.CrossEntropyLoss()
for epoch in range(20):
    model.train()
    opt.zero_grad()
    loss = criterion(model(X), labels)
    loss.backward()
    opt.step()
    if epoch % 5 == 0:
        print(epoch, round(loss.item(), 5))
model.eval()
with torch.no_grad():
    pred = model(X).argmax(dim=1)
print((pred == labels).float().mean())
print(model.state_dict().keys())
