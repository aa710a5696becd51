"""Seed 003, 60-minute blitz "CUDA Tensors" (the CUDA branch runs only where a GPU exists)."""

import torch

x = torch.tensor([0.9551])
if torch.cuda.is_available():
    device = torch.device("cuda")
    y = torch.ones_like(x, device=device)
    x = x.to(device)
    z = x + y
    print(z)
    print(z.to("cpu", torch.double))
else:
    y = torch.ones_like(x)
    z = x + y
    print(z)
    print(z.to("cpu", torch.double))
print(torch.device("cpu"), torch.device("cuda:0"))
