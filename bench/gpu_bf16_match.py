"""bf16-autocast training on the GPU: torchlike's losses against torch's, step by step.

Both start from the same weights (torch's CPU generator, which torchlike reproduces) and data, and
train a small GPT-style model under torch.autocast('cuda', torch.bfloat16) with AdamW.

    python bench/gpu_bf16_match.py [--steps 30]
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import workloads  # noqa: E402

CFG = dict(layers=2, d=128, heads=4, seq=64, batch=8, vocab=256)


def losses(lib, steps: int) -> list:
    lib.manual_seed(0)
    model = workloads.build_gpt(lib, CFG)
    x = lib.randint(0, CFG["vocab"], (CFG["batch"], CFG["seq"]))
    y = lib.randint(0, CFG["vocab"], (CFG["batch"], CFG["seq"]))
    model = model.to("cuda")
    x, y = x.to("cuda"), y.to("cuda")
    opt = lib.optim.AdamW(model.parameters(), lr=1e-3)
    out = []
    for _ in range(steps):
        opt.zero_grad()
        with lib.autocast("cuda", dtype=lib.bfloat16):
            logits = model(x)
        loss = lib.nn.functional.cross_entropy(logits.float().reshape(-1, CFG["vocab"]), y.reshape(-1))
        loss.backward()
        opt.step()
        out.append(loss.item())
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--json")
    a = p.parse_args()
    import torch

    import torchlike

    ref = losses(torch, a.steps)
    got = losses(torchlike, a.steps)
    worst = max(abs(r - g) / max(abs(r), 1e-6) for r, g in zip(ref, got))
    for i, (r, g) in enumerate(zip(ref, got)):
        print(f"step {i:3d}  torch {r:.5f}  torchlike {g:.5f}")
    print(f"max relative loss difference over {a.steps} steps: {worst:.2e} (bf16 tolerance 5e-2)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"torch": ref, "torchlike": got, "max_rel_diff": worst}, f)
    sys.exit(0 if worst < 5e-2 else 1)


if __name__ == "__main__":
    main()
