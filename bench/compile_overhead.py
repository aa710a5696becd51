"""Per-call host overhead of a torchlike.compile step against calling its own XLA program bare.

For each case the compiled step is warmed up, then timed two ways over the same arrays:

- ``compiled``: ``step()`` as a user calls it (guards, gathering state, writing results back);
- ``bare``: the very ``jax.jit`` program of that step, called with the same arrays (donated
  outputs rebound), i.e. what a hand-written JAX loop pays per call.

The difference is torchlike's per-call work. Because timings on a busy machine are noisy, a
third number isolates torchlike's Python work exactly: the step with its program replaced by a
stub returning a precomputed result, minus calling the stub. Work is not waited for per call (only once
at the end), so the numbers are host time, not device time; the arrays are tiny so the device
keeps up. Target (issue 41): overhead <= 30 us + 0.2 us per state array.

``--repeats N`` measures everything N times and reports medians (each of them the best of ``--rounds``
rounds), then fits each column to ``a + b * state arrays`` over the cases: ``b`` is the cost per state array.

    python bench/compile_overhead.py            # this machine (CPU unless --device cuda)
    python bench/compile_overhead.py --device cuda
    python bench/compile_overhead.py --repeats 5 --sizes 4,32,128,512
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402

import torchlike as torch  # noqa: E402
from torchlike._core import _xla_tiers  # noqa: E402


def _params_case(n: int, device: str):
    """n small parameters updated in place: n state arrays, all written."""
    ps = [torch.zeros(4, device=device) for _ in range(n)]

    @torch.compile
    def step():
        for p in ps:
            p.add_(1.0)
        return ps[0]

    return step, f"in-place add on {n} tensors"


def _train_case(width: int, depth: int, device: str):
    """An MLP training step with Adam: params, grads, two moments and a step count per parameter."""
    torch.manual_seed(0)
    layers = []
    for _ in range(depth):
        layers += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(8, width, device=device)

    @torch.compile
    def step():
        opt.zero_grad(set_to_none=False)
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        return loss

    return step, f"MLP {depth}x{width} + Adam training step"


def _entry(step):
    entries = [e for e in step.cache.values() if not e.eager]
    assert len(entries) == 1, "expected one compiled program"
    return entries[0]


def _bare(step):
    """A closure calling the step's XLA program directly, threading its outputs like a JAX loop."""
    e = _entry(step)
    state = [jax.numpy.copy(b.get()) for b in e.state]  # its own arrays: the bare calls donate them
    n = e.n_mut
    box = {"mut": state[:n], "ro": state[n:], "key": jax.numpy.copy(step._key_state())}
    scalars = step._scalars_now(e)
    changed = {id(b): i for i, b in enumerate(e.state)}
    back = [changed[id(b)] for b in e.changed]

    def call():
        new_state, out, escaped, key = e.jitted(box["mut"], box["ro"], [], scalars, box["key"])
        mut = list(box["mut"])
        for i, a in zip(back, new_state):
            if i < n:
                mut[i] = a
        box["mut"] = mut
        if key is not None:  # a program without random draws returns no key
            box["key"] = key
        return out

    return call


def _python_work(step, reps: int, rounds: int) -> float:
    """torchlike's own per-call Python time (µs): the step with its program swapped for a stub that
    returns one precomputed result, minus the stub's own call. Free of device and JAX timing noise."""
    e = _entry(step)
    real = e.compiled
    state = [jax.numpy.copy(b.get()) for b in e.state]
    result = real(state[: e.n_mut], state[e.n_mut :], [], step._scalars_now(e), jax.numpy.copy(step._key_state()))
    jax.block_until_ready(result)
    e.compiled = lambda *args: result
    try:
        with_stub, stub = _time([step, lambda: e.compiled(0, 0, 0, 0, 0)], reps, rounds)
    finally:
        e.compiled = real
    return with_stub - stub


def _time(fns: list, reps: int, rounds: int) -> list:
    """Per-call host time of each function (µs): the best of ``rounds`` interleaved rounds."""
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            out = None
            t0 = time.perf_counter()
            for _ in range(reps):
                out = fn()
            dt = time.perf_counter() - t0
            jax.block_until_ready(out)
            best[i] = min(best[i], dt / reps)
    return [b * 1e6 for b in best]


def _measure(step, reps: int, rounds: int) -> tuple[float, float, float]:
    bare = _bare(step)
    for _ in range(3):
        bare()
    compiled_us, bare_us = _time([step, bare], reps, rounds)
    return compiled_us, bare_us, _python_work(step, reps, rounds)


def _fit(xs: list, ys: list) -> tuple[float, float]:
    """Least squares ``y = a + b x``."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - b * mx, b


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--repeats", type=int, default=1, help="measure N times, report medians")
    ap.add_argument("--sizes", default="4,32,128", help="numbers of tensors of the in-place add cases")
    ap.add_argument("--json")
    a = ap.parse_args()
    sizes = [int(n) for n in a.sizes.split(",") if n]
    cases = [_params_case(n, a.device) for n in sizes] + [_train_case(64, 2, a.device), _train_case(64, 8, a.device)]
    rows = []
    for step, what in cases:
        for _ in range(4):
            step()
        while _xla_tiers.busy():  # on a GPU: wait for the autotuned program, then let it take over
            time.sleep(0.05)
        step()
        n_state = _entry(step).n_state
        runs = [_measure(step, a.reps, a.rounds) for _ in range(a.repeats)]
        compiled_us, bare_us, py_us = (statistics.median(r[i] for r in runs) for i in range(3))
        over = statistics.median(r[0] - r[1] for r in runs)
        target = 30 + 0.2 * n_state
        rows.append({"case": what, "state_arrays": n_state, "compiled_us": compiled_us, "bare_jit_us": bare_us,
                     "overhead_us": over, "python_work_us": py_us, "target_us": target})  # fmt: skip
        print(f"{what:34s} state {n_state:4d}  compiled {compiled_us:8.1f} us  bare jit {bare_us:8.1f} us  "
              f"overhead {over:7.1f} us  python work {py_us:6.1f} us  (target {target:.1f} us)", flush=True)  # fmt: skip
    fits = {}
    if len(rows) > 2:
        xs = [r["state_arrays"] for r in rows]
        for col in ("overhead_us", "python_work_us"):
            fits[col] = _fit(xs, [r[col] for r in rows])
            a0, b0 = fits[col]
            print(f"{col}: {a0:.1f} us + {b0:.3f} us per state array (least squares over the cases)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": a.device, "rows": rows, "fits": fits}, f, indent=1)


if __name__ == "__main__":
    main()
