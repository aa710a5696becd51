"""bf16 autocast on the CPU through ops that stay in bfloat16 there: attention scores scaled by a Python
number, softmax, GELU and SiLU, a residual add, layer norm; grad norms printed at every step (issue 43)."""
# compare: --rtol 0 --atol 0

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)
        self.gate = nn.Linear(d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
        x = x + self.proj(att.softmax(dim=-1) @ v)
        h = self.ln(x)
        h = self.fc2(F.gelu(self.fc1(h))) * F.silu(self.gate(h))
        return x + 0.5 * h


torch.manual_seed(0)
d = 32
model = nn.Sequential(Block(d), Block(d), nn.Linear(d, 5))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(8, 16, d)
y = torch.randint(0, 5, (8,))
for step in range(5):
    opt.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = model(x).mean(dim=1)
        loss = F.cross_entropy(out, y)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    opt.step()
    print(f"step {step}: loss {loss.item():.4f} grad norm {norm.item():.4f} out {out.dtype}")
