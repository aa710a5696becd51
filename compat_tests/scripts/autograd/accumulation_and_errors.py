"""Gradients accumulate; the graph is freed after backward unless retained; torch's error messages."""

import torch

x = torch.tensor([1.0, 2.0], requires_grad=True)
y = (x * x).sum()
y.backward(retain_graph=True)
print(x.grad)
y.backward()
print(x.grad)
x.grad = None
(x * 3).sum().backward()
print(x.grad)

z = (x * x).sum()
z.backward()
try:
    z.backward()
except RuntimeError as e:
    print("RuntimeError:", str(e).splitlines()[0])

try:
    (x * 2).backward()
except RuntimeError as e:
    print("RuntimeError:", e)

try:
    torch.ones(2).sum().backward()
except RuntimeError as e:
    print("RuntimeError:", e)

leaf = torch.ones(2, requires_grad=True)
try:
    leaf.add_(1)
except RuntimeError as e:
    print("RuntimeError:", e)
