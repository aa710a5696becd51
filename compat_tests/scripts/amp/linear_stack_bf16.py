"""A new user's bf16 autocast loop: a stack of Linear+ReLU layers, cross-entropy, clip_grad_norm_ (its
return value printed), SGD with momentum, several steps (issue 43)."""
# compare: --rtol 0 --atol 0

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(
    nn.Linear(64, 256), nn.ReLU(),
    nn.Linear(256, 256), nn.ReLU(),
    nn.Linear(256, 256), nn.ReLU(),
    nn.Linear(256, 10),
)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
x = torch.randn(128, 64)
y = torch.randint(0, 10, (128,))
for step in range(6):
    opt.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = model(x)
        loss = nn.functional.cross_entropy(out, y)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    opt.step()
    print(f"step {step}: loss {loss.item():.4f} grad norm {norm.item():.4f} out {out.dtype}")
