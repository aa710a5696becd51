"""One workload of ``workloads.py`` run eagerly-as-written under lazy execution: per-step wall time,
where the fused program takes over, and torchlike.lazy's counters (flush reasons and sites).

    TORCHLIKE_LAZY=1 python bench/lazy_trace.py --workload gpt --device cuda --steps 20
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--workload", default="mlp")
    p.add_argument("--device", default="cpu")
    p.add_argument("--steps", type=int, default=20)
    a = p.parse_args()
    os.environ.setdefault("TORCHLIKE_LAZY", "1")
    os.environ.setdefault("TORCHLIKE_LAZY_TRACE", "1")
    sys.path.insert(0, HERE)
    sys.path.insert(0, os.path.dirname(HERE))
    import jax
    import workloads

    import torchlike

    step, _ = workloads.MAKERS[a.workload](torchlike, a.device, None)
    times = []
    for _ in range(a.steps):
        t0 = time.perf_counter()
        jax.block_until_ready(step()._data())
        times.append(round((time.perf_counter() - t0) * 1e3, 2))
    print(json.dumps({"workload": a.workload, "device": a.device, "lazy": torchlike.lazy.enabled(),
                      "ms_per_step": times, "stats": torchlike.lazy.stats()}, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
