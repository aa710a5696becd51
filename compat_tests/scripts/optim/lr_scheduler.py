"""Learning-rate schedulers stepping an SGD optimizer."""

import torch
from torch.optim.lr_scheduler import ExponentialLR, StepLR

p = torch.nn.Parameter(torch.ones(2))
opt = torch.optim.SGD([p], lr=0.1)
sched = StepLR(opt, step_size=2, gamma=0.5)
for epoch in range(6):
    opt.zero_grad()
    (p**2).sum().backward()
    opt.step()
    sched.step()
    print(epoch, sched.get_last_lr(), p)

opt = torch.optim.SGD([p], lr=1.0)
sched = ExponentialLR(opt, gamma=0.9)
for _ in range(3):
    opt.step()
    sched.step()
print(opt.param_groups[0]["lr"])
