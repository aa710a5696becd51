"""Changing batch sizes on the CPU (issue 34): an MLP 64-128-10, forward and backward of a cross-entropy loss
at every batch size 1..N, two passes; torch and torchlike each in a fresh process with an empty compile cache.

    python bench/shape_sweep.py                 # N=200, torch then torchlike (cold kernels on) then off
    python bench/shape_sweep.py --n 50 --variants torch,torchlike

Prints seconds per pass, RSS before and after each pass (MB), the final loss, and torchlike's counters.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def child(backend: str, n: int) -> dict:
    if backend == "torch":
        import torch
    else:
        sys.path.insert(0, ROOT)
        import torchlike as torch
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    model(torch.randn(3, 64)).sum().backward()  # one step before measuring, as the numbers did
    out = {"rss_start_mb": round(_rss_mb())}
    for p in range(2):
        t = time.perf_counter()
        for b in range(1, n + 1):
            x, y = torch.randn(b, 64), torch.randint(0, 10, (b,))
            loss = F.cross_entropy(model(x), y)
            loss.backward()
        out[f"pass{p}_s"] = round(time.perf_counter() - t, 2)
        out[f"pass{p}_rss_mb"] = round(_rss_mb())
    out["loss"] = float(loss.detach())
    out["grad_sum"] = float(model[0].weight.grad.sum())
    if backend != "torch":
        stats = torch.compile_stats()
        stats.pop("by_op")
        from torchlike._core import cold_kernels

        out["compile_stats"] = stats
        out["cold"] = {k: round(v, 2) for k, v in cold_kernels.stats.items()}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--variants", default="torch,torchlike,torchlike_compiled")
    ap.add_argument("--child")
    ap.add_argument("--json")
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.child, a.n)))
        return
    results = {}
    for v in a.variants.split(","):
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, TORCHLIKE_CACHE_DIR=cache, TORCHLIKE_LAZY="0", PYTHONPATH=ROOT,
                       TORCHLIKE_COLD_KERNELS="0" if v == "torchlike_compiled" else "1")  # fmt: skip
            backend = "torch" if v == "torch" else "torchlike"
            p = subprocess.run([sys.executable, __file__, "--child", backend, "--n", str(a.n)], env=env,
                               capture_output=True, text=True)  # fmt: skip
            if p.returncode:
                raise RuntimeError(p.stderr[-3000:])
            results[v] = json.loads(p.stdout.strip().splitlines()[-1])
            print(v, results[v], flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
