"""A character-level GPT on a bundled public-domain text (Shakespeare), trained with bf16 autocast
and ``torch.compile``; prints samples.

    python examples/char_transformer.py [--steps 300] [--device cuda]
    python -m torchlike compare examples/char_transformer.py --steps 5 --no-compile --no-autocast
"""

import argparse
import math
import os
import sys
import time

import torchlike as torch
import torchlike.nn as nn
import torchlike.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=300)
parser.add_argument("--batch-size", type=int, default=16)
parser.add_argument("--block", type=int, default=64)
parser.add_argument("--layers", type=int, default=2)
parser.add_argument("--d-model", type=int, default=128)
parser.add_argument("--heads", type=int, default=4)
parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
parser.add_argument("--no-compile", action="store_true")
parser.add_argument("--no-autocast", action="store_true", help="float32 throughout (for exact comparisons)")
parser.add_argument("--sample-len", type=int, default=200)
args = parser.parse_args()

torch.manual_seed(1337)
text = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "shakespeare.txt")).read()
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
split = int(0.9 * len(data))
train_data, val_data = data[:split], data[split:]
V = len(chars)


def batch(source):
    ix = torch.randint(len(source) - args.block - 1, (args.batch_size,))
    x = torch.stack([source[i : i + args.block] for i in ix.tolist()])
    y = torch.stack([source[i + 1 : i + args.block + 1] for i in ix.tolist()])
    return x.to(args.device), y.to(args.device)


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.h = h

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.attn(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.h, d // self.h).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.ln2(x))


class CharGPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(V, args.d_model)
        self.pos = nn.Embedding(args.block, args.d_model)
        self.blocks = nn.Sequential(*[Block(args.d_model, args.heads) for _ in range(args.layers)])
        self.ln = nn.LayerNorm(args.d_model)
        self.head = nn.Linear(args.d_model, V, bias=False)

    def forward(self, idx):
        t = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(t, device=idx.device))
        return self.head(self.ln(self.blocks(x)))


model = CharGPT().to(args.device)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
print(f"{sum(p.numel() for p in model.parameters())} parameters, vocabulary of {V} characters")


def train_step(x, y):
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device_type=args.device.split(":")[0], dtype=torch.bfloat16, enabled=not args.no_autocast):
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, V).float(), y.view(-1))
    loss.backward()
    optimizer.step()
    return loss


step_fn = train_step if args.no_compile else torch.compile(train_step)
t0 = time.time()
for step in range(args.steps):
    x, y = batch(train_data)
    loss = step_fn(x, y)
    if step % max(1, args.steps // 10) == 0 or step == args.steps - 1:
        print(f"step {step:4d}  loss {loss.item():.4f}")
elapsed = time.time() - t0

model.eval()
with torch.no_grad():
    x, y = batch(val_data)
    val = F.cross_entropy(model(x).view(-1, V), y.view(-1)).item()
print(f"validation loss {val:.4f} (uniform guess {math.log(V):.4f})")

# Prompted sampling with a fixed-size window: every step feeds the same shape, so the model's
# kernels are compiled once (each new tensor shape costs an XLA compile).
context = val_data[: args.block].view(1, -1).to(args.device)
generated = []
with torch.no_grad():
    for _ in range(args.sample_len):
        probs = F.softmax(model(context)[:, -1, :], dim=-1)
        nxt = torch.multinomial(probs, 1)
        generated.append(nxt.item())
        context = torch.cat([context[:, 1:], nxt], dim=1)
print("prompt:", repr("".join(chars[i] for i in val_data[: args.block].tolist())[-40:]))
print("sample:")
print("".join(chars[i] for i in generated))
print(f"trained {args.steps} steps in {elapsed:.1f}s", file=sys.stderr)
