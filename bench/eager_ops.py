"""Eager per-op host cost on small tensors: torchlike vs torch (and raw jax.numpy), on the CPU, one run.

Usage: python bench/eager_ops.py [--json out.json] [--device cpu]

Each op runs on 8x8 float32 tensors (the issue's elementwise ops, reductions, indexing, ``cat`` and views),
once on tensors that need no gradient and once where the first operand requires grad (the op is then
recorded for autograd). Times are this thread's CPU time (``time.thread_time``) per call, the best of 7
repeats, so a loaded machine disturbs them less; torch runs with one thread. Two whole steps close the
table: a batch-1 MLP (4 -> 64 -> 64 -> 2, the size of an RL policy) forward + backward + SGD step, and a
200-op elementwise chain on a 1x64 tensor.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def timeit(fn, n=2000, repeats=7):
    for _ in range(200):
        fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.thread_time()
        for _ in range(n):
            fn()
        best = min(best, (time.thread_time() - t0) / n * 1e6)
    return best


def cases(lib, device="cpu", grad=False):
    """The ops on 8x8 float32 tensors, for a torch-like module ``lib``; ``grad``: ``a`` requires grad."""
    a = lib.ones(8, 8, device=device).mul(0.5).requires_grad_(grad)
    b = lib.ones(8, 8, device=device)
    t = lib.ones(8, 8, device=device)
    idx = lib.tensor([1, 3, 5], device=device)
    v = lib.ones(3, 8, device=device)
    c = lib.ones(8, 8, device=device)

    def setitem():
        c[2:5] = v

    out = {
        "a + b": lambda: a + b,
        "a * 2": lambda: a * 2,
        "a > b": lambda: a > b,
        "a.relu()": lambda: a.relu(),
        "a @ b": lambda: a @ b,
        "a.sum(1)": lambda: a.sum(1),
        "a.exp()": lambda: a.exp(),
        "a[2:5]": lambda: a[2:5],
        "a[idx]": lambda: a[idx],
        "cat((a, b))": lambda: lib.cat((a, b)),
        "a.view(-1)": lambda: a.view(-1),
        "a[2:5] + b[2:5]": lambda: a[2:5] + b[2:5],
    }
    if not grad:
        out["c[2:5] = v"] = setitem
        out["t.view(-1)"] = lambda: t.view(-1)
    return out


def mlp_step(lib, device="cpu"):
    """One RL-style step: batch-1 MLP forward, backward and an SGD update."""
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(nn.Linear(4, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 2)).to(device)
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    x = lib.ones(1, 4, device=device)

    def step():
        opt.zero_grad()
        loss = model(x).pow(2).sum()
        loss.backward()
        opt.step()

    return step


def chain(lib, device="cpu", grad=False):
    x = lib.ones(1, 64, device=device).requires_grad_(grad)

    def run():
        y = x
        for _ in range(100):
            y = y * 1.01
            y = y + x
        if grad:
            y.sum().backward()

    return run


def measure(lib, device):
    res = {k: timeit(f) for k, f in cases(lib, device).items()}
    res.update({f"{k} (grad)": timeit(f) for k, f in cases(lib, device, grad=True).items()})
    res["MLP b=1 fwd+bwd+SGD (per step)"] = timeit(mlp_step(lib, device), n=200)
    res["1x64 chain (per op)"] = timeit(chain(lib, device), n=20) / 200
    res["1x64 chain + backward (per op)"] = timeit(chain(lib, device, grad=True), n=20) / 200
    return res


def jnp_cases(device="cpu"):
    import jax
    import jax.numpy as jnp

    dev = jax.devices("gpu" if device.startswith("cuda") else "cpu")[0]
    a, b = jax.device_put((jnp.ones((8, 8), jnp.float32), jnp.ones((8, 8), jnp.float32)), dev)
    jit_add = jax.jit(lambda x, y: x + y)
    return {"a + b": lambda: a + b, "cached jit call": lambda: jit_add(a, b)}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--json")
    p.add_argument("--device", default="cpu")
    args = p.parse_args()

    results = {}
    import torchlike

    results["torchlike"] = measure(torchlike, args.device)
    results["jax.numpy"] = {k: timeit(f) for k, f in jnp_cases(args.device).items()}
    try:
        import torch

        if args.device == "cpu":
            torch.set_num_threads(1)
        results["torch"] = measure(torch, args.device)
    except ImportError:
        pass
    libs = list(results)
    print(f"thread-time us per call, 8x8 float32 on {args.device}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cpus")  # fmt: skip
    print(f"{'op':34s}" + "".join(f"{lib:>11s}" for lib in libs) + f"{'tl/torch':>10s}")
    ops = list(dict.fromkeys(k for lib in libs for k in results[lib]))
    for op in ops:
        row = "".join(f"{results[lib][op]:11.1f}" if op in results[lib] else f"{'':11s}" for lib in libs)
        ratio = ""
        if "torch" in results and op in results["torch"] and op in results["torchlike"]:
            ratio = f"{results['torchlike'][op] / results['torch'][op]:10.2f}"
        print(f"{op:34s}{row}{ratio}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
