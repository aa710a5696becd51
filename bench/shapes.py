"""New shapes on the CPU (issue 40): four patterns torch users write without thinking about shapes.

- ``sample``: a one-layer transformer language model (untrained, seeded) samples 200 tokens, the context
  growing by one token a step and cropped to the last 64, as nanoGPT-style ``generate`` loops do;
- ``padded``: a GRU classifier trained on batches padded to each batch's longest sequence (lengths 8-120),
  150 Adam steps, then an evaluation pass over 20 batches under ``no_grad``;
- ``sweep``: an MLP 64-128-10, cross-entropy forward and backward at every batch size 1..200, one pass;
- ``masked``: a regression whose loss reads a boolean-masked selection (``pred[mask]``) each step, 150 steps.

Each (library, pattern) runs in a fresh process with an empty compile cache (``first``), then, where asked,
again in one process (``second``: the pattern run twice, the second timed). Prints seconds, RSS growth and a
result digest that must equal torch's.

    python bench/shapes.py                        # all patterns, torch and torchlike, first runs
    python bench/shapes.py --patterns sample --second
    python bench/shapes.py --device cuda --timeout 120    # on a GPU (bench/gpu_matrix.sh's shapes section)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def sample(torch) -> list:
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)
    V, D, H, T = 65, 64, 4, 64

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
            self.attn = nn.Linear(D, 3 * D)
            self.proj = nn.Linear(D, D)
            self.mlp = nn.Sequential(nn.Linear(D, 4 * D), nn.GELU(), nn.Linear(4 * D, D))

        def forward(self, x):
            B, t, C = x.shape
            q, k, v = self.attn(self.ln1(x)).split(C, dim=2)
            q, k, v = (z.view(B, t, H, C // H).transpose(1, 2) for z in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / (C // H) ** 0.5)
            mask = torch.tril(torch.ones(t, t))
            att = att.masked_fill(mask == 0, float("-inf"))
            y = F.softmax(att, dim=-1) @ v
            x = x + self.proj(y.transpose(1, 2).contiguous().view(B, t, C))
            return x + self.mlp(self.ln2(x))

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(V, D), nn.Embedding(T, D)
            self.block, self.ln, self.head = Block(), nn.LayerNorm(D), nn.Linear(D, V)

        def forward(self, idx):
            t = idx.size(1)
            x = self.tok(idx) + self.pos(torch.arange(t))
            return self.head(self.ln(self.block(x)))

    model = LM().eval()
    idx = torch.zeros((1, 1), dtype=torch.long)
    with torch.no_grad():
        for _ in range(int(os.environ.get("SAMPLE_TOKENS", 200))):  # fewer for a quick look
            logits = model(idx[:, -T:])[:, -1, :]
            probs = F.softmax(logits, dim=-1)
            nxt = torch.multinomial(probs, num_samples=1)
            idx = torch.cat((idx, nxt), dim=1)
    return idx[0, -20:].tolist()


def padded(torch) -> list:
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)
    V, E, Hd, C, B = 100, 32, 64, 4, 16

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(V, E, padding_idx=0)
            self.gru = nn.GRU(E, Hd, batch_first=True)
            self.fc = nn.Linear(Hd, C)

        def forward(self, x, lengths):
            out, _ = self.gru(self.emb(x))
            last = out[torch.arange(x.size(0)), lengths - 1]
            return self.fc(last)

    dev = torch.empty(0).device  # the default device; batches are drawn on the CPU, as a DataLoader makes them

    def batch(g):
        lengths = torch.randint(8, 121, (B,), generator=g, device="cpu")
        x = torch.zeros(B, int(lengths.max()), dtype=torch.long, device="cpu")
        for i, n in enumerate(lengths.tolist()):
            x[i, :n] = torch.randint(1, V, (n,), generator=g, device="cpu")
        y = (x[:, 0] % C)
        return x.to(dev), lengths.to(dev), y.to(dev)

    model = Net()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    g = torch.Generator(device="cpu").manual_seed(1)
    losses = []
    for step in range(150):
        x, lengths, y = batch(g)
        loss = F.cross_entropy(model(x, lengths), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 50 == 0:
            losses.append(round(loss.item(), 4))
    model.eval()
    correct = 0
    with torch.no_grad():
        for _ in range(20):
            x, lengths, y = batch(g)
            correct += int((model(x, lengths).argmax(1) == y).sum())
    return losses + [correct]


def sweep(torch) -> list:
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    for b in range(1, 201):
        x, y = torch.randn(b, 64), torch.randint(0, 10, (b,))
        loss = F.cross_entropy(model(x), y)
        loss.backward()
    return [round(float(loss.detach()), 4), round(float(model[0].weight.grad.sum()), 3)]


def masked(torch) -> list:
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    out = []
    for step in range(150):
        x = torch.randn(64, 8)
        y = x[:, :1] * 2 - x[:, 1:2]
        keep = x[:, 2] > 0  # a different count of rows every step
        pred = model(x)
        loss = F.mse_loss(pred[keep], y[keep])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 50 == 0:
            out.append(round(loss.item(), 4))
    return out


PATTERNS = {"sample": sample, "padded": padded, "sweep": sweep, "masked": masked}


def child(lib: str, pattern: str, second: bool) -> dict:
    t0 = time.perf_counter()
    if lib == "torch":
        import torch

        torch.set_num_threads(1)
    else:
        sys.path.insert(0, ROOT)
        import torchlike as torch
    t_import = time.perf_counter() - t0
    device = os.environ.get("SHAPES_DEVICE", "cpu")
    if device != "cpu":
        torch.set_default_device(device)
    fn = PATTERNS[pattern]
    rss0 = _rss_mb()
    t = time.perf_counter()
    result = fn(torch)
    out = {"first_s": round(time.perf_counter() - t, 3), "import_s": round(t_import, 2), "result": result}
    if second:
        t = time.perf_counter()
        again = fn(torch)
        out["second_s"] = round(time.perf_counter() - t, 3)
        out["same_twice"] = again == result
    out["rss_growth_mb"] = round(_rss_mb() - rss0)
    if lib != "torch":
        stats = torch.compile_stats()
        out["compiles"] = stats["compiles"]
        out["buckets"] = len(stats.get("buckets", {}))
        from torchlike._core import lazy

        if lazy.enabled():  # programs compiled, run compiled, and run op by op as churning structures
            out["lazy"] = {k: lazy.stats[k] for k in ("compiles", "hits", "cold_runs", "churn_runs")}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--patterns", default=",".join(PATTERNS))
    ap.add_argument("--libs", default="torch,torchlike")
    ap.add_argument("--second", action="store_true", help="also time a second run in the same process")
    ap.add_argument("--json", default=None)
    ap.add_argument("--device", default="cpu", help="the default device of every pattern (cuda on a GPU)")
    ap.add_argument("--timeout", type=float, default=None, help="seconds per run; a run past it is reported")
    ap.add_argument("--child", nargs=3, metavar=("LIB", "PATTERN", "SECOND"))
    args = ap.parse_args()
    if args.child:
        lib, pattern, second = args.child
        print(json.dumps(child(lib, pattern, second == "1")))
        return
    results = {}
    for pattern in args.patterns.split(","):
        for lib in args.libs.split(","):
            with tempfile.TemporaryDirectory() as cache:
                env = dict(os.environ, TORCHLIKE_CACHE_DIR=cache, SHAPES_DEVICE=args.device)
                try:
                    p = subprocess.run([sys.executable, __file__, "--child", lib, pattern, "1" if args.second else "0"],
                                       env=env, capture_output=True, text=True, timeout=args.timeout)
                except subprocess.TimeoutExpired:
                    results[f"{pattern}/{lib}"] = {"timeout_s": args.timeout}
                    print(f"{pattern:7s} {lib:10s} no result in {args.timeout} s", flush=True)
                    continue
            if p.returncode:
                print(p.stderr[-3000:], file=sys.stderr)
                raise SystemExit(f"{lib} {pattern} failed")
            r = json.loads(p.stdout.strip().splitlines()[-1])
            results[f"{pattern}/{lib}"] = r
            print(f"{pattern:7s} {lib:10s} {json.dumps(r)}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
