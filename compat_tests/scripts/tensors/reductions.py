"""Reductions over all elements and along dimensions."""

import torch

x = torch.tensor([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
print(x.sum(), x.sum(0), x.sum(dim=1), x.sum(1, keepdim=True))
print(x.mean(), x.mean(0), x.mean(dim=-1, keepdim=True))
print(x.prod(), x.prod(1))
print(x.max(), x.min(), x.argmax(), x.argmin())
print(x.max(dim=1))
values, indices = x.min(0)
print(values, indices)
print(x.std(), x.var(), x.std(dim=0), x.var(1, unbiased=False))
print(x.norm(), x.cumsum(1), x.cumprod(0))
print(torch.tensor([1, 2, 3]).sum(), torch.tensor([1, 2, 3]).sum().dtype)
print(torch.tensor([True, True, False]).sum())
print(torch.tensor([[True, False], [True, True]]).all(), torch.tensor([False, True]).any())
print(x.sum().item(), x.mean().item())
print(torch.tensor([[1, 2], [3, 4]]).float().mean(1))
