"""DataLoader + transforms throughput (images/s): a CIFAR-style augmentation pipeline over 10,000 in-memory
32x32 RGB images, batch 128, torchlike.vision vs torch + torchvision (when torchvision imports).

Usage: python bench/vision_pipeline.py [--backend both|torchlike|torchvision] [--workers 2] [--epochs 2]
       [--n 10000] [--json out.json]

``--backend both`` (the default) runs torchlike.vision, then torch + torchvision in the same process on the same
images, so one command records both on one machine; where torchvision does not import, its entry says why (and
``--backend torchvision`` exits with that error). The JSON carries the library versions next to the numbers.

Pipelines: "PIL" = RandomCrop(32, padding=4) + RandomHorizontalFlip on PIL images, then ToTensor + Normalize
(the usual torchvision CIFAR recipe); "tensor" = the same crop/flip on uint8 CHW tensors, then
ConvertImageDtype + Normalize; "tensor_resized_crop" = RandomResizedCrop(32) (antialiased resize of uint8 tensors)
+ flip, then the same casts. Each epoch is timed from creating the iterator (worker start-up included) to
the last batch; the best epoch is reported.
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

MEAN, STD = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)


class Images:
    def __init__(self, lib, arrays, labels, transform, as_tensor):
        from PIL import Image

        self.transform, self.labels = transform, labels
        if as_tensor:
            self.items = [lib.from_numpy(np.ascontiguousarray(a.transpose(2, 0, 1))) for a in arrays]
        else:
            self.items = [Image.fromarray(a) for a in arrays]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.transform(self.items[i]), int(self.labels[i])


def pipelines(lib, T):
    crop_flip = [T.RandomCrop(32, padding=4), T.RandomHorizontalFlip()]
    return {
        "PIL": (T.Compose(crop_flip + [T.ToTensor(), T.Normalize(MEAN, STD)]), False),
        "tensor": (T.Compose(crop_flip + [T.ConvertImageDtype(lib.float32), T.Normalize(MEAN, STD)]), True),
        "tensor_resized_crop": (T.Compose([T.RandomResizedCrop(32, antialias=True), T.RandomHorizontalFlip(),
                                           T.ConvertImageDtype(lib.float32), T.Normalize(MEAN, STD)]), True),  # fmt: skip
    }


def run(lib, T, arrays, labels, workers, epochs):
    out = {}
    for name, (transform, as_tensor) in pipelines(lib, T).items():
        ds = Images(lib, arrays, labels, transform, as_tensor)
        loader = lib.utils.data.DataLoader(ds, batch_size=128, shuffle=True, num_workers=workers)
        best = float("inf")
        for _ in range(epochs):
            t0 = time.perf_counter()
            n = 0
            for x, _y in loader:
                n += x.shape[0]
            best = min(best, time.perf_counter() - t0)
        out[name] = round(n / best)
    return out


def run_torchlike(arrays, labels, a):
    import jax

    import torchlike
    from torchlike.vision import transforms as T

    torchlike.manual_seed(0)
    versions = {"torchlike": torchlike.__version__, "jax": jax.__version__}
    return run(torchlike, T, arrays, labels, a.workers, a.epochs), versions


def import_torchvision():
    """torch, torchvision and its transforms, a note on how it was loaded, or the reason they do not import.

    A torchvision wheel built for another torch build (here: 0.28.0+cu130 beside torch 2.13.0+cpu) fails in its
    C++ operator registrations (``torchvision::nms`` ...). The transforms these pipelines use are Python over
    torch ops, so the import is retried without those registrations, and the note says so."""
    import types

    try:
        import torch
        import torchvision
        from torchvision import transforms
    except Exception as e:
        first = f"{type(e).__name__}: {e}"
        for name in [m for m in sys.modules if m.startswith("torchvision")]:
            del sys.modules[name]
        sys.modules["torchvision._meta_registrations"] = types.ModuleType("torchvision._meta_registrations")
        try:
            import torch
            import torchvision
            from torchvision import transforms
        except Exception as e2:
            return None, f"{first}; without its C++ operators: {type(e2).__name__}: {e2}"
        note = f"torchvision's C++ operators not loaded ({first}); the transforms used here are its Python code"
        return (torch, torchvision, transforms, note), None
    return (torch, torchvision, transforms, None), None


def run_torchvision(libs, arrays, labels, a):
    torch, torchvision, T, note = libs
    torch.manual_seed(0)
    versions = {"torch": torch.__version__, "torchvision": torchvision.__version__}
    if note:
        versions["torchvision_note"] = note
    return run(torch, T, arrays, labels, a.workers, a.epochs), versions


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--backend", choices=("both", "torchlike", "torchvision"), default="both")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--n", type=int, default=10_000)
    p.add_argument("--json")
    a = p.parse_args()
    rng = np.random.default_rng(0)
    arrays = rng.integers(0, 256, (a.n, 32, 32, 3), dtype=np.uint8)
    labels = rng.integers(0, 10, a.n)
    results = {"machine": platform.processor() or platform.machine(), "cpus": os.cpu_count(), "workers": a.workers,
               "images": a.n, "versions": {}}  # fmt: skip
    if a.backend in ("both", "torchlike"):
        results["torchlike"], versions = run_torchlike(arrays, labels, a)
        results["versions"].update(versions)
    if a.backend in ("both", "torchvision"):
        libs, why = import_torchvision()
        if libs is not None:
            results["torch+torchvision"], versions = run_torchvision(libs, arrays, labels, a)
            results["versions"].update(versions)
        elif a.backend == "torchvision":
            raise SystemExit(f"torchvision does not import here: {why}")
        else:
            results["torch+torchvision"] = f"not run: torchvision does not import here ({why})"
    print(json.dumps(results, indent=1))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
