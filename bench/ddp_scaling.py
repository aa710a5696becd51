"""Data-parallel scaling of the GPT training step (bench/workloads.py's GPT) over 1/2/4/8 GPUs.

    python bench/ddp_scaling.py --gpus 1,2 --steps 20
    python bench/ddp_scaling.py --gpus 1,2,4,8 --steps 30 --out bench/results/ddp_scaling_h100.json
    python bench/ddp_scaling.py --device cpu --gpus 1,2 --steps 6 --tiny      # smoke run without GPUs

Variants (``--variants``), each in fresh processes:
  torch-ddp             real torch, DistributedDataParallel over NCCL, one process per GPU (torchrun)
  torch-ddp-compile     the same under torch.compile
  torchlike-ddp         torchlike DDP, one process per GPU (python -m torchlike.distributed.run)
  torchlike-ddp-compile torchlike DDP over torchlike.compile(model)
  torchlike-dp          torchlike nn.DataParallel: one process, the batch split over a GPU mesh
  torchlike-dp-compile  the same with the whole training step under torchlike.compile

Strong scaling by default: the global batch (``--global-batch``, default 16 x the largest GPU count)
is the same for every GPU count, so the parameters after the run can be compared with the 1-GPU
run. ``--scaling weak`` keeps ``--batch-per-gpu`` fixed instead (throughput only). The model
starts from torch's CPU generator (seed 0) in both libraries, and all runs read the same token
batches. Timed: the steps after ``--warmup``, between two barriers. Reported per run: steps/s,
tokens/s, scaling efficiency = tokens/s / (n x tokens/s at 1 GPU), first-step seconds, and the
relative difference of the parameter update from the same variant's 1-GPU run.

This orchestrator imports neither JAX nor torch (either would take GPU memory); workers do.
NVLink multicast stays off (NCCL_NVLS_ENABLE=0 and friends) in every process it starts.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VARIANTS = ["torch-ddp", "torch-ddp-compile", "torchlike-ddp", "torchlike-ddp-compile", "torchlike-dp",
            "torchlike-dp-compile"]  # fmt: skip
DEFAULT_VARIANTS = "torch-ddp,torchlike-ddp,torchlike-dp-compile"
MULTICAST_OFF = {
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    "NVSHMEM_DISABLE_NVLS": "1",
}
TINY = dict(layers=2, d=64, heads=4, seq=32, batch=0, vocab=128)


# --- worker -----------------------------------------------------------------------------------


def _gpt_cfg(a: argparse.Namespace) -> dict:
    sys.path.insert(0, HERE)
    import workloads

    return dict(TINY) if a.tiny else dict(workloads.GPT_CFG)


def _tokens(a: argparse.Namespace, cfg: dict, global_batch: int):
    import numpy as np

    rng = np.random.default_rng(1234)
    return rng.integers(0, cfg["vocab"], size=(a.steps, global_batch, cfg["seq"] + 1), dtype=np.int64)


def _param_sample(lib, params, stride: int):
    flat = lib.cat([p.detach().float().reshape(-1) for p in params])
    return flat.cpu().numpy()[::stride].copy()


def worker(a: argparse.Namespace) -> None:
    import numpy as np
    import workloads  # noqa: F401  (bench dir is on sys.path: the script's folder)

    cfg = _gpt_cfg(a)
    variant = a.worker
    is_torch = variant.startswith("torch-")
    ddp = "-ddp" in variant
    compiled = variant.endswith("-compile")
    on_gpu = a.device == "cuda"
    if is_torch:
        import torch as lib
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        lib.backends.cuda.matmul.allow_tf32 = False
    else:
        import jax

        import torchlike as lib
        import torchlike.distributed as dist
        from torchlike.nn.parallel import DistributedDataParallel as DDP
    F = lib.nn.functional
    if ddp:
        dist.init_process_group("nccl" if on_gpu else "gloo")
        rank, world = dist.get_rank(), dist.get_world_size()
        local_rank = int(os.environ["LOCAL_RANK"])
    else:
        rank, world, local_rank = 0, 1, 0
    n = world if ddp else a.ngpus
    if not on_gpu:
        device = "cpu"
    elif is_torch:
        lib.cuda.set_device(local_rank)
        device = f"cuda:{local_rank}"
    else:  # the GPU this JAX process owns, whatever its index in JAX's global device list
        from torchlike._core import device as _device

        mine = set(jax.local_devices())
        device = f"cuda:{next(i for i, d in enumerate(_device._gpus()) if d in mine)}"

    global_batch = a.batch_per_gpu * n if a.scaling == "weak" else a.global_batch
    if global_batch % n:
        raise SystemExit(f"global batch {global_batch} is not divisible by {n} GPUs")
    tokens = _tokens(a, cfg, global_batch)
    if ddp:  # this rank's rows of every global batch
        per = global_batch // world
        tokens = tokens[:, rank * per : (rank + 1) * per]

    class LossModel(lib.nn.Module):
        """GPT plus per-token cross entropy (what DataParallel gathers; the mean is taken outside)."""

        def __init__(self):
            super().__init__()
            self.gpt = workloads.build_gpt(lib, cfg)

        def forward(self, x, y):
            logits = self.gpt(x)
            v = logits.shape[-1]
            return F.cross_entropy(logits.reshape(-1, v), y.reshape(-1), reduction="none").reshape(y.shape)

    lib.manual_seed(0)
    model = LossModel()  # built on the CPU: torch's generator, same numbers in both libraries
    stride = max(1, sum(p.numel() for p in model.parameters()) // 500_000)
    init = _param_sample(lib, model.parameters(), stride)
    model.to(device)
    if ddp:
        net = DDP(lib.compile(model) if compiled and not is_torch else model)
        if compiled and is_torch:
            net = lib.compile(net)
    else:
        net = lib.nn.DataParallel(model, device_ids=list(range(n))) if (n > 1 or not on_gpu) else model
    opt = lib.optim.AdamW(model.parameters(), lr=a.lr)
    # DataParallel scatters host batches itself; a batch committed to cuda:0 could not enter a compiled
    # program whose parameters live on the whole mesh (see docs/distributed.md)
    batch_device = device if ddp or n == 1 else "cpu"
    batches = [(lib.tensor(t[:, :-1]).to(batch_device), lib.tensor(t[:, 1:]).to(batch_device))
               for t in tokens]  # fmt: skip
    amp_device = "cuda" if on_gpu else "cpu"

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        with lib.autocast(device_type=amp_device, dtype=lib.bfloat16, enabled=a.precision == "bf16"):
            loss = net(x, y).mean()
        loss.backward()
        opt.step()
        return loss

    if compiled and not ddp:
        step = lib.compile(step)

    def sync():
        if is_torch:
            if on_gpu:
                lib.cuda.synchronize()
        else:
            jax.block_until_ready([p._data() for p in model.parameters()])
        if ddp:
            dist.barrier()

    losses = []
    t0 = time.perf_counter()
    losses.append(step(*batches[0]))
    sync()
    first = time.perf_counter() - t0
    for i in range(1, a.steps):
        if i == a.warmup:
            sync()
            t0 = time.perf_counter()
        losses.append(step(*batches[i]))
    sync()
    elapsed = time.perf_counter() - t0
    timed = a.steps - a.warmup
    losses = lib.stack([l.detach().float() for l in losses])
    if ddp:  # the global batch's loss, as DataParallel reports it
        dist.all_reduce(losses)
        losses = losses / world
    if rank == 0:
        peak = 0
        if on_gpu:
            if is_torch:
                peak = lib.cuda.max_memory_allocated()
            else:
                peak = max((d.memory_stats() or {}).get("peak_bytes_in_use", 0) for d in jax.local_devices())
        result = {
            "variant": variant, "gpus": n, "global_batch": global_batch, "seq": cfg["seq"],
            "timed_steps": timed, "seconds": elapsed, "steps_per_s": timed / elapsed,
            "tokens_per_s": timed * global_batch * cfg["seq"] / elapsed, "first_step_s": first,
            "losses": losses.tolist(), "precision": a.precision, "peak_mem_bytes_per_process": peak,
            "device_name": (lib.cuda.get_device_name(0) if on_gpu else platform.machine()),
            "version": lib.__version__ if is_torch else f"jax {jax.__version__}",
        }  # fmt: skip
        np.save(
            os.path.join(a.outdir, f"{variant}_n{n}.npy"),
            np.stack([init, _param_sample(lib, model.parameters(), stride)]),
        )
        with open(os.path.join(a.outdir, f"{variant}_n{n}.json"), "w") as f:
            json.dump(result, f)
    if ddp:
        dist.destroy_process_group()


# --- orchestrator -----------------------------------------------------------------------------


def _command(a: argparse.Namespace, variant: str, n: int, outdir: str) -> tuple[list, dict]:
    common = [
        "--worker",
        variant,
        "--ngpus",
        str(n),
        "--outdir",
        outdir,
        "--device",
        a.device,
        "--steps",
        str(a.steps),
        "--warmup",
        str(a.warmup),
        "--scaling",
        a.scaling,
        "--global-batch",
        str(a.global_batch),
        "--batch-per-gpu",
        str(a.batch_per_gpu),
        "--lr",
        str(a.lr),
        "--precision",
        a.precision,
    ]
    common += ["--tiny"] if a.tiny else []  # fmt: skip
    env = dict(os.environ, **MULTICAST_OFF)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, env.get("PYTHONPATH")) if p)
    if a.device == "cpu" and variant.startswith("torchlike-dp"):
        env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={n}"
    if "-ddp" in variant:
        launcher = "torch.distributed.run" if variant.startswith("torch-") else "torchlike.distributed.run"
        return [
            sys.executable,
            "-m",
            launcher,
            "--standalone",
            "--nproc-per-node",
            str(n),
            __file__,
        ] + common, env
    return [sys.executable, __file__] + common, env


def _update_diff(outdir: str, variant: str, n: int, ref: str) -> float | None:
    import numpy as np

    a, b = os.path.join(outdir, f"{variant}_n{n}.npy"), os.path.join(outdir, f"{ref}.npy")
    if not (os.path.exists(a) and os.path.exists(b)):
        return None
    (i0, p0), (i1, p1) = np.load(b), np.load(a)
    d0, d1 = p0 - i0, p1 - i1
    return float(np.linalg.norm(d1 - d0) / max(np.linalg.norm(d0), 1e-30))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--gpus", default="1,2")
    p.add_argument("--variants", default=DEFAULT_VARIANTS)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--scaling", choices=["strong", "weak"], default="strong")
    p.add_argument("--global-batch", type=int, default=0, help="strong scaling; default 16 x the most GPUs")
    p.add_argument("--batch-per-gpu", type=int, default=16, help="weak scaling")
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument(
        "--precision", choices=["bf16", "fp32"], default="bf16", help="bf16 autocast or plain fp32"
    )
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    p.add_argument("--tiny", action="store_true", help="a 2-layer d=64 GPT (smoke runs)")
    p.add_argument("--out", default=None)
    p.add_argument("--timeout", type=int, default=1200)
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--ngpus", type=int, default=1, help=argparse.SUPPRESS)
    p.add_argument("--outdir", help=argparse.SUPPRESS)
    a = p.parse_args()
    os.environ.update(MULTICAST_OFF)
    if a.worker:
        worker(a)
        return
    gpus = [int(g) for g in a.gpus.split(",")]
    if not a.global_batch:
        a.global_batch = 16 * max(gpus) if not a.tiny else 4 * max(gpus)
    if a.warmup >= a.steps:
        raise SystemExit("--warmup must be smaller than --steps")
    variants = a.variants.split(",")
    for v in variants:
        if v not in VARIANTS:
            raise SystemExit(f"unknown variant {v}; choose from {', '.join(VARIANTS)}")
    outdir = tempfile.mkdtemp(prefix="ddp_scaling_")
    rows = []
    print(f"{'variant':22s} {'gpus':>4s} {'steps/s':>9s} {'tokens/s':>11s} {'eff':>6s} {'first s':>8s} "
          f"{'upd diff':>9s} {'final loss':>10s}", flush=True)  # fmt: skip
    for v in variants:
        base = None
        for n in gpus:
            cmd, env = _command(a, v, n, outdir)
            t0 = time.perf_counter()
            r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=a.timeout)
            path = os.path.join(outdir, f"{v}_n{n}.json")
            if r.returncode != 0 or not os.path.exists(path):
                tail = (r.stderr.strip().splitlines() or ["?"])[-12:]
                # Paths relative to the repo, so recorded results name no machine.
                tail = [line.replace(ROOT + os.sep, "") for line in tail]
                rows.append({"variant": v, "gpus": n, "error": "\n".join(tail)})
                print(
                    f"{v:22s} {n:4d} FAILED ({time.perf_counter() - t0:.0f} s):\n  " + "\n  ".join(tail),
                    flush=True,
                )
                continue
            with open(path) as f:
                row = json.load(f)
            row["wall_s"] = time.perf_counter() - t0
            if n == gpus[0]:
                base = row
            if base is not None:
                row["efficiency"] = row["tokens_per_s"] / (n / base["gpus"] * base["tokens_per_s"])
            if a.scaling == "strong":
                row["update_rel_diff_vs_first"] = _update_diff(outdir, v, n, f"{v}_n{gpus[0]}")
                row["update_rel_diff_vs_torch_ddp"] = _update_diff(outdir, v, n, f"torch-ddp_n{gpus[0]}")
            rows.append(row)
            diff = row.get("update_rel_diff_vs_first")
            print(f"{v:22s} {n:4d} {row['steps_per_s']:9.2f} {row['tokens_per_s']:11.0f} "
                  f"{row.get('efficiency', float('nan')):6.2f} {row['first_step_s']:8.1f} "
                  f"{'' if diff is None else f'{diff:.2e}':>9s} {row['losses'][-1]:10.4f}", flush=True)  # fmt: skip
    report = {"date": time.strftime("%Y-%m-%d"), "device": a.device, "scaling": a.scaling, "gpus": gpus,
              "steps": a.steps, "warmup": a.warmup, "global_batch": a.global_batch, "tiny": a.tiny,
              "precision": a.precision,
              "env": MULTICAST_OFF, "rows": rows}  # fmt: skip
    if a.out:
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        with open(a.out, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
