"""10M float32 standard normals: torchlike's numpy generator vs torch.randn (CPU), bit-checked.

Usage: python bench/rng_normal.py [--n 10000000] [--repeats 5]
Prints the best wall time of each and the ratio (torchlike / torch).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from torchlike._core import dtype as D  # noqa: E402
from torchlike._core import generator as G  # noqa: E402


def best_of(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()

    import torch

    torch.set_num_threads(1)  # torch's normal kernel is serial anyway
    gen = G.Generator()
    tgen = torch.Generator()

    def ours():
        gen.manual_seed(0)
        return G.normal(gen, args.n, D.float32)

    def theirs():
        tgen.manual_seed(0)
        return torch.randn(args.n, generator=tgen)

    same = ours().tobytes() == theirs().numpy().tobytes()
    t_ours, t_torch = best_of(ours, args.repeats), best_of(theirs, args.repeats)
    print(f"{platform.processor() or platform.machine()}, numpy {np.__version__}, torch {torch.__version__}")
    print(f"n={args.n:,} float32 normals, best of {args.repeats}; bit-identical: {same}")
    print(f"torchlike (numpy) {t_ours * 1e3:8.1f} ms")
    print(f"torch.randn       {t_torch * 1e3:8.1f} ms")
    print(f"ratio             {t_ours / t_torch:8.2f}x")


if __name__ == "__main__":
    main()
