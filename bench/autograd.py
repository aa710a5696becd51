"""Backward cost: a 100-op chain and a 2-layer MLP step, first call vs cached, fused vs per-node.

Usage: python bench/autograd.py [--device cpu|cuda] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _sync(t):
    import jax

    jax.block_until_ready(t._data())


def timed(fn, n, sync):
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        out = fn()
        sync(out)
        samples.append((time.perf_counter() - t0) * 1e3)
    return samples


def chain(torch, x):
    y = x
    for i in range(100):
        y = (y * 1.01).sin() if i % 2 else y + 0.5
    return y.sum()


def mlp(torch, w1, w2, x):
    return ((x @ w1).relu() @ w2).pow(2).mean()


def run(device, steps):
    import torchlike as torch
    from torchlike.autograd import engine

    results = {}
    torch.manual_seed(0)
    x = torch.randn(64, 64, device=device, requires_grad=True)
    w1 = torch.randn(512, 1024, device=device, requires_grad=True)
    w2 = torch.randn(1024, 10, device=device, requires_grad=True)
    xb = torch.randn(128, 512, device=device)
    cases = {"chain100": lambda: chain(torch, x), "mlp": lambda: mlp(torch, w1, w2, xb)}
    for name, f in cases.items():
        for mode in ("fused", "per_node"):
            engine.FUSE_AFTER = 2 if mode == "fused" else 10**9
            engine._programs.clear()

            def step():
                loss = f()
                loss.backward()
                return x.grad if name == "chain100" else w1.grad

            first = timed(step, 1, _sync)[0]
            second = timed(step, 1, _sync)[0]
            rest = timed(step, steps, _sync)
            results[f"{name}/{mode}"] = {"first_ms": first, "second_ms": second,
                                         "median_ms": statistics.median(rest)}  # fmt: skip
    engine.FUSE_AFTER = 2
    return results


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cpu")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--json")
    a = p.parse_args()
    res = run(a.device, a.steps)
    print(f"forward+backward ms ({a.device}); 'first' includes compiles, 'second' compiles the fused program")
    print(f"{'case':22s}{'first':>10s}{'second':>10s}{'median':>10s}")
    for k, v in res.items():
        print(f"{k:22s}{v['first_ms']:10.1f}{v['second_ms']:10.1f}{v['median_ms']:10.2f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
