"""Indexing, slicing and assignment through indices."""

import torch

x = torch.arange(12).reshape(3, 4)
print(x)
print(x[0], x[-1], x[1, 2], x[:, 1], x[1:, ::2], x[..., -1])
print(x[None].shape, x[:, None].shape)
print(x[x > 5])
print(x[[0, 2]])
print(x[[0, 2], [1, 3]])
print(x[torch.tensor([2, 0])])
mask = torch.tensor([True, False, True])
print(x[mask])

y = torch.zeros(3, 4)
y[0] = 1
y[1, 1:3] = torch.tensor([5.0, 6.0])
y[:, -1] = -1
y[y == 0] = 9
print(y)

z = torch.arange(6.0)
view = z[2:5]
view[0] = 100
print(z)
print(x.flatten()[3:7])
