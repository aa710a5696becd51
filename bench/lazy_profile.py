"""Where a lazy training step's host time goes: cProfile of steady steps of one ``workloads.py`` workload.

    TORCHLIKE_LAZY=1 python bench/lazy_profile.py --workload gpt --device cuda
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--workload", default="gpt")
    p.add_argument("--device", default="cpu")
    p.add_argument("--warmup", type=int, default=6)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--top", type=int, default=30)
    a = p.parse_args()
    sys.path.insert(0, HERE)
    sys.path.insert(0, os.path.dirname(HERE))
    import jax
    import workloads

    import torchlike

    step, _ = workloads.MAKERS[a.workload](torchlike, a.device, None)
    for _ in range(a.warmup):
        jax.block_until_ready(step()._data())
    t0 = time.perf_counter()
    for _ in range(a.steps):
        jax.block_until_ready(step()._data())
    print(f"{a.workload}: {(time.perf_counter() - t0) / a.steps * 1e3:.2f} ms/step, lazy={torchlike.lazy.enabled()}")
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(a.steps):
        jax.block_until_ready(step()._data())
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(a.top)


if __name__ == "__main__":
    main()
