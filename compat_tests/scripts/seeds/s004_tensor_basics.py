"""Seed 004, "Tensor Basics": creation, in-place ops, slicing, item, view, NumPy, requires_grad."""

import numpy as np
import torch

torch.manual_seed(42)

print(torch.empty(2, 3).shape)
print(torch.ones(2, 3))
print(torch.zeros(2, 2, 2))
x = torch.rand(2, 2)
y = torch.rand(2, 2)
print(x, y)

z = torch.tensor([2.5, 0.1])
print(z)

y.add_(x)  # trailing underscore: in place
print(y)
y.sub_(x)
y.mul_(2)
print(y)

x = torch.rand(5, 3)
print(x[:, 0])
print(x[1, :])
print(x[1, 1])
print(x[1, 1].item())

x = torch.rand(2, 2)
print(x.view(4, -1))
print(x.view(4, -1).shape)

a = torch.ones(5)
b = a.numpy()
print(type(b), b)
a += 1
print(b)

a = np.ones(5)
b = torch.from_numpy(a)
a += 1
print(b)

x = torch.ones(5, requires_grad=True)
print(x)

print(torch.tensor([1.0, 2.0]) * torch.tensor([3.0, 4.0]))
print(torch.tensor([1, 2], dtype=torch.float16), torch.tensor([1, 2], dtype=torch.int32))
