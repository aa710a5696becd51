"""Seed 001, "Tensor -- Constructor": from a list, from NumPy, zeros, ones."""

import numpy as np
import torch

x = torch.tensor([[1, -1], [-1, 1]])
print(x)
print(x.dtype, x.shape)

x = torch.from_numpy(np.array([[1, -1], [-1, 1]]))
print(x)
print(x.dtype, x.shape)

x = torch.zeros([2, 2])
print(x)
print(x.dtype)

x = torch.ones([1, 2, 5])
print(x)
print(x.shape, x.size(), x.dim(), x.numel())
