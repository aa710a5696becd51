"""Seed 002, "Getting Started" and "Common Operations"."""

import torch

vector = torch.tensor([7, 7])
print(vector.shape)
print(vector)

matrix = torch.tensor([[7, 7], [7, 7]])
print(matrix.shape)
print(matrix)

x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
y = torch.tensor([[6.0, 5.0, 4.0], [3.0, 2.0, 1.0]])
print(x + y)
print(x - y)
print(x / y)
print(x * y)
print(x @ y.transpose(0, 1))
print(torch.matmul(x, y.T))

print(x.transpose(0, 1))
print(x.unsqueeze(1).shape)
print(x.unsqueeze(1).squeeze(1).shape)
z = torch.ones([2, 1])
print(torch.cat([x, y, z], dim=1))
