"""no_grad, enable_grad, detach, requires_grad_, set_grad_enabled."""

import torch

x = torch.ones(3, requires_grad=True)
with torch.no_grad():
    y = x * 2
print(y.requires_grad, y.grad_fn)
with torch.no_grad():
    with torch.enable_grad():
        y = x * 2
print(y.requires_grad)
torch.set_grad_enabled(False)
print((x + 1).requires_grad, torch.is_grad_enabled())
torch.set_grad_enabled(True)
print((x + 1).requires_grad, torch.is_grad_enabled())
d = x.detach()
print(d.requires_grad, d)
d[0] = 5.0
print(x)
z = torch.zeros(2)
print(z.requires_grad_(), z.requires_grad)


@torch.no_grad()
def double(t):
    return t * 2


print(double(x).requires_grad)
with torch.inference_mode():
    print((x * 3).requires_grad)
