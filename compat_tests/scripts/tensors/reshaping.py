"""Reshaping and joining: reshape, view, permute, flatten, stack, split, chunk, expand, repeat."""

import torch

x = torch.arange(24).reshape(2, 3, 4)
print(x.shape, x.reshape(6, 4).shape, x.view(-1).shape)
print(x.permute(2, 0, 1).shape, x.transpose(1, 2).shape)
print(x.flatten(), x.flatten(1).shape)
print(x.T.shape if x.dim() == 2 else x.mT.shape)
print(torch.stack([torch.ones(2), torch.zeros(2)]))
print(torch.stack([torch.ones(2), torch.zeros(2)], dim=1))
print(torch.arange(10).split(4))
print(torch.arange(10).chunk(3))
print(torch.tensor([1, 2]).expand(3, 2))
print(torch.tensor([1, 2]).repeat(2, 2))
print(torch.tensor([[1], [2]]).squeeze(), torch.tensor([[1], [2]]).unsqueeze(-1).shape)
t = torch.arange(6).reshape(2, 3).t()
print(t, t.is_contiguous(), t.contiguous().is_contiguous())
print(torch.flip(torch.arange(4), [0]), torch.arange(6).reshape(2, 3).flatten().tolist())
