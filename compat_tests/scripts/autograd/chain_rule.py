"""Backward through a chain of ops, non-scalar backward with a gradient argument, grad_fn names."""

import torch

x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
y = (x * 2).exp().log() - x.pow(3) / 3
z = y.sum()
print(y.grad_fn, z.grad_fn)
z.backward()
print(x.grad)

w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
out = torch.tanh(w) * torch.sigmoid(w)
out.backward(torch.tensor([1.0, 0.1, 0.01]))
print(out)
print(w.grad)

a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = a.view(3, 1) @ a.view(1, 3)
print(b.grad_fn)
b.mean().backward()
print(a.grad)
print(a.grad_fn, a.is_leaf, b.is_leaf, b.requires_grad)
