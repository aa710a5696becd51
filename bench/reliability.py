"""Reliability benchmarks of issue 22, each in a fresh subprocess (max RSS from getrusage).

Usage: python bench/reliability.py [pow|norm|smooth_l1|mlp|op] [count]
  pow: ``x.abs() ** (1 + i*1e-4)`` for ``count`` distinct Python-float exponents (default 1000)
  norm: ``x.norm(1.5 + i*1e-4)`` (forward and backward) for ``count`` distinct orders (default 1000)
  smooth_l1: ``smooth_l1_loss(x, y, beta=0.5 + i*1e-4)`` (forward and backward) for ``count`` betas (default 1000)
  nan_to_num: ``nan_to_num(x, nan=v, posinf=1 + v, neginf=-v)`` (forward and backward) for ``count`` values (default 1000)
  sdpa: ``scaled_dot_product_attention(q, k, v, scale=s)`` (forward and backward) for ``count`` scales (default 1000)
  mlp: an MLP training step (Linear-ReLU-Linear, SGD) over ``count`` distinct batch sizes (default 250)
  op:  microseconds per ``x + y`` on 4x4 float32 tensors (grad mode's hot-path cost)
Prints seconds, max RSS (MB) and, where torchlike has them, the compile counters.
"""

from __future__ import annotations

import os
import resource
import sys
import time
import timeit

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench_pow(torch, n: int) -> None:
    x = torch.randn(64, 64)
    x.abs() ** 1.5  # warm the common path
    t0 = time.perf_counter()
    for i in range(n):
        y = x.abs() ** (1 + i * 1e-4)
    y.sum().item()
    print(f"pow: {n} exponents in {time.perf_counter() - t0:.2f} s, max RSS {rss_mb():.0f} MB")


def _bench_values(torch, name: str, f, n: int) -> None:
    """``f(x, v)`` then its backward for ``n`` distinct Python floats ``v``."""
    x = torch.randn(64, 64, requires_grad=True)
    f(x, 0.5).backward()  # warm the common path
    t0, c0 = time.perf_counter(), time.thread_time()
    for i in range(n):
        f(x, 0.5 + i * 1e-4).backward()
    x.grad.sum().item()
    print(f"{name}: {n} values in {time.perf_counter() - t0:.2f} s ({time.thread_time() - c0:.2f} s of this "
          f"thread's CPU), max RSS {rss_mb():.0f} MB")


def bench_norm(torch, n: int) -> None:
    _bench_values(torch, "norm", lambda x, v: x.norm(1 + v), n)


def bench_smooth_l1(torch, n: int) -> None:
    y = torch.randn(64, 64)
    _bench_values(torch, "smooth_l1", lambda x, v: torch.nn.functional.smooth_l1_loss(x, y, beta=v), n)


def bench_nan_to_num(torch, n: int) -> None:
    special = torch.tensor([float("nan"), float("inf"), -float("inf"), 1.0]).repeat(64, 16)
    _bench_values(torch, "nan_to_num", lambda x, v: torch.nan_to_num(x * special, nan=v, posinf=1 + v,
                                                                      neginf=-v).sum(), n)  # fmt: skip


def bench_sdpa(torch, n: int) -> None:
    k = torch.randn(1, 64, 64)
    sdpa = torch.nn.functional.scaled_dot_product_attention
    _bench_values(torch, "sdpa", lambda x, v: sdpa(x[None], k, k, scale=v).sum(), n)


def bench_mlp(torch, n: int) -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    t0 = time.perf_counter()
    marks = {}
    for b in range(1, n + 1):
        x = torch.randn(b, 32)
        y = torch.randint(0, 10, (b,))
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if b in (n // 4, n // 2, 3 * n // 4, n):
            marks[b] = rss_mb()
    loss.item()
    trail = ", ".join(f"{k}: {v:.0f}" for k, v in marks.items())
    print(f"mlp: {n} batch sizes in {time.perf_counter() - t0:.1f} s, max RSS by batch size (MB) {trail}")


def bench_op(torch) -> None:
    x, y = torch.ones(4, 4), torch.ones(4, 4)
    for _ in range(200):
        x + y
    best = min(timeit.repeat(lambda: x + y, number=5000, repeat=7)) / 5000 * 1e6
    print(f"op: x + y {best:.2f} us per call")


def main() -> None:
    what = sys.argv[1] if len(sys.argv) > 1 else "op"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else (250 if what == "mlp" else 1000)
    if os.environ.get("BENCH_TORCH"):
        import torch
    else:
        import torchlike as torch
    {"pow": lambda: bench_pow(torch, n), "norm": lambda: bench_norm(torch, n),
     "smooth_l1": lambda: bench_smooth_l1(torch, n), "mlp": lambda: bench_mlp(torch, n),
     "nan_to_num": lambda: bench_nan_to_num(torch, n), "sdpa": lambda: bench_sdpa(torch, n),
     "op": lambda: bench_op(torch)}[what]()  # fmt: skip
    stats = getattr(torch, "compile_stats", None)
    if stats is not None:
        print("compiles:", stats())


if __name__ == "__main__":
    main()
