"""Seed 000, "Broadcasting semantic": which shapes broadcast, and the error when they don't."""

import torch

x = torch.ones(5, 7, 3)
y = torch.ones(5, 7, 3)
print((x + y).shape)

x = torch.ones(5, 3, 4, 1)
y = torch.ones(3, 1, 1)
print((x + y).shape)

x = torch.ones(1)
y = torch.ones(3, 1, 7)
print((x + y).shape)

x = torch.ones(5, 2, 4, 1)
y = torch.ones(3, 1, 1)
try:
    x + y
except RuntimeError as e:
    print("RuntimeError:", e)

a = torch.tensor([[1.0], [2.0], [3.0]])
b = torch.tensor([10.0, 20.0])
print(a + b)
print(a * b)
print(torch.arange(3) + torch.arange(3).unsqueeze(1))
