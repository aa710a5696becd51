"""Host thread time of a steady lazy training step, the compiled program's execution excluded.

    TORCHLIKE_LAZY=1 python bench/lazy_host.py --workload gpt --small [--profile]

A step is ``step()`` then ``loss.item()``. The thread time of each call of a compiled program is subtracted,
so what remains is recording, replay, the backward's walk, the optimizer and the flush's bookkeeping.
``--small`` shrinks the GPT's sizes (same op structure, so the same host work) to keep CPU compute short.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def time_programs(lazy: object, spent: list) -> None:
    """Wrap each compiled lazy program so that its calls' thread time adds up in ``spent[0]``: a step's
    thread time less that is host work (also used by bench/host_cost.py)."""
    import jax

    def timed(f):  # noqa: ANN001, ANN202
        def call(*args):  # noqa: ANN002, ANN202
            t = time.thread_time()
            try:
                return jax.block_until_ready(f(*args))  # the wait for the device is not host work
            finally:
                spent[0] += time.thread_time() - t

        return call

    for prog in lazy._programs.values():
        if prog.compiled is not None:
            prog.compiled = timed(prog.compiled)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--workload", default="gpt")
    p.add_argument("--small", action="store_true")
    p.add_argument("--warmup", type=int, default=8)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--blocks", type=int, default=7)
    p.add_argument("--profile", action="store_true")
    p.add_argument("--top", type=int, default=40)
    p.add_argument("--callers", default="", help="a regex: also print who calls the matching functions")
    a = p.parse_args()
    sys.path.insert(0, HERE)
    sys.path.insert(0, os.path.dirname(HERE))
    import workloads

    import torchlike
    from torchlike._core import lazy

    if a.workload == "gpt" and a.small:
        cfg = dict(layers=6, d=64, heads=8, seq=16, batch=2, vocab=128)
        step, _ = workloads.make_gpt(torchlike, "cpu", None, cfg=cfg)
    else:
        step, _ = workloads.MAKERS[a.workload](torchlike, "cpu", None)
    for _ in range(a.warmup):
        step().item()
    lazy._join_compiles()  # background compiles take over before timing
    for _ in range(3):
        step().item()
    spent = [0.0]
    time_programs(lazy, spent)
    before = dict(lazy.stats)
    blocks = []  # the machine may be shared: the best block of steps is the cost, the median its spread
    for _ in range(a.blocks):
        spent[0] = 0.0
        t0 = time.thread_time()
        for _ in range(a.steps):
            step().item()
        blocks.append((time.thread_time() - t0 - spent[0]) / a.steps)
    prog = spent[0] / a.steps
    n = a.steps * a.blocks
    delta = {k: v - before.get(k, 0) for k, v in lazy.stats.items() if v != before.get(k, 0)}
    blocks.sort()
    print(f"{a.workload}{' (small)' if a.small else ''}: host {blocks[0] * 1e3:.3f} ms/step (best of {a.blocks} "
          f"blocks of {a.steps}; median {blocks[len(blocks) // 2] * 1e3:.3f}; program calls {prog * 1e3:.3f} "
          f"ms/step excluded), lazy={lazy.enabled()}")
    print("per step:", {k: round(v / n, 2) for k, v in delta.items()})
    if a.profile:
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(a.steps):
            step().item()
        prof.disable()
        st = pstats.Stats(prof).sort_stats("tottime")
        st.print_stats(a.top)
        if a.callers:
            st.print_callers(a.callers)


if __name__ == "__main__":
    main()
