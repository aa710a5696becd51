"""The CPU generator: the same seed gives torch's numbers."""

import torch

torch.manual_seed(0)
print(torch.rand(5))
print(torch.randn(2, 3))
print(torch.randint(0, 10, (6,)))
print(torch.randperm(8))
torch.manual_seed(0)
print(torch.rand(5))
print(torch.rand(2, dtype=torch.float64))
x = torch.empty(4)
print(x.uniform_(-1, 1))
print(x.normal_(0, 0.1))
print(torch.normal(torch.zeros(3), torch.ones(3)))
print(torch.bernoulli(torch.full((6,), 0.5)))
g = torch.Generator().manual_seed(123)
print(torch.rand(3, generator=g))
state = torch.get_rng_state()
a = torch.rand(2)
torch.set_rng_state(state)
print(torch.equal(a, torch.rand(2)))
