"""Seed 003, 60-minute blitz "NumPy Bridge": tensors and arrays share memory both ways."""

import numpy as np
import torch

a = torch.ones(5)
print(a)

b = a.numpy()
print(b)

a.add_(1)
print(a)
print(b)

a = np.ones(5)
b = torch.from_numpy(a)
np.add(a, 1, out=a)
print(a)
print(b)
