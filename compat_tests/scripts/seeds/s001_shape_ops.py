"""Seed 001, "Tensor -- Operators": squeeze, unsqueeze, transpose, cat."""

import torch

x = torch.zeros([1, 2, 3])
print(x.shape)
x = x.squeeze(0)
print(x.shape)

x = torch.zeros([2, 3])
print(x.shape)
x = x.unsqueeze(1)
print(x.shape)

x = torch.zeros([2, 3])
print(x.shape)
x = x.transpose(0, 1)
print(x.shape)

x = torch.zeros([2, 1, 3])
y = torch.zeros([2, 3, 3])
z = torch.zeros([2, 2, 3])
w = torch.cat([x, y, x, z], dim=1)
print(w.shape)

a = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
print(a.transpose(0, 1))
print(a.unsqueeze(0))
print(a.unsqueeze(0).squeeze(0))
print(torch.cat([a, a], dim=0))
print(torch.cat([a, a], dim=1))
