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
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BACKENDS = ["torch", "torch.compile", "torchlike", "torchlike.lazy", "torchlike.compile", "torchlike.compile.eager",
            "jax"]
# torchlike's execution mode per backend (its default depends on the machine: say it explicitly). The compiled
# backend runs in the machine's default mode, as a user's script does (lazy on a GPU); "torchlike.compile.eager"
# is the same with lazy mode off, to check that the default mode costs nothing.
_LAZY = {"torchlike": "0", "torchlike.lazy": "1", "torchlike.compile.eager": "0"}


def _device_name(device: str) -> str:
    if device.startswith("cuda"):
        try:
            import jax

            return jax.devices("gpu")[0].device_kind
        except Exception:  # noqa: BLE001 - only for the report
            return "cuda"
    return f"{platform.processor() or platform.machine()} ({os.cpu_count()} cpus)"


def measure(workload: str, backend: str, device: str, steps: int, warmup: int, loops: int = 0,
            until_hot: float = 0) -> dict:
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

        compiled = lib.compile if ".compile" in backend else None
        step, flops = workloads.MAKERS[workload](lib, device, compiled)
    t0 = time.perf_counter()
    sync(step())
    first = time.perf_counter() - t0
    firsts = [first]
    for _ in range(warmup):
        t0 = time.perf_counter()
        sync(step())
        firsts.append(time.perf_counter() - t0)
    row = {}
    if until_hot and backend.startswith("torchlike"):
        # steady state is after the autotuned program took over (on a GPU it compiles in the background)
        from torchlike._core import _xla_tiers

        t0 = time.perf_counter()
        n = 0
        while _xla_tiers.busy() and time.perf_counter() - t0 < until_hot:
            sync(step())
            n += 1
        row.update(steps_waiting_for_hot=n, seconds_waiting_for_hot=time.perf_counter() - t0,
                   hot_ready=not _xla_tiers.busy())  # fmt: skip
    samples = []
    for _ in range(steps):
        t0 = time.perf_counter()
        sync(step())
        samples.append(time.perf_counter() - t0)
    ms = statistics.median(samples) * 1e3
    row.update({"workload": workload, "backend": backend, "ms_per_step": ms, "steps_per_s": 1e3 / ms,
                "first_step_s": first, "warmup_s": firsts, "peak_mem_bytes": peak(),
                "early_ms_per_step": statistics.median(firsts[1:]) * 1e3 if len(firsts) > 1 else None,
                "tflops": (flops / (ms / 1e3) / 1e12) if flops else None})  # fmt: skip
    if loops:
        # a loop that never waits (one sync at the end) and one that reads the loss every step
        last = None
        t0 = time.perf_counter()
        for _ in range(loops):
            last = step()
        sync(last)
        row["unsynced_ms_per_step"] = (time.perf_counter() - t0) / loops * 1e3
        t0 = time.perf_counter()
        for _ in range(loops):
            step().item()
        row["item_ms_per_step"] = (time.perf_counter() - t0) / loops * 1e3
    if backend.startswith("torchlike"):
        lazy_stats = lib.lazy.stats()
        row["lazy"] = lib.lazy.enabled()
        row["lazy_stats"] = {k: v for k, v in lazy_stats.items() if isinstance(v, (int, float))}
        from torchlike._compile import stats as compile_stats

        row["compile_stats"] = dict(compile_stats)
    return row


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cpu")
    p.add_argument("--workloads", default="dispatch_fwd,dispatch_fwd_bwd,mlp,cnn,gpt,matmul_mlp")
    p.add_argument("--backends", default=",".join(BACKENDS))
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--loops", type=int, default=0, help="also time an unsynchronised and a loss.item() loop")
    p.add_argument("--until-hot", type=float, default=0,
                   help="torchlike: before timing, step for up to this many seconds while an autotuned compile runs")
    p.add_argument("--timeout", type=int, default=1800, help="seconds per workload and backend")
    p.add_argument("--fresh-cache", action="store_true", help="each process starts with an empty compilation cache")
    p.add_argument("--out")
    p.add_argument("--png")
    p.add_argument("--one", nargs=2, metavar=("WORKLOAD", "BACKEND"), help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.one:
        print(json.dumps(measure(a.one[0], a.one[1], a.device, a.steps, a.warmup, a.loops, a.until_hot)))
        return
    rows = []
    report = {"device": a.device, "device_name": _device_name(a.device), "date": time.strftime("%Y-%m-%d"),
              "python": platform.python_version(), "rows": rows}  # fmt: skip
    try:
        import jax
        import torch

        report["versions"] = {"jax": jax.__version__, "torch": torch.__version__}
    except ImportError:
        pass

    def save() -> None:  # after every row: a run cut short still leaves what it measured
        if a.out:
            os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
            with open(a.out, "w") as f:
                json.dump(report, f, indent=1)

    for w in a.workloads.split(","):
        for b in a.backends.split(","):
            cmd = [sys.executable, __file__, "--one", w, b, "--device", a.device, "--steps", str(a.steps),
                   "--warmup", str(a.warmup), "--loops", str(a.loops), "--until-hot", str(a.until_hot)]  # fmt: skip
            env = dict(os.environ)
            if b in _LAZY:
                env["TORCHLIKE_LAZY"] = _LAZY[b]
            if a.fresh_cache:  # an empty persistent cache (and XLA's autotune cache inside it) per process
                env.pop("JAX_COMPILATION_CACHE_DIR", None)
                env["TORCHLIKE_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-cache-")
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout, env=env)
                err = None if r.returncode == 0 else (r.stderr.strip().splitlines() or ["?"])[-1]
            except subprocess.TimeoutExpired:
                err = f"timed out after {a.timeout} s"
            if err is not None:
                rows.append({"workload": w, "backend": b, "error": err})
                print(f"{w:18s} {b:24s} FAILED: {err}", flush=True)
                save()
                continue
            row = json.loads(r.stdout.strip().splitlines()[-1])
            rows.append(row)
            save()
            if "skipped" in row:
                continue
            tf = f"{row['tflops']:.1f} TFLOP/s" if row["tflops"] else ""
            loops = (f"  unsynced {row['unsynced_ms_per_step']:.3f}  item {row['item_ms_per_step']:.3f} ms/step"
                     if "item_ms_per_step" in row else "")  # fmt: skip
            hot = row.get("lazy_stats", {}).get("hot_takeover_at") or row.get("compile_stats", {}).get("hot_takeover_at")
            hot = f"  hot program from run {hot}" if hot else ""
            print(f"{w:18s} {b:24s} {row['ms_per_step']:9.3f} ms/step  first {row['first_step_s']:6.2f} s  "
                  f"peak {row['peak_mem_bytes'] / 2**20:8.1f} MiB  {tf}{loops}{hot}", flush=True)  # fmt: skip
    save()
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
