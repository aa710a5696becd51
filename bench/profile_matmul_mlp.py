"""Why is the compiled matmul-bound MLP step slower than eager? Variants side by side, one command.

The workload is bench/workloads.py's ``matmul_mlp`` (4096-8192-8192-4096, batch 2048, bf16
autocast, SGD). Each variant runs in a fresh process and reports ms/step (median):

- ``eager``: torchlike, op by op;
- ``compile``: torchlike.compile, as shipped;
- ``compile-nodonate``: params not donated (is in-place update/aliasing the difference?);
- ``compile-notriton``: XLA's Triton GEMM fusions off, matmuls go to cuBLAS as eager ones do
  (GPU only: does fusing the bf16 casts into a Triton GEMM cost time?);
- ``jax``: the hand-written JAX step (bench/jax_reference.py).

For the compiled step it also summarises the optimised XLA program: how its dots are lowered
(cuBLAS custom calls, Triton fusions, plain dots on the CPU), operand dtypes, layout copies and
transposes, converts, and which parameters alias outputs (donation); the full text is written
to ``--dump``.

    python bench/profile_matmul_mlp.py --device cuda                 # full size, on the GPU
    python bench/profile_matmul_mlp.py --device cpu --width 256 --batch 256
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
VARIANTS = ["eager", "compile", "compile-nodonate", "compile-notriton", "jax"]


def _one(variant: str, device: str, width: int, batch: int, steps: int, dump: str | None) -> dict:
    sys.path.insert(0, HERE)
    sys.path.insert(0, os.path.dirname(HERE))
    import jax

    if variant == "jax":
        import jax_reference

        jax.config.update("jax_default_matmul_precision", "highest")
        dev = jax.devices("gpu" if device.startswith("cuda") else "cpu")[0]
        step, _ = jax_reference.make_matmul_mlp(dev, width, batch)
        sync = jax.block_until_ready
    else:
        import workloads

        import torchlike as torch

        compiled = None
        if variant.startswith("compile"):
            options = {"donate": False} if variant == "compile-nodonate" else None
            compiled = lambda f: torch.compile(f, options=options)  # noqa: E731
        step, _ = workloads.make_matmul_mlp(torch, device, compiled, width, batch)

        def sync(out):
            jax.block_until_ready(out._data())

    for _ in range(3):
        sync(step())
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        sync(step())
        times.append(time.perf_counter() - t0)
    row = {"variant": variant, "ms_per_step": statistics.median(times) * 1e3}
    if variant != "eager":
        row["program"] = _summary(step, dump and os.path.join(dump, f"{variant}.hlo.txt"))
    return row


def _summary(step, path: str | None) -> dict:
    entry = None
    if hasattr(step, "lower"):  # the hand-written JAX step
        lowered = step.lower()
    else:
        entry = next(e for e in step.cache.values() if not e.eager)
        state = [b.get() for b in entry.state]
        lowered = entry.jitted.lower(state[: entry.n_mut], state[entry.n_mut :], [], step._scalars_now(entry),
                                       step._key_state())  # fmt: skip
    text = lowered.compile().as_text()
    if path:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    ops = collections.Counter()
    dots = []
    for line in text.splitlines():
        m = re.search(r"=\s*(\S+)\s+([\w-]+)\(", line)
        if not m:
            continue
        shape, op = m.groups()
        ops[op] += 1
        if op == "custom-call":
            target = re.search(r'custom_call_target="([^"]+)"', line)
            dots.append(f"custom-call {target.group(1) if target else '?'} -> {shape}")
        elif op == "fusion" and ("triton" in line or "__cublas" in line):
            kind = re.search(r"kind=(\w+)", line)
            dots.append(f"fusion {kind.group(1) if kind else '?'}{' triton' if 'triton' in line else ''} -> {shape}")
        elif op == "dot":
            dots.append(f"dot -> {shape}")
    header = text.splitlines()[0] if text else ""
    return {"dots": dots, "copies": ops["copy"], "transposes": ops["transpose"], "converts": ops["convert"],
            "fusions": ops["fusion"], "aliased_params": header.count("-alias)"),
            "state_arrays": entry.n_state if entry else "-", "written": entry.n_mut if entry else "-"}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--width", type=int, default=4096)
    ap.add_argument("--batch", type=int, default=2048)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--dump", default=os.path.join(HERE, "results", "matmul_mlp_hlo"))
    ap.add_argument("--json")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(_one(a.one, a.device, a.width, a.batch, a.steps, a.dump)))
        return
    rows = []
    for v in a.variants.split(","):
        if v == "compile-notriton" and not a.device.startswith("cuda"):
            continue
        env = dict(os.environ)
        if v == "compile-notriton":
            env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_gpu_enable_triton_gemm=false").strip()
        cmd = [sys.executable, __file__, "--one", v, "--device", a.device, "--width", str(a.width), "--batch",
               str(a.batch), "--steps", str(a.steps), "--dump", a.dump]  # fmt: skip
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
        if r.returncode != 0:
            print(f"{v:18s} FAILED: {(r.stderr.strip().splitlines() or ['?'])[-1]}", flush=True)
            continue
        row = json.loads(r.stdout.strip().splitlines()[-1])
        rows.append(row)
        print(f"{v:18s} {row['ms_per_step']:9.3f} ms/step", flush=True)
        prog = row.get("program")
        if prog:
            print(f"{'':18s} state {prog['state_arrays']} (written {prog['written']}, aliased to outputs {prog['aliased_params']}),"
                  f" fusions {prog['fusions']}, copies {prog['copies']}, transposes {prog['transposes']}, "
                  f"converts {prog['converts']}")  # fmt: skip
            for d in prog["dots"]:
                print(f"{'':20s}{d}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": a.device, "width": a.width, "batch": a.batch, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
