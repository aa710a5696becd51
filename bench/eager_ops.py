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


def cases(lib, np_mod):
    """The ops of the issue, on 8x8 float32 tensors, for a torch-like module ``lib``."""
    a = lib.ones(8, 8)
    b = lib.ones(8, 8)
    t = lib.ones(8, 8)
    idx = lib.tensor([1, 3, 5])
    v = lib.ones(3, 8)

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


def jnp_cases():
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    a = jnp.ones((8, 8), jnp.float32)
    b = jnp.ones((8, 8), jnp.float32)
    idx = jnp.asarray([1, 3, 5])
    v = jnp.ones((3, 8), jnp.float32)
    return {
        "a + b": lambda: a + b,
        "a * 2": lambda: a * 2,
        "a @ b": lambda: a @ b,
        "a[2:5]": lambda: a[2:5],
        "a[idx]": lambda: a[idx],
        "a[2:5] = v": lambda: a.at[2:5].set(v),
        "t.view(-1)": lambda: a.reshape(-1),
        "t.sum(1)": lambda: a.sum(1),
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--json")
    args = p.parse_args()
    import numpy as np

    results = {}
    import torchlike

    results["torchlike"] = {k: timeit(f) for k, f in cases(torchlike, np).items()}
    results["jax.numpy"] = {k: timeit(f) for k, f in jnp_cases().items()}
    try:
        import torch

        torch.set_num_threads(1)
        results["torch"] = {k: timeit(f) for k, f in cases(torch, np).items()}
    except ImportError:
        pass
    libs = list(results)
    print(f"median us/op, 8x8 float32, {platform.processor() or platform.machine()}, {os.cpu_count()} cpus")
    print(f"{'op':14s}" + "".join(f"{lib:>12s}" for lib in libs))
    for op in results["torchlike"]:
        print(f"{op:14s}" + "".join(f"{results[lib][op]:12.1f}" for lib in libs))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
