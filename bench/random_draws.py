"""Microseconds per small random draw, the kind torchvision's transforms make for every image (CPU thread time,
best of 3 rounds), torch and torchlike in one run (each in its own process).

Usage: python bench/random_draws.py [--n 3000] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CASES = {
    "randint(0, 9, (1,)).item()": lambda t, g: t.randint(0, 9, size=(1,)).item(),
    "randint(0, 9, (1,), generator=g).item()": lambda t, g: t.randint(0, 9, size=(1,), generator=g).item(),
    "rand(1).item()": lambda t, g: t.rand(1).item(),
    "bool(rand(1) < 0.5)": lambda t, g: bool(t.rand(1) < 0.5),
    "empty(1).uniform_(0.08, 1.0).item()": lambda t, g: t.empty(1).uniform_(0.08, 1.0).item(),
    "randperm(4)": lambda t, g: t.randperm(4),
}


def measure(lib: str, n: int) -> dict:
    if lib == "torch":
        import torch as t
    else:
        sys.path.insert(0, ROOT)
        import torchlike as t
    t.manual_seed(0)
    g = t.Generator().manual_seed(1)
    out = {}
    for name, fn in CASES.items():
        for _ in range(200):
            fn(t, g)
        best = float("inf")
        for _ in range(3):
            t0 = time.thread_time()
            for _ in range(n):
                fn(t, g)
            best = min(best, (time.thread_time() - t0) / n)
        out[name] = round(best * 1e6, 2)
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=3000)
    p.add_argument("--json")
    p.add_argument("--lib", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.lib:
        print(json.dumps(measure(a.lib, a.n)))
        return
    results = {"unit": "us per draw (thread time)", "cpus": os.cpu_count()}
    for lib in ("torch", "torchlike"):
        run = subprocess.run([sys.executable, __file__, "--lib", lib, "--n", str(a.n)], capture_output=True, text=True)
        results[lib] = json.loads(run.stdout) if run.returncode == 0 else f"failed: {run.stderr.strip()[-300:]}"
    print(json.dumps(results, indent=1))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
