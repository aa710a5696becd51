"""Each optimizer takes a few steps on the same quadratic; the parameters must follow torch's."""

import torch


def run(make_opt, steps=5):
    torch.manual_seed(0)
    w = torch.nn.Parameter(torch.randn(3))
    opt = make_opt([w])
    target = torch.tensor([1.0, -2.0, 0.5])
    for _ in range(steps):
        opt.zero_grad()
        loss = ((w - target) ** 2).sum() + 0.1 * w.abs().sum()
        loss.backward()
        opt.step()
    return w.detach()


print("SGD", run(lambda p: torch.optim.SGD(p, lr=0.1)))
print("SGD momentum nesterov", run(lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True)))
print("SGD weight_decay", run(lambda p: torch.optim.SGD(p, lr=0.1, weight_decay=0.01)))
print("Adam", run(lambda p: torch.optim.Adam(p, lr=0.1)))
print("Adam amsgrad", run(lambda p: torch.optim.Adam(p, lr=0.1, amsgrad=True)))
print("AdamW", run(lambda p: torch.optim.AdamW(p, lr=0.1, weight_decay=0.1)))
print("RMSprop", run(lambda p: torch.optim.RMSprop(p, lr=0.01)))
print("Adagrad", run(lambda p: torch.optim.Adagrad(p, lr=0.1)))

w = torch.nn.Parameter(torch.ones(2))
opt = torch.optim.Adam([w], lr=0.1)
(w * 2).sum().backward()
opt.step()
print(opt.state_dict()["param_groups"])
print(opt.state_dict()["state"])
