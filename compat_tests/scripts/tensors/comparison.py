"""Comparisons, logical ops, equality helpers."""

import torch

a = torch.tensor([1.0, 2.0, 3.0, float("nan")])
b = torch.tensor([3.0, 2.0, 1.0, 0.0])
print(a > b, a >= b, a < b, a <= b, a == b, a != b)
print(torch.eq(a, 2), torch.gt(a, 1.5))
print(torch.isnan(a), torch.isfinite(a), torch.isinf(torch.tensor([float("inf"), 1.0])))
print(torch.equal(b, b.clone()), torch.allclose(b, b + 1e-9))
m = torch.tensor([True, False, True])
n = torch.tensor([True, True, False])
print(m & n, m | n, m ^ n, ~m, torch.logical_not(m))
print(torch.tensor([1, 5, 3]).eq(torch.tensor([1, 2, 3])).sum().item())
print(torch.sort(b), torch.topk(b, 2))
print(torch.tensor([3, 1, 2]).argsort())
print(torch.unique(torch.tensor([3, 1, 3, 2, 1])))
