"""DataLoader throughput: images/s over 60,000 in-memory 28x28 images, batch 64, torchlike vs torch.

Usage: python bench/dataloader.py [--workers 0 2] [--epochs 2] [--json out.json]

Three datasets: a TensorDataset of float32 images and int64 labels (the MNIST-in-memory pattern);
a Dataset returning a numpy image and an int per sample (collated by default_collate); and a
Dataset indexing tensors per sample (``x[i], y[i]``: one tensor op per sample). Each epoch is timed
from creating the iterator (worker start-up included) to the last batch; the best epoch is
reported. "to device" repeats the TensorDataset epoch moving every batch to the accelerator (and
waiting for it), when one is visible to that library.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

N, BATCH = 60_000, 64


class NumpyImages:
    """Per sample: a numpy float32 image and a Python int label."""

    def __init__(self, images, labels):
        self.images, self.labels = images, labels

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        return self.images[i], int(self.labels[i])


class TensorImages:
    """Per sample: two tensor indexing ops, as in most hand-written Datasets over tensors."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def datasets(lib, images, labels):
    x, y = lib.from_numpy(images[:, None]), lib.from_numpy(labels)
    return {
        "TensorDataset": lib.utils.data.TensorDataset(x, y),
        "numpy samples": NumpyImages(images, labels),
        "tensor samples": TensorImages(x, y),
    }


def accelerator(lib):
    return "cuda" if lib.cuda.is_available() else None


def epoch(lib, loader, device=None):
    t0 = time.perf_counter()
    n = 0
    last = None
    for xb, _yb in loader:
        if device is not None:
            xb = xb.to(device)
            last = xb
        n += len(xb)
    if last is not None:
        last.sum().item()  # wait for the transfers
    assert n == N
    return time.perf_counter() - t0


def run(lib, workers, epochs):
    rng = np.random.default_rng(0)
    images = rng.random((N, 28, 28), dtype=np.float32)
    labels = rng.integers(0, 10, N).astype(np.int64)
    rows = []
    for name, ds in datasets(lib, images, labels).items():
        for w in workers:
            loader = lib.utils.data.DataLoader(ds, batch_size=BATCH, shuffle=True, num_workers=w)
            best = min(epoch(lib, loader) for _ in range(epochs))
            rows.append({"dataset": name, "workers": w, "images_per_s": N / best, "epoch_s": best})
    dev = accelerator(lib)
    if dev is not None:
        ds = datasets(lib, images, labels)["TensorDataset"]
        for w in workers:
            loader = lib.utils.data.DataLoader(ds, batch_size=BATCH, shuffle=True, num_workers=w)
            best = min(epoch(lib, loader, dev) for _ in range(epochs))
            rows.append(
                {
                    "dataset": f"TensorDataset to {dev}",
                    "workers": w,
                    "images_per_s": N / best,
                    "epoch_s": best,
                }
            )
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, nargs="+", default=[0, 2])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--libs", nargs="+", default=["torchlike", "torch"])
    parser.add_argument("--json")
    args = parser.parse_args()
    results = {}
    for name in args.libs:
        if name == "torch":
            import torch as lib
        else:
            import torchlike as lib
        results[name] = run(lib, args.workers, args.epochs)
    print(f"{'dataset':<24} {'workers':>7} " + " ".join(f"{n + ' img/s':>16}" for n in args.libs))
    for i, row in enumerate(results[args.libs[0]]):
        others = [next((r for r in results[n] if (r["dataset"], r["workers"]) == (row["dataset"], row["workers"])),
                       None) for n in args.libs]  # fmt: skip
        cells = [f"{o['images_per_s']:>16,.0f}" if o else f"{'-':>16}" for o in others]
        print(f"{row['dataset']:<24} {row['workers']:>7} " + " ".join(cells))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {"machine": platform.platform(), "cpus": os.cpu_count(), "results": results}, f, indent=1
            )


if __name__ == "__main__":
    main()
