"""Pointwise math on float tensors."""

import torch

x = torch.tensor([-2.0, -0.5, 0.0, 0.5, 2.0])
print(x.abs(), torch.abs(x))
print(x.exp())
print(x.sigmoid(), torch.tanh(x), torch.relu(x))
print(x.clamp(-1, 1), x.clamp(min=0), torch.clamp(x, max=0.2))
print(x.sign(), x.neg(), -x)
print(x**2, x.square(), 2**x)
p = torch.tensor([0.25, 1.0, 4.0, 9.0])
print(p.sqrt(), p.rsqrt(), p.log(), p.log2(), p.log10(), torch.log1p(p))
print(torch.sin(p), torch.cos(p))
print(torch.floor(x), torch.ceil(x), torch.round(x), torch.trunc(x))
print(torch.tensor([1.0, 2.0]) / torch.tensor([0.0, 0.0]))
print(torch.tensor([0.0]) / torch.tensor([0.0]))
print(torch.maximum(x, torch.zeros(5)), torch.minimum(x, torch.zeros(5)))
print(torch.where(x > 0, x, torch.zeros(5)))
print(x.reciprocal())
print(torch.remainder(torch.tensor([-3, -1, 2, 5]), 3), torch.fmod(torch.tensor([-3.0, 5.0]), 3))
print(torch.tensor([1e-8, 1.0, 1e8]))
print(torch.tensor([1e-3, 1e2]), torch.tensor([123456.0, 0.5]))
