"""Device-agnostic model building with `with torch.device(...)` and set_default_device, inference
under inference_mode with is_inference checks, and a 0-d view of a parameter (as_strided) trained
as a learnable scale."""

import torch
import torch.nn as nn

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
print("default device:", torch.get_default_device())

with torch.device("cpu"):
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    x = torch.randn(16, 4)
    y = x.sum(1, keepdim=True)
    print("inside:", torch.get_default_device(), {p.device.type for p in model.parameters()}, x.device)
print("after:", torch.get_default_device())

torch.set_default_device("cpu")
print("set:", torch.get_default_device(), torch.zeros(1).device)
torch.set_default_device(None)
print("reset:", torch.get_default_device())

# a library-style learnable scale: a 0-d view of one parameter entry
scale_param = nn.Parameter(torch.tensor([1.0, 0.0]))
opt = torch.optim.Adam(list(model.parameters()) + [scale_param], lr=0.05)
for step in range(30):
    opt.zero_grad()
    scale = torch.as_strided(scale_param, (), ())
    loss = ((model(x) * scale - y) ** 2).mean()
    loss.backward()
    opt.step()
    if step % 10 == 0:
        grad = [round(g, 4) for g in scale_param.grad.tolist()]
        print(f"step {step} loss {loss.item():.4f} scale {scale.item():.4f} grad {grad}")
print(type(scale.grad_fn).__name__)

with torch.inference_mode():
    pred = model(x)
    view = pred[:4]
    print("inference:", pred.is_inference(), view.is_inference(), pred.requires_grad, torch.is_inference_mode_enabled())
    with torch.inference_mode(False):
        print("nested off:", torch.ones(1).is_inference(), torch.is_grad_enabled())
print("outside:", torch.ones(1).is_inference(), x.is_inference(), (pred * 2).is_inference())
try:
    pred.add_(1)
except RuntimeError as e:
    print("RuntimeError:", str(e).split(".")[0])
print(f"final loss {((model(x) - y) ** 2).mean().item():.4f}")
