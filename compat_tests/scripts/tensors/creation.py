"""Creation functions and their default dtypes."""

import torch

print(torch.arange(5))
print(torch.arange(1, 4, 0.5))
print(torch.arange(0, 1, 0.25, dtype=torch.float64))
print(torch.linspace(0, 1, steps=5))
print(torch.eye(3))
print(torch.full((2, 3), 7))
print(torch.full((2, 3), 7.5))
print(torch.zeros(2, 3, dtype=torch.int32))
print(torch.ones(3, dtype=torch.bool))
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
print(torch.zeros_like(x), torch.ones_like(x), torch.full_like(x, 3))
print(torch.empty_like(x).shape)
print(torch.tensor(3.5), torch.tensor(3), torch.tensor(True), torch.tensor([]))
print(torch.tensor([1, 2.0]), torch.tensor([True, False]), torch.tensor([[1], [2]]).dtype)
print(torch.tensor([1.5, 2.5], dtype=torch.float64))
print(torch.as_tensor([1, 2, 3]))
print(torch.zeros(0, 3), torch.zeros(0, 3).shape)
print(torch.get_default_dtype())
