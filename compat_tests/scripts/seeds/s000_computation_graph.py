"""Seed 000, "Computation graph": e = (a + b) * (b + 1) at a = 2, b = 1, and its gradients."""

import torch

a = torch.tensor(2.0, requires_grad=True)
b = torch.tensor(1.0, requires_grad=True)
c = a + b
d = b + 1
e = c * d
print(c, d, e)
print(c.grad_fn, d.grad_fn, e.grad_fn)
print(a.is_leaf, c.is_leaf, e.requires_grad)
e.backward()
print(a.grad, b.grad)
