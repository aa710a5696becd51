"""step() time for a model with 100 parameter tensors: torchlike (one jitted update) vs torch eager.

    python bench/optim_step.py [--steps N] [--device cpu|cuda] [--sizes small|mixed] [--torch-threads N]

Gradients are set once; each timed step is ``optimizer.step()`` alone (no backward), with the
result synchronised (``block_until_ready`` / ``torch.cuda.synchronize``). Times are medians in ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CASES = [
    ("SGD", {"lr": 0.01}),
    ("SGD", {"lr": 0.01, "momentum": 0.9, "nesterov": True}),
    ("Adam", {"lr": 1e-3}),
    ("AdamW", {"lr": 1e-3, "amsgrad": True}),
    ("RMSprop", {"lr": 1e-3, "momentum": 0.9, "centered": True}),
    ("Adagrad", {"lr": 1e-2}),
    ("NAdam", {"lr": 1e-3}),
    ("RAdam", {"lr": 1e-3}),
]


def shapes(kind: str) -> list[tuple]:
    if kind == "small":  # 50 Linear(64, 64) layers: weight + bias
        return [(64, 64), (64,)] * 50
    # a mix like a small transformer: 100 tensors, ~8.2M values
    out = []
    for i in range(25):
        out += [(256, 256), (256,), (1024, 256) if i % 2 else (256, 1024), (256,)]
    return out


def bench(lib: object, name: str, kw: dict, sh: list, steps: int, device: str, sync: object) -> tuple:
    rng = np.random.default_rng(0)
    params = [lib.tensor(rng.standard_normal(s).astype(np.float32), device=device, requires_grad=True) for s in sh]
    for p in params:
        p.grad = lib.tensor(rng.standard_normal(p.shape).astype(np.float32) * 1e-3, device=device)
    opt = getattr(lib.optim, name)(params, **kw)
    t0 = time.perf_counter()
    opt.step()
    sync(params)
    first = time.perf_counter() - t0
    opt.step()
    sync(params)
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        opt.step()
        sync(params)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3, first * 1e3


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--sizes", default="small", choices=["small", "mixed"])
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--torch-threads", type=int, default=0, help="torch.set_num_threads (0: torch's default)")
    args = ap.parse_args()

    import torchlike

    def tl_sync(params: list) -> None:
        params[-1]._data().block_until_ready()

    sh = shapes(args.sizes)
    print(f"{len(sh)} parameter tensors, {sum(int(np.prod(s)) for s in sh):,} values, device {args.device}")
    torch = None
    if not args.no_torch:
        import torch

        if args.torch_threads:
            torch.set_num_threads(args.torch_threads)

        def t_sync(params: list) -> None:
            if args.device.startswith("cuda"):
                torch.cuda.synchronize()

    print(f"{'optimizer':44s} {'torchlike ms':>12s} {'torch ms':>10s} {'ratio':>7s} {'1st step (compile) ms':>22s}")
    for name, kw in CASES:
        tl, first = bench(torchlike, name, kw, sh, args.steps, args.device, tl_sync)
        label = f"{name}({', '.join(f'{k}={v}' for k, v in kw.items())})"
        if torch is not None:
            t, _ = bench(torch, name, kw, sh, args.steps, args.device, t_sync)
            print(f"{label:44s} {tl:12.3f} {t:10.3f} {t / tl:6.1f}x {first:22.0f}")
        else:
            print(f"{label:44s} {tl:12.3f} {'-':>10s} {'-':>7s} {first:22.0f}")


if __name__ == "__main__":
    main()
