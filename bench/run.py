"""The benchmark harness: each workload under torch (eager, torch.compile), torchlike (eager,
compiled) and hand-written JAX + optax, each in a fresh process; ms/step, steps/s, compile time,
peak device memory and achieved TFLOP/s; JSON and (with matplotlib) a PNG bar chart.

    python bench/run.py --device cuda --out bench/results/h100.json
    python bench/run.py --device cpu --workloads dispatch_fwd,mlp --steps 20
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BACKENDS = ["torch", "torch.compile", "torchlike", "torchlike.lazy", "torchlike.compile", "jax"]
# torchlike's execution mode per backend (its default depends on the machine: say it explicitly)
_LAZY = {"torchlike": "0", "torchlike.lazy": "1", "torchlike.compile": "0"}


def _device_name(device: str) -> str:
    if device.startswith("cuda"):
        try:
            import jax

            return jax.devices("gpu")[0].device_kind
        except Exception:  # noqa: BLE001 - only for the report
            return "cuda"
    return f"{platform.processor() or platform.machine()} ({os.cpu_count()} cpus)"


def measure(workload: str, backend: str, device: str, steps: int, warmup: int) -> dict:
    """Run in this process: build, time the first step (compile), then ``steps`` steady steps."""
    sys.path.insert(0, HERE)
    sys.path.insert(0, os.path.dirname(HERE))
    if backend == "jax":
        import jax
        import jax_reference

        if workload not in jax_reference.MAKERS:
            return {"workload": workload, "backend": backend, "skipped": "no hand-written JAX version"}

        jax.config.update("jax_default_matmul_precision", "highest")
        dev = jax.devices("gpu" if device.startswith("cuda") else "cpu")[0]
        step, flops = jax_reference.MAKERS[workload](dev)

        def sync(out):
            jax.block_until_ready(out)

        def peak():
            return (dev.memory_stats() or {}).get("peak_bytes_in_use", 0)
    else:
        import workloads

        if backend.startswith("torchlike"):
            import torchlike as lib

            def sync(out):
                import jax

                jax.block_until_ready(out._data())

            def peak():
                return lib.cuda.max_memory_allocated() if device.startswith("cuda") else 0
        else:
            import torch as lib

            lib.backends.cuda.matmul.allow_tf32 = False  # full float32, as torchlike and the JAX reference
            lib.backends.cudnn.allow_tf32 = False  # (cuDNN convolutions default to TF32 otherwise)

            def sync(out):
                if device.startswith("cuda"):
                    lib.cuda.synchronize()

            def peak():
                return lib.cuda.max_memory_allocated() if device.startswith("cuda") else 0

        compiled = lib.compile if backend.endswith(".compile") else None
        step, flops = workloads.MAKERS[workload](lib, device, compiled)
    t0 = time.perf_counter()
    sync(step())
    first = time.perf_counter() - t0
    firsts = [first]
    for _ in range(warmup):
        t0 = time.perf_counter()
        sync(step())
        firsts.append(time.perf_counter() - t0)
    samples = []
    for _ in range(steps):
        t0 = time.perf_counter()
        sync(step())
        samples.append(time.perf_counter() - t0)
    ms = statistics.median(samples) * 1e3
    lazy = None
    if backend.startswith("torchlike") and lib.lazy.enabled():  # what lazy execution did (replay, compiles)
        s = lib.lazy.stats()
        lazy = {k: s.get(k, 0) for k in ("flushes", "replayed", "replayed_steps", "replay_misses", "compiles",
                                         "hits", "cold_runs", "donated")}  # fmt: skip
    return {"workload": workload, "backend": backend, "ms_per_step": ms, "steps_per_s": 1e3 / ms,
            "first_step_s": first, "warmup_s": firsts, "peak_mem_bytes": peak(),
            "tflops": (flops / (ms / 1e3) / 1e12) if flops else None, "lazy": lazy}  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cpu")
    p.add_argument("--workloads", default="dispatch_fwd,dispatch_fwd_bwd,mlp,cnn,gpt,matmul_mlp")
    p.add_argument("--backends", default=",".join(BACKENDS))
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--out")
    p.add_argument("--png")
    p.add_argument("--one", nargs=2, metavar=("WORKLOAD", "BACKEND"), help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.one:
        print(json.dumps(measure(a.one[0], a.one[1], a.device, a.steps, a.warmup)))
        return
    rows = []
    for w in a.workloads.split(","):
        for b in a.backends.split(","):
            cmd = [sys.executable, __file__, "--one", w, b, "--device", a.device, "--steps", str(a.steps),
                   "--warmup", str(a.warmup)]  # fmt: skip
            env = dict(os.environ)
            if b in _LAZY:
                env["TORCHLIKE_LAZY"] = _LAZY[b]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env=env)
            if r.returncode != 0:
                err = (r.stderr.strip().splitlines() or ["?"])[-1]
                rows.append({"workload": w, "backend": b, "error": err})
                print(f"{w:18s} {b:18s} FAILED: {err}", flush=True)
                continue
            row = json.loads(r.stdout.strip().splitlines()[-1])
            rows.append(row)
            if "skipped" in row:
                continue
            tf = f"{row['tflops']:.1f} TFLOP/s" if row["tflops"] else ""
            print(f"{w:18s} {b:18s} {row['ms_per_step']:9.3f} ms/step  first {row['first_step_s']:6.2f} s  "
                  f"peak {row['peak_mem_bytes'] / 2**20:8.1f} MiB  {tf}", flush=True)  # fmt: skip
    report = {"device": a.device, "device_name": _device_name(a.device), "date": time.strftime("%Y-%m-%d"),
              "python": platform.python_version(), "rows": rows}  # fmt: skip
    try:
        import jax
        import torch

        report["versions"] = {"jax": jax.__version__, "torch": torch.__version__}
    except ImportError:
        pass
    if a.out:
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        with open(a.out, "w") as f:
            json.dump(report, f, indent=1)
    if a.png:
        _chart(rows, a.png, report["device_name"])


def _chart(rows: list, path: str, title: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no chart")
        return
    workloads = sorted({r["workload"] for r in rows if "ms_per_step" in r})
    backends = [b for b in BACKENDS if any(r.get("backend") == b for r in rows)]
    fig, ax = plt.subplots(figsize=(10, 4))
    width = 0.8 / max(len(backends), 1)
    for i, b in enumerate(backends):
        vals = []
        for w in workloads:
            base = next((r["ms_per_step"] for r in rows if r["workload"] == w and r["backend"] == "jax"
                         and "ms_per_step" in r), None)  # fmt: skip
            me = next((r["ms_per_step"] for r in rows if r["workload"] == w and r["backend"] == b
                       and "ms_per_step" in r), None)  # fmt: skip
            vals.append(base / me if base and me else 0)
        ax.bar([j + i * width for j in range(len(workloads))], vals, width, label=b)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(workloads))], workloads)
    ax.set_ylabel("speed relative to hand-written JAX")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)


if __name__ == "__main__":
    main()
