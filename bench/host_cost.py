"""Host time per op of recording an op chain, torchlike (lazy and eager) against torch, on the CPU.

A 100-op elementwise chain (``y * 1.01``, ``y + x`` on 16x16 float32) with and without a tensor that
requires grad, plus the walk ``backward()`` makes over it. Timed with ``time.thread_time`` (this
thread's CPU time, so other processes on a loaded machine disturb it less), best of 15 runs, after
warm-up. ``lazy`` replays the recurring chain (guarded replay, see docs/lazy.md); ``lazy-record``
records every step in full (``TORCHLIKE_LAZY_REPLAY=0``). Lazy figures are recording only: the fused
program runs after the timed region, so they are the host cost a GPU step pays while the device works.
torch's figures include its (tiny) CPU compute.

    python bench/host_cost.py [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
N_OPS = 102  # x * w, 100 chain ops, sum


def measure(lib_name: str, mode: str) -> dict:
    if lib_name == "torch":
        import torch as lib

        def sync() -> None:
            pass
    else:
        sys.path.insert(0, os.path.dirname(HERE))
        import torchlike as lib

        lib.lazy.enable() if mode.startswith("lazy") else lib.lazy.disable()

        def sync() -> None:
            lib.lazy.mark_step()

    x = lib.randn(16, 16)
    out = {}
    for rg in (False, True):
        w = lib.randn(16, 16, requires_grad=rg)

        def chain():  # noqa: ANN202
            y = x * w
            for _ in range(50):
                y = y * 1.01
                y = y + x
            return y.sum()

        for _ in range(30):
            loss = chain()
            if rg:
                loss.backward()
                w.grad = None
            sync()
        fwd = bwd = 1e9
        for _ in range(15):
            t0 = time.thread_time()
            loss = chain()
            t1 = time.thread_time()
            if rg:
                loss.backward()
            t2 = time.thread_time()
            sync()
            float(loss.detach() if rg else loss)
            w.grad = None
            fwd, bwd = min(fwd, t1 - t0), min(bwd, t2 - t1)
        out["fwd_grad" if rg else "fwd_nograd"] = round(fwd / N_OPS * 1e6, 2)
        if rg:
            out["backward_per_node"] = round(bwd / N_OPS * 1e6, 2)
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--json")
    p.add_argument("--one", nargs=2, help=argparse.SUPPRESS)  # lib mode: run in this process
    a = p.parse_args()
    if a.one:
        print(json.dumps(measure(*a.one)))
        return
    rows = {}
    for lib, mode in (("torch", "eager"), ("torchlike", "eager"), ("torchlike", "lazy"), ("torchlike", "lazy-record")):
        # lazy-record: every step recorded in full (guarded replay off), the cost before replay existed
        env = dict(os.environ, TORCHLIKE_LAZY_BACKGROUND="0", TORCHLIKE_LAZY_REPLAY="0" if mode == "lazy-record" else "1")
        res = subprocess.run([sys.executable, __file__, "--one", lib, mode], capture_output=True, text=True,
                             env=env, check=True)  # fmt: skip
        rows[f"{lib} {mode}"] = json.loads(res.stdout.strip().splitlines()[-1])
    print(f"{'(us per op, thread time)':26} {'fwd no grad':>12} {'fwd grad':>10} {'backward':>10}")
    for name, r in rows.items():
        print(f"{name:26} {r['fwd_nograd']:12.2f} {r['fwd_grad']:10.2f} {r['backward_per_node']:10.2f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"machine": platform.processor() or platform.machine(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
