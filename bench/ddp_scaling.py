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

``--must-show`` is issue 32's matrix as one command, built to fit one device call of 9 minutes on a
2-GPU machine: weak scaling of a 12-layer d=768 GPT at seq 1024 (``--batch-per-gpu`` 8 sequences per
GPU, 12 steps, 3 of them warm-up) for torch DDP, torch FSDP, torchlike DDP, torchlike
DataParallel+compile and torchlike FSDP on ``--gpus`` (default 1,2): tokens/s, scaling efficiency,
per-GPU peak memory, the losses of every step against torch DDP's at the same GPU count, with torch
FSDP vs torch DDP as the torch-vs-torch noise floor; then a memory model (an 8-layer d=2048 GPT, one
short sequence per GPU, so parameters and AdamW state dominate) on the most GPUs for torchlike FSDP,
torchlike DDP, torch FSDP and torch DDP. 1-GPU runs share the machine, each pinned to a free GPU (``--pair``);
each run has ``--timeout`` seconds (170) and none runs past ``--budget-s`` (480): a failed, late or
skipped run is reported and the rest go on. The end prints a markdown table and a PASS/FAIL line per
"must show" item. ``--tiny --device cpu`` runs it end to end on CPU.

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
import signal
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
# parameters and AdamW state dominate memory (~420M parameters, 16 bytes each): the FSDP memory check.
# Few wide layers: XLA's compile time grows with the layer count, and the run must fit a short budget.
MEMORY = dict(layers=8, d=2048, heads=16, seq=128, batch=0, vocab=8192)
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


class _Job:
    """One run: a variant on n GPUs, started as a process group (killed whole on a timeout)."""

    def __init__(self, a: argparse.Namespace, variant: str, n: int, outdir: str, gpu: int | None) -> None:
        self.args, self.variant, self.n, self.outdir = a, variant, n, outdir
        cmd, env = _command(a, variant, n, outdir)
        if gpu is not None:  # a 1-GPU run pinned to its own GPU, next to another one
            env["CUDA_VISIBLE_DEVICES"] = str(gpu)
        self.t0 = time.perf_counter()
        self.log = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=self.log,
                                     text=True, start_new_session=True)  # fmt: skip
        self.gpu = gpu
        self.until = float("inf")

    def finish(self, deadline: float) -> dict:
        """Wait for the run (killing it at ``deadline``); its result row, or an error row."""
        try:
            self.proc.wait(timeout=max(1.0, deadline - time.perf_counter()))
            why = None
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)  # the launcher and every worker it started
            self.proc.wait()
            why = f"timed out after {time.perf_counter() - self.t0:.0f} s"
        wall = time.perf_counter() - self.t0
        path = os.path.join(self.outdir, f"{self.variant}_n{self.n}.json")
        if why is None and self.proc.returncode == 0 and os.path.exists(path):
            with open(path) as f:
                row = json.load(f)
            row["wall_s"] = wall
            if self.gpu is not None:
                row["pinned_gpu"] = self.gpu
            return row
        self.log.seek(0)
        tail = (self.log.read().strip().splitlines() or ["?"])[-12:]
        tail = [line.replace(ROOT + os.sep, "") for line in tail]  # recorded results name no machine
        why = why or f"exit code {self.proc.returncode}"
        return {"variant": self.variant, "gpus": self.n, "error": why + "\n" + "\n".join(tail), "wall_s": wall}


def _run(a: argparse.Namespace, jobs: list, deadline: float) -> list:
    """Run ``jobs`` [(args, variant, n, outdir)] in order. With ``--pair``, 1-GPU runs share the machine: each is
    pinned to a free GPU of 0 and 1 as soon as one is free; a multi-GPU run waits for the machine to
    be empty and runs alone. A run gets at most ``--timeout`` seconds and never passes ``deadline``;
    a failing, late or skipped run is recorded and the rest go on."""
    rows = []
    queue = list(jobs)
    running: dict = {}  # GPU (or None: the whole machine) -> its job

    def reap(block: bool) -> None:
        while running:
            for slot, job in list(running.items()):
                if block or job.proc.poll() is not None or time.perf_counter() > job.until:
                    row = job.finish(job.until)
                    row["model_name"] = job.args.model
                    rows.append(row)
                    _print_row(row)
                    del running[slot]
                    return
            time.sleep(0.2)

    while queue:
        ja, v, n, outdir = queue[0]
        if deadline - time.perf_counter() < a.min_run_s:
            for sa, sv, sn, _ in queue:
                rows.append({"variant": sv, "gpus": sn, "model_name": sa.model, "error": "skipped: out of time",
                             "wall_s": 0.0})  # fmt: skip
                print(f"{sv:22s} {sn:4d} SKIPPED (the time budget is spent)", flush=True)
            break
        shared = a.pair and n == 1
        free = [g for g in (0, 1) if g not in running] if shared and None not in running else []
        if shared and free:
            queue.pop(0)
            job = _Job(ja, v, n, outdir, free[0])
        elif not running:
            queue.pop(0)
            job = _Job(ja, v, n, outdir, None)
        else:
            reap(block=False)
            continue
        job.until = min(deadline, time.perf_counter() + a.timeout)
        running[job.gpu] = job
    while running:
        reap(block=False)
    return rows


def _print_row(row: dict) -> None:
    v, n = row["variant"] + (" (memory)" if row.get("model_name") == "memory" else ""), row["gpus"]
    if "error" in row:
        print(f"{v:22s} {n:4d} FAILED ({row['wall_s']:.0f} s): " + row["error"].replace("\n", "\n    "), flush=True)
        return
    print(f"{v:22s} {n:4d} {row['steps_per_s']:9.2f} {row['tokens_per_s']:11.0f} {row['first_step_s']:8.1f} "
          f"{row['peak_mem_bytes_per_gpu'] / 2**30:8.2f} {row['losses'][-1]:10.4f} {row['wall_s']:7.0f}",
          flush=True)  # fmt: skip


_HEADER = (f"{'variant':22s} {'gpus':>4s} {'steps/s':>9s} {'tokens/s':>11s} {'first s':>8s} {'peak GiB':>8s} "
           f"{'final loss':>10s} {'wall s':>7s}")  # fmt: skip


def _derive(a: argparse.Namespace, rows: list, gpus: list, outdir: str) -> None:
    """Scaling efficiency against the same variant's smallest GPU count, and update differences."""
    ok = [r for r in rows if "error" not in r]
    for r in ok:
        base = next((b for b in ok if b["variant"] == r["variant"] and b["gpus"] == gpus[0]), None)
        if base is not None:
            r["efficiency"] = r["tokens_per_s"] / (r["gpus"] / base["gpus"] * base["tokens_per_s"])
        if a.scaling == "strong":
            r["update_rel_diff_vs_first"] = _update_diff(outdir, r["variant"], r["gpus"], f"{r['variant']}_n{gpus[0]}")
            r["update_rel_diff_vs_torch_ddp"] = _update_diff(outdir, r["variant"], r["gpus"], f"torch-ddp_n{gpus[0]}")


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


def _table(rows: list, gpus: list, losses: dict) -> list:
    """The summary: per variant, tokens/s at each GPU count, efficiency, peak GiB/GPU, loss diffs."""
    lo, hi = gpus[0], gpus[-1]
    by = {(r["variant"], r["gpus"]): r for r in rows}
    out = [f"| variant | tokens/s, {lo} GPU | tokens/s, {hi} GPUs | scaling efficiency | peak GiB/GPU "
           f"({lo} → {hi}) | loss max diff vs torch DDP ({lo} / {hi} GPUs) |", "|---|---:|---:|---:|---:|---:|"]  # fmt: skip

    def cell(r: dict | None) -> str:
        if r is None:
            return "—"
        if "error" in r:
            return "skipped" if r["error"].startswith("skipped") else "fails"
        return f"{r['tokens_per_s']:,.0f}"

    for v in dict.fromkeys(r["variant"] for r in rows):
        cells = [cell(by.get((v, n))) for n in (lo, hi)]
        r_hi = by.get((v, hi), {})
        eff = f"{r_hi['efficiency']:.2f}" if "efficiency" in r_hi else "—"
        peaks = " → ".join(f"{by[(v, n)]['peak_mem_bytes_per_gpu'] / 2**30:.2f}" for n in (lo, hi)
                           if (v, n) in by and "error" not in by[(v, n)])  # fmt: skip
        diffs = " / ".join("—" if losses.get(str(n), {}).get(v) is None else f"{losses[str(n)][v]:.1e}" for n in (lo, hi))
        out.append(f"| {v} | {cells[0]} | {cells[1]} | {eff} | {peaks or '—'} | {diffs if v != 'torch-ddp' else 'ref'} |")
    return out


def _checks(rows: list, gpus: list, losses: dict, memory: dict | None) -> list:
    """Issue 32's "must show" items, each PASS / FAIL / n/a with its numbers."""
    by = {(r["variant"], r["gpus"]): r for r in rows if "error" not in r}
    out = []

    def line(ok: bool | None, text: str) -> None:
        out.append(f"{'n/a ' if ok is None else 'PASS' if ok else 'FAIL'} {text}")

    for n in gpus:
        t, l = by.get(("torch-ddp", n)), by.get(("torchlike-ddp", n))
        ok = None if not (t and l) else l["tokens_per_s"] >= t["tokens_per_s"]
        line(ok, f"torchlike DDP tokens/s >= torch DDP's at {n} GPU(s): "
                 f"{l and round(l['tokens_per_s'])} vs {t and round(t['tokens_per_s'])}")  # fmt: skip
        ok = None if not (t and l and t["peak_mem_bytes_per_gpu"]) else \
            l["peak_mem_bytes_per_gpu"] <= 1.2 * t["peak_mem_bytes_per_gpu"]
        line(ok, f"torchlike DDP peak <= 1.2 x torch DDP's at {n} GPU(s): "
                 f"{l and round(l['peak_mem_bytes_per_gpu'] / 2**30, 2)} vs {t and round(t['peak_mem_bytes_per_gpu'] / 2**30, 2)} GiB")  # fmt: skip
    hi = gpus[-1]
    ran = next((r for r in rows if r["variant"] == "torchlike-fsdp" and r["gpus"] == hi), None)
    skipped = ran is None or ran.get("error", "").startswith("skipped")
    line(None if skipped else "error" not in ran, f"torchlike FSDP runs at {hi} GPUs")
    if memory is not None:
        m = {r["variant"]: r for r in memory["rows"] if "error" not in r and r["gpus"] == hi}
        f, d = m.get("torchlike-fsdp"), m.get("torchlike-ddp")
        ok = None if not (f and d and d["peak_mem_bytes_per_gpu"]) else f["peak_mem_bytes_per_gpu"] < d["peak_mem_bytes_per_gpu"]
        line(ok, f"memory model, {hi} GPUs: torchlike FSDP peak < torchlike DDP's: "
                 f"{f and round(f['peak_mem_bytes_per_gpu'] / 2**30, 2)} vs {d and round(d['peak_mem_bytes_per_gpu'] / 2**30, 2)} GiB")  # fmt: skip
    for v in ("torchlike-ddp", "torchlike-dp-compile", "torchlike-fsdp"):
        r = by.get((v, hi))
        if r is not None or any(x["variant"] == v for x in rows):
            eff = r.get("efficiency") if r else None
            line(None if eff is None else eff >= 0.9, f"{v} scaling efficiency at {hi} GPUs >= 0.9: "
                 f"{'—' if eff is None else round(eff, 3)}")  # fmt: skip
    for n in gpus:
        d = losses.get(str(n), {})
        floor = d.get("torch-fsdp")
        for v in ("torchlike-ddp", "torchlike-dp-compile", "torchlike-fsdp"):
            if v in d:
                line(None if floor is None else d[v] <= floor, f"{v} losses within the torch-vs-torch floor at {n} "
                     f"GPU(s): {d[v]:.2e} vs {'—' if floor is None else f'{floor:.2e}'}")  # fmt: skip
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--gpus", default=None, help="GPU counts (default 1,2)")
    p.add_argument("--variants", default=None)
    p.add_argument("--steps", type=int, default=None, help="default 20 (12 with --must-show)")
    p.add_argument("--warmup", type=int, default=None, help="default 5 (3 with --must-show)")
    p.add_argument("--scaling", choices=["strong", "weak"], default=None)
    p.add_argument("--global-batch", type=int, default=0, help="strong scaling; default 16 x the most GPUs")
    p.add_argument("--batch-per-gpu", type=int, default=None, help="weak scaling (default 16; 8 with --must-show)")
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument(
        "--precision", choices=["bf16", "fp32"], default="bf16", help="bf16 autocast or plain fp32"
    )
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    p.add_argument("--model", choices=["default", "gpt12", "memory"], default=None,
                   help="default: 6L d512 seq 256; gpt12: 12L d768 seq 1024; memory: 8L d2048 seq 128")
    p.add_argument("--tiny", action="store_true", help="a 2-layer d=64 GPT (smoke runs)")
    p.add_argument("--must-show", action="store_true", help="issue 32's matrix (see the module doc)")
    p.add_argument("--out", default=None)
    p.add_argument("--timeout", type=int, default=None, help="seconds per run (default 1200; 170 with --must-show)")
    p.add_argument("--budget-s", type=float, default=None,
                   help="stop starting runs past this many seconds (default none; 480 with --must-show)")
    p.add_argument("--min-run-s", type=float, default=45.0, help="a run needs this much of the budget to start")
    p.add_argument("--pair", default=None, choices=["on", "off"],
                   help="run 1-GPU runs two at a time on GPUs 0 and 1 (default: on for --must-show on GPUs)")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--ngpus", type=int, default=1, help=argparse.SUPPRESS)
    p.add_argument("--outdir", help=argparse.SUPPRESS)
    a = p.parse_args()
    os.environ.update(MULTICAST_OFF)
    must = a.must_show
    a.steps = a.steps or (12 if must else 20)
    a.warmup = a.warmup if a.warmup is not None else (3 if must else 5)
    if a.worker:
        a.model = a.model or "default"
        worker(a)
        return
    a.gpus = a.gpus or "1,2"
    a.variants = a.variants or (MUST_SHOW_VARIANTS if must else DEFAULT_VARIANTS)
    a.scaling = a.scaling or ("weak" if must else "strong")
    a.batch_per_gpu = a.batch_per_gpu or (8 if must else 16)
    a.model = a.model or ("gpt12" if must else "default")
    a.timeout = a.timeout or (170 if must else 1200)
    budget = a.budget_s if a.budget_s is not None else (480.0 if must else float("inf"))
    gpus = sorted(int(g) for g in a.gpus.split(","))
    a.pair = (a.pair == "on") if a.pair else (must and a.device == "cuda" and max(gpus) >= 2)
    if not a.global_batch:
        a.global_batch = 16 * max(gpus) if not a.tiny else 4 * max(gpus)
    if a.warmup >= a.steps:
        raise SystemExit("--warmup must be smaller than --steps")
    variants = a.variants.split(",")
    for v in variants:
        if v not in VARIANTS:
            raise SystemExit(f"unknown variant {v}; choose from {', '.join(VARIANTS)}")
    started = time.perf_counter()
    deadline = started + budget
    outdir = tempfile.mkdtemp(prefix="ddp_scaling_")
    mem_outdir = tempfile.mkdtemp(prefix="ddp_memory_")
    # parameters and AdamW state dominate the memory model: FSDP's per-GPU peak against DDP's
    mem_args = argparse.Namespace(**{**vars(a), "model": "memory", "steps": 3, "warmup": 1,
                                     "scaling": "weak", "batch_per_gpu": 1})  # fmt: skip
    hi = max(gpus)
    # The order is the priority when the budget runs short. Sharing GPUs, the long (torchlike:
    # compiles) 1-GPU runs start first, so the short ones fill in beside them. torch FSDP on the most
    # GPUs only gives the noise floor there, so it and the torch memory rows come last.
    first = sorted(variants, key=lambda v: not v.startswith("torchlike-")) if a.pair else variants
    late = {"torch-fsdp"} if must else set()
    jobs = [(a, v, gpus[0], outdir) for v in first]
    jobs += [(a, v, n, outdir) for n in gpus[1:] for v in variants if v not in late]
    if must:
        jobs += [(mem_args, v, hi, mem_outdir) for v in ("torchlike-fsdp", "torchlike-ddp")]
    jobs += [(a, v, n, outdir) for n in gpus[1:] for v in variants if v in late]
    if must:
        jobs += [(mem_args, v, hi, mem_outdir) for v in ("torch-fsdp", "torch-ddp")]
    if must:
        print(f"(memory) rows: the memory model ({'tiny' if a.tiny else '8L d2048'}, one sequence of "
              f"{(TINY_MEMORY if a.tiny else MEMORY)['seq']} per GPU, {hi} GPUs)", flush=True)
    print(_HEADER, flush=True)
    all_rows = _run(a, jobs, deadline)
    rows = [r for r in all_rows if r.get("model_name") != "memory"]
    mem_rows = [r for r in all_rows if r.get("model_name") == "memory"]
    _derive(a, rows, gpus, outdir)
    losses = _loss_diffs(rows)
    memory = None
    if mem_rows:
        ok = {r["variant"]: r for r in mem_rows if "error" not in r}
        ddp = ok.get("torchlike-ddp", {}).get("peak_mem_bytes_per_gpu")
        tddp = ok.get("torch-ddp", {}).get("peak_mem_bytes_per_gpu")
        memory = {"rows": mem_rows,
                  "ratio_vs_torchlike_ddp": {v: r["peak_mem_bytes_per_gpu"] / ddp for v, r in ok.items() if ddp},
                  "ratio_vs_torch_ddp": {v: r["peak_mem_bytes_per_gpu"] / tddp for v, r in ok.items() if tddp}}  # fmt: skip
    wall = time.perf_counter() - started
    print("\n".join(_table(rows, gpus, losses)))
    floor = {n: d.get("torch-fsdp") for n, d in losses.items()}
    print(f"loss max |diff| vs torch DDP over {a.steps} steps, per GPU count (torch-fsdp = the torch-vs-torch floor "
          f"{json.dumps(floor)}): {json.dumps(losses)}")  # fmt: skip
    if memory is not None:
        print("memory model peak GiB/GPU: " + json.dumps({r["variant"]: round(r["peak_mem_bytes_per_gpu"] / 2**30, 3)
                                                         for r in mem_rows if "error" not in r}))  # fmt: skip
        print(f"  / torchlike DDP's: {json.dumps({k: round(v, 3) for k, v in memory['ratio_vs_torchlike_ddp'].items()})}")
    if must:
        print("\n".join(_checks(rows, gpus, losses, memory)))
    print(f"total wall time {wall:.0f} s", flush=True)
    report = {"date": time.strftime("%Y-%m-%d"), "device": a.device, "scaling": a.scaling, "gpus": gpus,
              "steps": a.steps, "warmup": a.warmup, "global_batch": a.global_batch, "tiny": a.tiny,
              "batch_per_gpu": a.batch_per_gpu, "model_name": a.model, "must_show": must, "paired": a.pair,
              "precision": a.precision, "loss_max_abs_diff_vs_torch_ddp": losses, "memory": memory,
              "wall_s": wall, "env": MULTICAST_OFF, "rows": rows}  # fmt: skip
    if a.out:
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        with open(a.out, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
