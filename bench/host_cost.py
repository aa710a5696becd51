"""Host time per op of recording an op chain, torchlike (lazy and eager) against torch, on the CPU.

A 100-op elementwise chain (``y * 1.01``, ``y + x`` on 16x16 float32) with and without a tensor that
requires grad, plus the walk ``backward()`` makes over it. Timed with ``time.thread_time`` (this
thread's CPU time, so other processes on a loaded machine disturb it less), best of 15 runs, after
warm-up. ``lazy`` replays the recurring chain (guarded replay, see docs/lazy.md); ``lazy-record``
records every step in full (``TORCHLIKE_LAZY_REPLAY=0``). Lazy figures are recording only: the fused
program runs after the timed region, so they are the host cost a GPU step pays while the device works.
torch's figures include its (tiny) CPU compute.

Whole training steps (``--no-steps`` skips them): an MLP (64-64-64-10, ReLU, batch 32, cross-entropy,
Adam) and the GPT of ``bench/workloads.py`` at ``bench/lazy_host.py --small``'s sizes (6 layers, d=64,
8 heads, seq 16, batch 2, vocab 128, bf16 autocast, AdamW: the same op structure, short CPU compute), and
that GPT in float32 (``gpt_fp32``: torch's bf16 CPU kernels are slow, so its bound below is looser with autocast).
Each step is timed in phases with ``time.thread_time``: forward+loss, ``loss.backward()``,
``opt.step(); opt.zero_grad()``, and the whole step including ``loss.item()``; median over the timed
steps, after warm-up (lazy: past the recording steps, so replay is active, compiles joined), then the
median over ``--repeats`` such processes (3; each one's figures stay in the JSON under ``repeats``). In lazy
mode the thread time of each compiled program call (blocked until ready) is subtracted, as in
``bench/lazy_host.py``, so the lazy figures are host cost only; that call's own dispatch is subtracted
with it. torch runs with one intra-op thread, so its figures are host cost plus all of its (small)
CPU compute: an upper bound on its host cost.

Ops of a step: the aten ops torch dispatches for that phase of the same step (counted with a
``TorchDispatchMode`` on the torch run, ``loss.item()``'s ``_local_scalar_dense`` included in the whole
step). The same counts divide every backend's times, so µs per op compares the same work. torch's CPU
Adam/AdamW default to the per-parameter loop (about a dozen aten ops per parameter), whereas torchlike
records its optimizer as one node; torchlike's own recorded lazy nodes per step are reported beside it
(``nodes``).

    python bench/host_cost.py [--json out.json] [--no-chain] [--no-steps] [--workloads mlp,gpt,gpt_fp32] [--repeats 3]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
N_OPS = 102  # x * w, 100 chain ops, sum
BACKENDS = (("torch", "eager"), ("torchlike", "eager"), ("torchlike", "lazy"), ("torchlike", "lazy-record"))
GPT_SMALL = dict(layers=6, d=64, heads=8, seq=16, batch=2, vocab=128)  # bench/lazy_host.py --small
PHASES = ("forward", "backward", "optimizer", "step")
STEP_WARMUP, STEP_TIMED = 10, 21


def measure(lib_name: str, mode: str) -> dict:
    if lib_name == "torch":
        import torch as lib

        def sync() -> None:
            pass
    else:
        sys.path.insert(0, os.path.dirname(HERE))
        import torchlike as lib

        lib.lazy.enable() if mode.startswith("lazy") else lib.lazy.disable()

        def sync() -> None:
            lib.lazy.mark_step()

    x = lib.randn(16, 16)
    out = {}
    for rg in (False, True):
        w = lib.randn(16, 16, requires_grad=rg)

        def chain():  # noqa: ANN202
            y = x * w
            for _ in range(50):
                y = y * 1.01
                y = y + x
            return y.sum()

        for _ in range(30):
            loss = chain()
            if rg:
                loss.backward()
                w.grad = None
            sync()
        fwd = bwd = 1e9
        for _ in range(15):
            t0 = time.thread_time()
            loss = chain()
            t1 = time.thread_time()
            if rg:
                loss.backward()
            t2 = time.thread_time()
            sync()
            float(loss.detach() if rg else loss)
            w.grad = None
            fwd, bwd = min(fwd, t1 - t0), min(bwd, t2 - t1)
        out["fwd_grad" if rg else "fwd_nograd"] = round(fwd / N_OPS * 1e6, 2)
        if rg:
            out["backward_per_node"] = round(bwd / N_OPS * 1e6, 2)
    return out


def _load(lib_name: str, mode: str):  # noqa: ANN202
    if lib_name == "torch":
        import torch as lib

        lib.set_num_threads(1)  # all of torch's compute on this thread: counted, not hidden
        return lib
    sys.path.insert(0, os.path.dirname(HERE))
    import torchlike as lib

    lib.lazy.enable() if mode.startswith("lazy") else lib.lazy.disable()
    return lib


def _build_step(lib, workload: str):  # noqa: ANN001, ANN202
    """(model, opt, forward+loss closure) for ``workload``, built the same way for torch and torchlike."""
    sys.path.insert(0, HERE)
    import workloads

    nn = lib.nn
    lib.manual_seed(0)
    if workload == "mlp":
        model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
        opt = lib.optim.Adam(model.parameters(), lr=1e-3)
        x, y = lib.randn(32, 64), lib.randint(0, 10, (32,))
        return model, opt, lambda: nn.functional.cross_entropy(model(x), y)
    cfg = GPT_SMALL  # the GPT of workloads.make_gpt: AdamW, bf16 autocast (gpt_fp32: none)
    model = workloads.build_gpt(lib, cfg)
    opt = lib.optim.AdamW(model.parameters(), lr=3e-4)
    x = lib.randint(0, cfg["vocab"], (cfg["batch"], cfg["seq"]))
    y = lib.randint(0, cfg["vocab"], (cfg["batch"], cfg["seq"]))

    def forward():  # noqa: ANN202  (workloads._train_step's forward and loss)
        with lib.autocast(device_type="cpu", dtype=lib.bfloat16) if workload == "gpt" else contextlib.nullcontext():
            return nn.functional.cross_entropy(model(x).reshape(-1, cfg["vocab"]), y.reshape(-1))

    return model, opt, forward


def _count_torch_ops(lib, forward, opt) -> dict:  # noqa: ANN001
    """Aten ops torch dispatches per phase of one step."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Count(TorchDispatchMode):
        n = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
            Count.n += 1
            return func(*args, **(kwargs or {}))

    counts = {}
    with Count():
        loss = forward()
        counts["forward"], Count.n = Count.n, 0
        loss.backward()
        counts["backward"], Count.n = Count.n, 0
        opt.step()
        opt.zero_grad()
        counts["optimizer"], Count.n = Count.n, 0
        loss.item()
        counts["step"] = counts["forward"] + counts["backward"] + counts["optimizer"] + Count.n
    return counts


def measure_step(lib_name: str, mode: str, workload: str) -> dict:
    """Median thread time per phase of a training step (program calls excluded in lazy mode)."""
    lib = _load(lib_name, mode)
    model, opt, forward = _build_step(lib, workload)

    spent = [0.0]  # thread time of the compiled programs' calls (lazy), since the step began

    def step() -> tuple:
        spent[0] = 0.0
        t, progs = [time.thread_time()], []
        loss = forward()
        t.append(time.thread_time())
        progs.append(spent[0])
        loss.backward()
        t.append(time.thread_time())
        progs.append(spent[0])
        opt.step()
        opt.zero_grad()
        t.append(time.thread_time())
        progs.append(spent[0])
        loss.item()
        t.append(time.thread_time())
        progs.append(spent[0])
        return t, progs

    for _ in range(STEP_WARMUP):
        step()
    lazy = None
    if lib_name == "torchlike" and mode.startswith("lazy"):
        from lazy_host import time_programs

        from torchlike._core import lazy

        lazy._join_compiles()  # (background compiles are off in this bench; a safeguard)
        for _ in range(3):
            step()
        time_programs(lazy, spent)
        before = dict(lazy.stats)
    per = {k: [] for k in (*PHASES, "program", "bwd_share", "opt_share")}
    for _ in range(STEP_TIMED):
        t, progs = step()
        phases = [t[i + 1] - t[i] - (progs[i] - (progs[i - 1] if i else 0.0)) for i in range(4)]
        whole = t[4] - t[0] - progs[3]
        for k, v in zip(PHASES, (*phases[:3], whole)):
            per[k].append(v)
        per["program"].append(progs[3])
        per["bwd_share"].append(phases[1] / whole)
        per["opt_share"].append(phases[2] / whole)
    out = {k: statistics.median(v) for k, v in per.items()}
    for k in (*PHASES, "program"):
        out[k] = round(out[k] * 1e6, 1)  # µs
    out["bwd_share"], out["opt_share"] = round(out["bwd_share"], 3), round(out["opt_share"], 3)
    if lazy is not None:
        d = {k: v - before.get(k, 0) for k, v in lazy.stats.items() if isinstance(v, int)}
        for k in ("nodes", "flushes", "replayed", "compiles", "cold_runs"):
            out[k] = round(d.get(k, 0) / STEP_TIMED, 1)
    if lib_name == "torch":
        out["ops"] = _count_torch_ops(lib, forward, opt)
    return out


def _run(*args: str, replay: bool = True) -> dict:
    env = dict(os.environ, TORCHLIKE_LAZY_BACKGROUND="0", TORCHLIKE_LAZY_REPLAY="1" if replay else "0")
    res = subprocess.run([sys.executable, __file__, "--one", *args], capture_output=True, text=True, env=env,
                         check=True)  # fmt: skip
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--json")
    p.add_argument("--no-chain", action="store_true", help="skip the 100-op chain table")
    p.add_argument("--no-steps", action="store_true", help="skip the training-step table")
    p.add_argument("--workloads", default="mlp,gpt,gpt_fp32")
    p.add_argument("--repeats", type=int, default=3, help="processes per backend and workload (median)")
    p.add_argument("--one", nargs="+", help=argparse.SUPPRESS)  # lib mode [workload]: run in this process
    a = p.parse_args()
    if a.one:
        print(json.dumps(measure(*a.one) if len(a.one) == 2 else measure_step(*a.one)))
        return
    result: dict = {"machine": platform.processor() or platform.machine()}
    if not a.no_chain:
        rows = {}
        for lib, mode in BACKENDS:
            # lazy-record: every step recorded in full (guarded replay off), the cost before replay existed
            rows[f"{lib} {mode}"] = _run(lib, mode, replay=mode != "lazy-record")
        print(f"{'(us per op, thread time)':26} {'fwd no grad':>12} {'fwd grad':>10} {'backward':>10}")
        for name, r in rows.items():
            print(f"{name:26} {r['fwd_nograd']:12.2f} {r['fwd_grad']:10.2f} {r['backward_per_node']:10.2f}")
        result["rows"] = rows
    if not a.no_steps:
        steps: dict = {}
        for wl in a.workloads.split(","):
            raw = {}
            for lib, mode in BACKENDS:  # each backend's processes one after the other, the median of them
                runs = [_run(lib, mode, wl, replay=mode != "lazy-record") for _ in range(a.repeats)]
                raw[f"{lib} {mode}"] = {k: statistics.median(r[k] for r in runs) if k != "ops" else v
                                        for k, v in runs[0].items()}  # fmt: skip
                raw[f"{lib} {mode}"]["repeats"] = {k: [r[k] for r in runs] for k in PHASES}
            ops = raw["torch eager"].pop("ops")
            for r in raw.values():
                r["us_per_op"] = {k: round(r[k] / ops[k], 2) for k in PHASES}
            steps[wl] = {"ops": ops, "rows": raw}
            print(
                f"\n{wl}: training step, host thread time (median of {a.repeats} processes' medians of {STEP_TIMED} "
                f"steps; lazy: program calls "
                f"excluded); ops per phase (torch aten): " + ", ".join(f"{k} {ops[k]}" for k in PHASES)
            )
            print(
                f"{'us per op':26}" + "".join(f"{k:>11}" for k in PHASES) + f"{'step ms':>9}{'bwd %':>7}"
                f"{'opt %':>7}{'prog ms':>9}{'nodes':>7}"
            )
            for name, r in raw.items():
                print(
                    f"{name:26}"
                    + "".join(f"{r['us_per_op'][k]:11.2f}" for k in PHASES)
                    + f"{r['step'] / 1e3:9.2f}{r['bwd_share'] * 100:7.1f}{r['opt_share'] * 100:7.1f}"
                    f"{r['program'] / 1e3:9.2f}{r.get('nodes', ''):>7}"
                )
        result["steps"] = steps
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
