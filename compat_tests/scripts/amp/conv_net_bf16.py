"""A small conv net under CPU bf16 autocast: convolutions, ReLU, max pooling, dropout-free head, Adam, and
clip_grad_norm_'s return value printed at every step (issue 43)."""
# compare: --rtol 0 --atol 0

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(32 * 4 * 4, 64), nn.SiLU(), nn.Linear(64, 10),
)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.randn(32, 3, 16, 16)
y = torch.randint(0, 10, (32,))
for step in range(6):
    opt.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = model(x)
        loss = F.cross_entropy(out / 2.0, y)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
    opt.step()
    print(f"step {step}: loss {loss.item():.4f} grad norm {norm.item():.4f} out {out.dtype}")
