"""Eager per-op overhead on small tensors: torchlike vs raw jax.numpy vs torch (CPU), one run.

Usage: python bench/eager_ops.py [--json out.json]
Prints the median microseconds per call of each op.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def timeit(fn, n=2000, repeats=7):
    for _ in range(200):
        fn()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(samples)


def cases(lib, np_mod, device="cpu"):
    """The ops of the issue, on 8x8 float32 tensors, for a torch-like module ``lib``."""
    a = lib.ones(8, 8, device=device)
    b = lib.ones(8, 8, device=device)
    t = lib.ones(8, 8, device=device)
    idx = lib.tensor([1, 3, 5], device=device)
    v = lib.ones(3, 8, device=device)

    def setitem():
        a[2:5] = v

    return {
        "a + b": lambda: a + b,
        "a * 2": lambda: a * 2,
        "a @ b": lambda: a @ b,
        "a[2:5]": lambda: a[2:5],
        "a[idx]": lambda: a[idx],
        "a[2:5] = v": setitem,
        "t.view(-1)": lambda: t.view(-1),
        "t.sum(1)": lambda: t.sum(1),
    }


def jnp_cases(device="cpu"):
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    dev = jax.devices("gpu" if device.startswith("cuda") else "cpu")[0]
    a, b, idx, v = jax.device_put((jnp.ones((8, 8), jnp.float32), jnp.ones((8, 8), jnp.float32),
                                   jnp.asarray([1, 3, 5]), jnp.ones((3, 8), jnp.float32)), dev)  # fmt: skip
    jit_add = jax.jit(lambda x, y: x + y)
    return {
        "a + b": lambda: a + b,
        "a * 2": lambda: a * 2,
        "a @ b": lambda: a @ b,
        "a[2:5]": lambda: a[2:5],
        "a[idx]": lambda: a[idx],
        "a[2:5] = v": lambda: a.at[2:5].set(v),
        "t.view(-1)": lambda: a.reshape(-1),
        "t.sum(1)": lambda: a.sum(1),
        "cached jit call": lambda: jit_add(a, b),
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--json")
    p.add_argument("--device", default="cpu")
    args = p.parse_args()
    import numpy as np

    results = {}
    import torchlike

    results["torchlike"] = {k: timeit(f) for k, f in cases(torchlike, np, args.device).items()}
    results["jax.numpy"] = {k: timeit(f) for k, f in jnp_cases(args.device).items()}
    try:
        import torch

        if args.device == "cpu":
            torch.set_num_threads(1)
        results["torch"] = {k: timeit(f) for k, f in cases(torch, np, args.device).items()}
    except ImportError:
        pass
    libs = list(results)
    print(f"median us/op (dispatch, no sync), 8x8 float32 on {args.device}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cpus")  # fmt: skip
    print(f"{'op':16s}" + "".join(f"{lib:>12s}" for lib in libs))
    for op in results["jax.numpy"]:
        print(f"{op:16s}" + "".join(f"{results[lib][op]:12.1f}" if op in results[lib] else f"{'':12s}" for lib in libs))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
