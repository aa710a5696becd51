"""First and second runs of small training scripts on the CPU: torchlike against torch, wall time.

Two scripts of the kind users run unmodified (issue 30's CPU item):

- ``gpt``: a character-level GPT (2 layers, d=64, 4 heads, context 32) trained with AdamW for 120 steps on a
  generated text, evaluated every 40 steps on a held-out batch of another size, then sampling 60
  characters (a context that grows by one each step: a new shape per token);
- ``style``: a style-transfer loop: a small conv feature extractor (random weights, fixed), Gram-matrix
  style loss plus content loss, Adam optimizing the image's pixels for 60 steps, at two resolutions.

Each run is a fresh process with ``import torch`` or ``import torchlike as torch``; "first" runs start with
an empty persistent compilation cache (a new ``TORCHLIKE_CACHE_DIR``), "second" runs reuse it. Wall time is
the whole process (imports included), as a user's ``time python script.py`` measures it; CPU time (user +
system, all threads) is reported beside it, since a shared machine's wall time is noisy.

    python bench/cpu_first_run.py                      # both scripts, torch and torchlike, first + second
    python bench/cpu_first_run.py --scripts gpt --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def gpt(torch) -> float:
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)
    words = ["the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran", "to", "big", "red", "house", "by", "sea"]
    g = torch.Generator().manual_seed(1)
    text = " ".join(words[int(i)] for i in torch.randint(0, len(words), (6000,), generator=g))
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    train, val = data[: int(0.9 * len(data))], data[int(0.9 * len(data)) :]
    V, T, D, H, L = len(chars), 32, 64, 4, 2

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
            self.qkv, self.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
            self.mlp = nn.Sequential(nn.Linear(D, 4 * D), nn.GELU(approximate="tanh"), nn.Linear(4 * D, D))

        def forward(self, x):
            B, t, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(D, dim=2)
            q, k, v = (z.view(B, t, H, D // H).transpose(1, 2) for z in (q, k, v))
            att = (q @ k.transpose(-2, -1)) / (D // H) ** 0.5
            mask = torch.tril(torch.ones(t, t)).view(1, 1, t, t)
            att = F.softmax(att.masked_fill(mask == 0, float("-inf")), dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(B, t, D)
            x = x + self.proj(y)
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(V, D), nn.Embedding(T, D)
            self.blocks = nn.Sequential(*[Block() for _ in range(L)])
            self.ln, self.head = nn.LayerNorm(D), nn.Linear(D, V)

        def forward(self, idx, targets=None):
            t = idx.shape[1]
            x = self.tok(idx) + self.pos(torch.arange(t))
            logits = self.head(self.ln(self.blocks(x)))
            if targets is None:
                return logits, None
            return logits, F.cross_entropy(logits.view(-1, V), targets.view(-1))

    def batch(src, n):
        ix = torch.randint(len(src) - T - 1, (n,))
        return torch.stack([src[i : i + T] for i in ix]), torch.stack([src[i + 1 : i + T + 1] for i in ix])

    model = GPT()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    for step in range(120):
        xb, yb = batch(train, 16)
        _, loss = model(xb, yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 40 == 0 or step == 119:
            model.eval()
            with torch.no_grad():
                _, vl = model(*batch(val, 24))
            model.train()
            print(f"step {step} loss {loss.item():.4f} val {vl.item():.4f}")
    idx = torch.zeros((1, 1), dtype=torch.long)
    with torch.no_grad():
        for _ in range(60):
            logits, _ = model(idx[:, -T:])
            probs = F.softmax(logits[:, -1, :], dim=-1)
            idx = torch.cat([idx, torch.multinomial(probs, 1)], dim=1)
    print("".join(chars[int(i)] for i in idx[0]))
    return float(loss.item())


def style(torch) -> float:
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)
    features = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(), nn.AvgPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(),
    )
    for p in features.parameters():
        p.requires_grad_(False)
    style_layers, content_layer = (1, 3, 6, 8), 8

    def feats(x):
        out = {}
        for i, layer in enumerate(features):
            x = layer(x)
            out[i] = x
        return out

    def gram(f):
        b, c, h, w = f.shape
        f = f.view(b, c, h * w)
        return f @ f.transpose(1, 2) / (c * h * w)

    loss = None
    for size in (32, 48):
        content = torch.rand(1, 3, size, size)
        style_img = torch.rand(1, 3, size, size)
        with torch.no_grad():
            sf = feats(style_img)
            targets = {i: gram(sf[i]) for i in style_layers}
            content_target = feats(content)[content_layer]
        img = content.clone().requires_grad_(True)
        opt = torch.optim.Adam([img], lr=0.02)
        for step in range(60):
            f = feats(img)
            s_loss = sum(F.mse_loss(gram(f[i]), targets[i]) for i in style_layers)
            c_loss = F.mse_loss(f[content_layer], content_target)
            loss = 1e4 * s_loss + c_loss
            opt.zero_grad()
            loss.backward()
            opt.step()
            with torch.no_grad():
                img.clamp_(0, 1)
            if step % 20 == 0:
                print(f"size {size} step {step} loss {loss.item():.6f}")
    return float(loss.item())


SCRIPTS = {"gpt": gpt, "style": style}


def _child(script: str, backend: str) -> None:
    if backend == "torch":
        import torch
    else:
        sys.path.insert(0, ROOT)
        import torchlike as torch
    print("result", SCRIPTS[script](torch))
    if backend != "torch":
        stats = torch.compile_stats()
        stats.pop("by_op")
        from torchlike._core import cold_kernels

        print("compile_stats", stats, "cold", {k: round(v, 2) for k, v in cold_kernels.stats.items()})


def _run(script: str, backend: str, cache: str, env: dict) -> dict:
    env = dict(env, TORCHLIKE_CACHE_DIR=cache, PYTHONPATH=ROOT)
    t = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run([sys.executable, __file__, "--child", script, "--backend", backend], env=env,
                       capture_output=True, text=True)  # fmt: skip
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode:
        raise RuntimeError(f"{script} under {backend} failed:\n{p.stderr[-3000:]}")
    lines = p.stdout.strip().splitlines()
    result = next(l for l in lines if l.startswith("result")).split()[1]
    extra = [l for l in lines if l.startswith("compile_stats")]
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "result": result, "stats": extra[0] if extra else None}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scripts", default="gpt,style")
    ap.add_argument("--child")
    ap.add_argument("--backend", default="torchlike")
    ap.add_argument("--json")
    ap.add_argument("--cold", default=None,
                    help="TORCHLIKE_COLD_KERNELS for the torchlike runs (default: unset, the library's default)")
    a = ap.parse_args()
    if a.child:
        _child(a.child, a.backend)
        return
    env = dict(os.environ, TORCHLIKE_LAZY="0")
    env.pop("TORCHLIKE_COLD_KERNELS", None)
    if a.cold is not None:
        env["TORCHLIKE_COLD_KERNELS"] = a.cold
    out = {}
    for script in a.scripts.split(","):
        with tempfile.TemporaryDirectory() as cache:
            row = {"torch": _run(script, "torch", cache, env)}
            row["torchlike_first"] = _run(script, "torchlike", cache, env)
            row["torchlike_second"] = _run(script, "torchlike", cache, env)
            row["torch_again"] = _run(script, "torch", cache, env)
        t = (row["torch"]["wall_s"] + row["torch_again"]["wall_s"]) / 2
        row["first_vs_torch"] = round(row["torchlike_first"]["wall_s"] / t, 2)
        row["second_vs_torch"] = round(row["torchlike_second"]["wall_s"] / t, 2)
        out[script] = row
        print(script, json.dumps(row, indent=1), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
