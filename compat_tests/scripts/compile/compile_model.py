"""torch.compile of a model: the compiled forward and a training loop through it match eager."""

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 1))
x = torch.randn(16, 4)
y = x.sum(1, keepdim=True)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
compiled = torch.compile(model)
print(torch.allclose(compiled(x), model(x), atol=1e-6))

for step in range(5):
    opt.zero_grad()
    loss = nn.functional.mse_loss(compiled(x), y)
    loss.backward()
    opt.step()
    print(step, f"{loss.item():.5f}")
