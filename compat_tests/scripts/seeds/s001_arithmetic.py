"""Seed 001: addition, subtraction, power, summation, mean; the PyTorch vs NumPy attribute table."""

import torch

x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
y = torch.tensor([[0.5, -1.0], [2.0, 0.25]])

z = x + y
print(z)
z = x - y
print(z)
y2 = x.pow(2)
print(y2)
print(x.sum())
print(x.mean())

print(x.shape)
print(x.dtype)
print(x.reshape(4))
print(x.view(1, 4))
print(x.view(1, 4).squeeze())
print(x.unsqueeze(1))
print(x.unsqueeze(1).shape)

x = x.to("cpu")
print(x.device)
print(torch.cuda.is_available())
