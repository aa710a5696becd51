"""Where a torchlike step's time goes on a device: the first step's XLA compiles (name, seconds) and a
cProfile of steady steps, for one workload and backend of bench/workloads.py.

    python bench/gpu_profile.py --device cuda --workload mlp --backend lazy|compile [--steps 300]

For ``--backend compile`` it then says which callable runs the program (the autotuned jit object, a
``Compiled``, or the fast program still waiting for the takeover), times the executable's call apart
from the wait for its results (a call that returns only when the device is done shows a long call and
a short wait), does the same through the jit object, compares a bare donated ``jax.jit`` with as many
arrays, and runs one step under ``jax.transfer_guard("disallow")``.
"""

from __future__ import annotations

import argparse
import cProfile
import logging
import os
import pstats
import re
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))


class _Compiles(logging.Handler):
    """Collects JAX's 'Finished XLA compilation of NAME in T sec' lines (jax_log_compiles)."""

    def __init__(self) -> None:
        super().__init__()
        self.items: list[tuple[float, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        m = re.search(r"Finished XLA compilation of (.*) in ([\d.e-]+) sec", record.getMessage())
        if m:
            self.items.append((float(m.group(2)), m.group(1)[:90]))


def _median_ms(xs: list) -> float:
    return statistics.median(xs) * 1e3 if xs else float("nan")


def _entry_ops(hlo: str) -> str:
    """Instructions of the optimised HLO's ENTRY computation by opcode: on a GPU each fusion, custom call
    (cuBLAS) and copy is a kernel the host launches inside the call, unless a command buffer holds it."""
    import collections

    body = hlo[hlo.find("ENTRY"):]
    body = body[: body.find("\n}")]
    ops = collections.Counter(re.findall(r"= [^ ]+ ([a-z][a-z0-9-]*)\(", body))
    keep = ("fusion", "custom-call", "copy", "command-buffer", "call", "while", "conditional", "all-reduce")
    return ", ".join(f"{k} {ops[k]}" for k in keep if ops[k]) + f" (of {sum(ops.values())})"


def _time_calls(entry, step, n: int, specs: list | None = None) -> tuple[float, float]:
    """Median host time of ``entry.compiled``'s call and of the wait for its outputs, over ``n`` steps."""
    import jax

    inner = entry.compiled
    calls: list = []
    waits: list = []

    def timed(*args):
        if specs is not None and not specs:  # the arguments' shapes, for lowering the program again
            specs.append(jax.tree_util.tree_map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=x.sharding)
                                                if hasattr(x, "sharding") else x, args))
        t0 = time.perf_counter()
        out = inner(*args)
        t1 = time.perf_counter()
        jax.block_until_ready(out)
        calls.append(t1 - t0)
        waits.append(time.perf_counter() - t1)
        return out

    entry.compiled = timed
    try:
        for _ in range(n):
            step()._data().block_until_ready()
    finally:
        if entry.compiled is timed:  # (a hot takeover during the loop installs its program itself)
            entry.compiled = inner
    return _median_ms(calls), _median_ms(waits)


def _compile_report(step, n: int) -> None:
    import jax
    import jax.numpy as jnp

    from torchlike._compile import _runtime as R

    print("compile stats:", dict(R.stats))
    print("persistent cache:", jax.config.jax_compilation_cache_dir or "off")
    for entry in step.cache.values():
        if entry.eager:
            continue
        c = entry.compiled
        kind = "the jit object (C++ fast path)" if c is entry.jitted else type(c).__module__ + "." + type(c).__name__
        print(f"program: {entry.n_state} state arrays, called through {kind}; calls {entry.calls}")
        specs: list = []
        call, wait = _time_calls(entry, step, n, specs)
        print(f"  as installed: call {call:.3f} ms, then wait {wait:.3f} ms (median of {n})")
        if hasattr(c, "as_text"):
            print("  installed program's ENTRY:", _entry_ops(c.as_text()))
        try:  # XLA's defaults: the autotuned program (from the persistent cache when it is on)
            print("  autotuned program's ENTRY:", _entry_ops(entry.jitted.lower(*specs[0]).compile().as_text()))
        except Exception as e:
            print("  autotuned program's HLO: unavailable:", str(e).splitlines()[0][:200])
        if c is not entry.jitted and not getattr(entry, "failed", False):
            entry.compiled = entry.jitted
            for _ in range(3):  # the jit object's first call reads the persistent cache (or compiles)
                step()._data().block_until_ready()
            call, wait = _time_calls(entry, step, n)
            print(f"  through the jit object: call {call:.3f} ms, then wait {wait:.3f} ms")
        # the floor: a bare donated jax.jit with the same arrays, one cheap op each
        arrays = [jnp.copy(b.get()) for b in entry.state]
        bare = jax.jit(lambda xs: [x + 1 if jnp.issubdtype(x.dtype, jnp.number) else x for x in xs], donate_argnums=0)
        calls = []
        for _ in range(n):
            t0 = time.perf_counter()
            arrays = bare(arrays)
            calls.append(time.perf_counter() - t0)
            jax.block_until_ready(arrays)
        print(f"  bare donated jax.jit over the same {len(arrays)} arrays: call {_median_ms(calls[3:]):.3f} ms")
    try:
        with jax.transfer_guard("disallow"):
            step()._data().block_until_ready()
        print("transfer_guard('disallow'): a steady step made no implicit transfer")
    except Exception as e:  # the message names the array that moved
        print("transfer_guard('disallow') refused a steady step:", str(e).splitlines()[0][:300])


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cpu")
    p.add_argument("--workload", default="mlp")
    p.add_argument("--backend", default="lazy", choices=["lazy", "compile", "eager"])
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--hot-wait", type=float, default=40.0)
    p.add_argument("--calls", type=int, default=200, help="steps timed per variant in the compile report")
    a = p.parse_args()
    os.environ["TORCHLIKE_LAZY"] = "0" if a.backend == "eager" else "1"
    import jax

    jax.config.update("jax_log_compiles", True)
    handler = _Compiles()
    logging.getLogger("jax").addHandler(handler)
    logging.getLogger("jax").setLevel(logging.WARNING)
    for h in logging.getLogger().handlers:
        logging.getLogger().removeHandler(h)
    import workloads

    import torchlike as lib
    from torchlike._core import _xla_tiers

    t0 = time.perf_counter()
    step, _ = workloads.MAKERS[a.workload](lib, a.device, lib.compile if a.backend == "compile" else None)
    build = time.perf_counter() - t0
    n_build = len(handler.items)
    t0 = time.perf_counter()
    step()._data().block_until_ready()
    first = time.perf_counter() - t0
    items = handler.items[n_build:]
    print(f"{a.workload}/{a.backend}: build {build:.2f} s ({n_build} compiles, {sum(t for t, _ in handler.items[:n_build]):.2f} s),"
          f" first step {first:.2f} s ({len(items)} compiles, {sum(t for t, _ in items):.2f} s)")
    for t, name in sorted(items, reverse=True)[:12]:
        print(f"  {t:7.3f} s  {name}")
    if a.backend == "compile":
        from torchlike._compile import _runtime as R

        print("after the first step: compile stats", dict(R.stats))
    elif a.backend == "lazy":
        print("after the first step: lazy stats", {k: v for k, v in lib.lazy.stats().items() if not isinstance(v, dict)})
    t0 = time.perf_counter()
    n_wait = 0
    while _xla_tiers.busy() and time.perf_counter() - t0 < a.hot_wait:
        step()._data().block_until_ready()
        n_wait += 1
    print(f"waited {time.perf_counter() - t0:.2f} s ({n_wait} steps) for background compiles; still busy: {_xla_tiers.busy()}")
    for _ in range(20):
        step()._data().block_until_ready()
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    for _ in range(a.steps):
        step()._data().block_until_ready()
    prof.disable()
    ms = (time.perf_counter() - t0) / a.steps * 1e3
    print(f"steady: {ms:.3f} ms/step (synchronised, under cProfile); compiles after warm-up: {len(handler.items)}")
    st = pstats.Stats(prof)
    st.sort_stats("tottime").print_stats(22)
    st.sort_stats("cumulative").print_stats(18)
    if a.backend == "compile":
        _compile_report(step, a.calls)


if __name__ == "__main__":
    main()
