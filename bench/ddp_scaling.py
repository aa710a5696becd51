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
  torch-fsdp            real torch, FullyShardedDataParallel (FULL_SHARD, one unit per GPT block), torchrun
  torchlike-fsdp        torchlike FullyShardedDataParallel: one process, parameters sharded over a GPU mesh
  torchlike-fsdp-compile  the same with the whole training step under torchlike.compile

``--must-show`` is issue 24's matrix as one command (about 9 minutes on 4 GPUs is the budget):
weak scaling of a 12-layer d=768 GPT at seq 1024 (``--batch-per-gpu`` sequences per GPU) for
torch DDP, torch FSDP, torchlike DDP, torchlike DataParallel+compile and torchlike FSDP on
``--gpus`` (default 1,2,4): tokens/s, scaling efficiency, per-GPU peak memory, the losses of the
first 20 steps against torch DDP's at the same GPU count, with torch FSDP vs torch DDP as the
torch-vs-torch noise floor; then a memory check (a 24-layer d=1024 GPT, one short sequence per
GPU, so parameters and AdamW state dominate): per-GPU peak of torch DDP on 1 GPU against torch
FSDP and torchlike FSDP on the most GPUs. ``--tiny --device cpu`` runs it end to end on CPU.

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
VARIANTS = ["torch-ddp", "torch-ddp-compile", "torch-fsdp", "torchlike-ddp", "torchlike-ddp-compile", "torchlike-dp",
            "torchlike-dp-compile", "torchlike-fsdp", "torchlike-fsdp-compile"]  # fmt: skip
DEFAULT_VARIANTS = "torch-ddp,torchlike-ddp,torchlike-dp-compile"
MUST_SHOW_VARIANTS = "torch-ddp,torch-fsdp,torchlike-ddp,torchlike-dp-compile,torchlike-fsdp"
MULTICAST_OFF = {
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    "NVSHMEM_DISABLE_NVLS": "1",
}
TINY = dict(layers=2, d=64, heads=4, seq=32, batch=0, vocab=128)
GPT12 = dict(layers=12, d=768, heads=12, seq=1024, batch=0, vocab=8192)  # issue 24's weak-scaling model (~98M)
# parameters and AdamW state dominate memory (~320M parameters, 16 bytes each): the FSDP memory check
MEMORY = dict(layers=24, d=1024, heads=16, seq=128, batch=0, vocab=8192)
TINY_MEMORY = dict(layers=2, d=128, heads=4, seq=16, batch=0, vocab=128)


# --- worker -----------------------------------------------------------------------------------


def _gpt_cfg(a: argparse.Namespace) -> dict:
    sys.path.insert(0, HERE)
    import workloads

    if a.model == "memory":
        return dict(TINY_MEMORY if a.tiny else MEMORY)
    if a.tiny:
        return dict(TINY)
    return dict(GPT12) if a.model == "gpt12" else dict(workloads.GPT_CFG)


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
    fsdp = "-fsdp" in variant
    ddp = "-ddp" in variant or variant == "torch-fsdp"  # one process per GPU (torch's FSDP too)
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
    block = type(model.gpt.blocks[0])
    if fsdp:
        if is_torch:
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
            from torch.distributed.fsdp.wrap import ModuleWrapPolicy

            net = FSDP(model, auto_wrap_policy=ModuleWrapPolicy({block}), device_id=lib.device(device))
        else:
            from torchlike.distributed.device_mesh import DeviceMesh
            from torchlike.distributed.fsdp import FullyShardedDataParallel as FSDP
            from torchlike.distributed.fsdp.wrap import ModuleWrapPolicy

            mesh = DeviceMesh("cuda" if on_gpu else "cpu", list(range(n)))
            net = FSDP(model, auto_wrap_policy=ModuleWrapPolicy({block}), device_mesh=mesh)
    elif ddp:
        net = DDP(lib.compile(model) if compiled and not is_torch else model)
        if compiled and is_torch:
            net = lib.compile(net)
    else:
        net = lib.nn.DataParallel(model, device_ids=list(range(n))) if (n > 1 or not on_gpu) else model
    opt = lib.optim.AdamW(net.parameters(), lr=a.lr)
    # DataParallel and FSDP scatter host batches themselves; a batch committed to cuda:0 could not enter
    # a compiled program whose parameters live on the whole mesh (see docs/distributed.md)
    batch_device = device if (ddp or n == 1) else "cpu"
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
    if fsdp:  # the original parameters, gathered (every rank takes part)
        final = _param_sample(lib, [v for k, v in net.state_dict().items()], stride)
    else:
        final = _param_sample(lib, model.parameters(), stride)
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
            "losses": losses.tolist(), "precision": a.precision, "peak_mem_bytes_per_gpu": peak,
            "model": {k: v for k, v in cfg.items() if k != "batch"},
            "device_name": (lib.cuda.get_device_name(0) if on_gpu else platform.machine()),
            "version": lib.__version__ if is_torch else f"jax {jax.__version__}",
        }  # fmt: skip
        np.save(
            os.path.join(a.outdir, f"{variant}_n{n}.npy"),
            np.stack([init, final]),
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
    common += ["--model", a.model]
    if a.device == "cpu" and (variant.startswith("torchlike-dp") or variant.startswith("torchlike-fsdp")):
        env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={n}"
    if "-ddp" in variant or variant == "torch-fsdp":
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


def _run(a: argparse.Namespace, variants: list, gpus: list, outdir: str) -> list:
    rows = []
    print(f"{'variant':22s} {'gpus':>4s} {'steps/s':>9s} {'tokens/s':>11s} {'eff':>6s} {'first s':>8s} "
          f"{'peak GiB':>8s} {'upd diff':>9s} {'final loss':>10s}", flush=True)  # fmt: skip
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
                rows.append({"variant": v, "gpus": n, "model_name": a.model, "error": "\n".join(tail)})
                print(
                    f"{v:22s} {n:4d} FAILED ({time.perf_counter() - t0:.0f} s):\n  " + "\n  ".join(tail),
                    flush=True,
                )
                continue
            with open(path) as f:
                row = json.load(f)
            row["wall_s"] = time.perf_counter() - t0
            row["model_name"] = a.model
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
                  f"{row['peak_mem_bytes_per_gpu'] / 2**30:8.2f} "
                  f"{'' if diff is None else f'{diff:.2e}':>9s} {row['losses'][-1]:10.4f}", flush=True)  # fmt: skip
    return rows


def _loss_diffs(rows: list) -> dict:
    """Per GPU count: each variant's largest |loss - torch DDP's loss| over the steps (same batches);
    torch FSDP's is the torch-vs-torch noise floor."""
    ref = {r["gpus"]: r["losses"] for r in rows if r["variant"] == "torch-ddp" and "losses" in r}
    out: dict = {}
    for r in rows:
        if "losses" in r and r["gpus"] in ref and r["variant"] != "torch-ddp":
            d = max(abs(x - y) for x, y in zip(r["losses"], ref[r["gpus"]]))
            r["loss_max_abs_diff_vs_torch_ddp"] = d
            out.setdefault(str(r["gpus"]), {})[r["variant"]] = d
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--gpus", default=None, help="GPU counts (default 1,2; 1,2,4 with --must-show)")
    p.add_argument("--variants", default=None)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--scaling", choices=["strong", "weak"], default=None)
    p.add_argument("--global-batch", type=int, default=0, help="strong scaling; default 16 x the most GPUs")
    p.add_argument("--batch-per-gpu", type=int, default=None, help="weak scaling (default 16; 8 with --must-show)")
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument(
        "--precision", choices=["bf16", "fp32"], default="bf16", help="bf16 autocast or plain fp32"
    )
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    p.add_argument("--model", choices=["default", "gpt12", "memory"], default=None,
                   help="default: 6L d512 seq 256; gpt12: 12L d768 seq 1024; memory: 24L d1024 seq 128")
    p.add_argument("--tiny", action="store_true", help="a 2-layer d=64 GPT (smoke runs)")
    p.add_argument("--must-show", action="store_true", help="issue 24's matrix (see the module doc)")
    p.add_argument("--out", default=None)
    p.add_argument("--timeout", type=int, default=1200)
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--ngpus", type=int, default=1, help=argparse.SUPPRESS)
    p.add_argument("--outdir", help=argparse.SUPPRESS)
    a = p.parse_args()
    os.environ.update(MULTICAST_OFF)
    if a.worker:
        a.model = a.model or "default"
        worker(a)
        return
    must = a.must_show
    a.gpus = a.gpus or ("1,2,4" if must else "1,2")
    a.variants = a.variants or (MUST_SHOW_VARIANTS if must else DEFAULT_VARIANTS)
    a.scaling = a.scaling or ("weak" if must else "strong")
    a.batch_per_gpu = a.batch_per_gpu or (8 if must else 16)
    a.model = a.model or ("gpt12" if must else "default")
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
    started = time.perf_counter()
    rows = _run(a, variants, gpus, outdir)
    losses = _loss_diffs(rows)
    memory = None
    if must:  # parameters and AdamW state dominate: FSDP's per-GPU peak against 1-GPU DDP's
        mem_args = argparse.Namespace(**{**vars(a), "model": "memory", "steps": 3, "warmup": 1,
                                         "scaling": "weak", "batch_per_gpu": 1})  # fmt: skip
        mem_outdir = tempfile.mkdtemp(prefix="ddp_memory_")
        print(f"memory check ({'tiny' if a.tiny else '24L d1024'}, one sequence per GPU):", flush=True)
        mem_rows = _run(mem_args, ["torch-ddp"], [gpus[0]], mem_outdir)
        for v in ("torch-fsdp", "torchlike-fsdp"):
            mem_rows += _run(mem_args, [v], [max(gpus)], mem_outdir)
        ddp_peak = next((r["peak_mem_bytes_per_gpu"] for r in mem_rows if "error" not in r
                         and r["variant"] == "torch-ddp"), 0)  # fmt: skip
        memory = {"rows": mem_rows, "ratio_vs_torch_ddp_1gpu": {
            r["variant"]: (r["peak_mem_bytes_per_gpu"] / ddp_peak if ddp_peak else None)
            for r in mem_rows if "error" not in r and r["variant"] != "torch-ddp"}}  # fmt: skip
    wall = time.perf_counter() - started
    print(f"loss max |diff| vs torch DDP per GPU count (torch-fsdp = the noise floor): {json.dumps(losses)}")
    if memory is not None:
        print(f"per-GPU peak memory / torch DDP's on {gpus[0]} GPU: {json.dumps(memory['ratio_vs_torch_ddp_1gpu'])}")
    print(f"total wall time {wall:.0f} s", flush=True)
    report = {"date": time.strftime("%Y-%m-%d"), "device": a.device, "scaling": a.scaling, "gpus": gpus,
              "steps": a.steps, "warmup": a.warmup, "global_batch": a.global_batch, "tiny": a.tiny,
              "batch_per_gpu": a.batch_per_gpu, "model_name": a.model, "must_show": must,
              "precision": a.precision, "loss_max_abs_diff_vs_torch_ddp": losses, "memory": memory,
              "wall_s": wall, "env": MULTICAST_OFF, "rows": rows}  # fmt: skip
    if a.out:
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        with open(a.out, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
