"""A compiled training step's XLA program against bench/jax_reference.py's, op by op and in time.

For each workload (mlp, cnn, gpt, matmul_mlp) both programs are built in their own processes, as
bench/run.py builds them (torchlike sets ``--xla_allow_excess_precision=false`` at import; the JAX
reference runs with XLA's defaults, or with that flag too under ``--ref-flag``). Each reports:

- the optimised program's top-level instructions (on a GPU each fusion, custom call and copy there
  is one kernel launch), all its ops, converts, ``reduce-precision`` rounding points, donated
  (aliased) buffers, parameters and outputs;
- the lowered StableHLO's dots by operand and result type;
- with ``--time``, ms per step three ways: synced every step, host time until the call returns
  (on a GPU that includes XLA launching every kernel), and an unsynchronised loop (the device time
  when the host keeps ahead).

    python bench/compare_hlo.py                          # CPU, small sizes, all four workloads
    python bench/compare_hlo.py --workloads gpt --full --time --dump /tmp/hlo
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
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

WORKLOADS = ("mlp", "cnn", "gpt", "matmul_mlp")
SMALL = {"gpt": dict(cfg=dict(layers=2, d=64, heads=4, seq=32, batch=4, vocab=128)),
         "matmul_mlp": dict(width=256, batch=64)}  # fmt: skip
_SKIP = {"parameter", "constant", "get-tuple-element", "tuple", "bitcast"}  # no kernel of their own


def _counts(text: str) -> collections.Counter:
    """Op names of an HLO module's instructions (fusions counted once, their bodies too)."""
    return collections.Counter(re.findall(r"= [^ ]+ ([a-z][\w-]*)\(", text))


def _entry_ops(text: str) -> collections.Counter:
    """Op names of the ENTRY computation's instructions that run something (kernels, on a GPU)."""
    body = text.split("\nENTRY ", 1)[1].split("\n}\n", 1)[0]
    ops = collections.Counter(re.findall(r"= [^=]*? ([a-z][\w-]*)\(", body))
    return collections.Counter({k: v for k, v in ops.items() if k not in _SKIP})


def _dots(stablehlo: str) -> collections.Counter:
    """Dots by operand and result element types, e.g. ``bf16 x bf16 -> f32``."""
    out = collections.Counter()
    t = r"tensor<(?:\d+x)*(\w+)>"
    for m in re.finditer(rf"stablehlo\.dot_general .*?: \({t}, {t}\) -> {t}", stablehlo):
        out[f"{m[1]} x {m[2]} -> {m[3]}"] += 1
    return out


def _aliases(text: str) -> int:
    """How many outputs reuse a donated input's buffer (the module header's input_output_alias)."""
    header = text.split("\n", 1)[0]
    return header.count("may-alias") + header.count("must-alias")


def _io(text: str) -> tuple[int, int]:
    """(parameters, outputs) of the ENTRY computation, pytrees flattened."""
    body = text.split("\nENTRY ", 1)[1].split("\n}\n", 1)[0]
    n_params = len(re.findall(r"= [^=]*? parameter\(", body))
    root = next(line for line in body.splitlines() if "ROOT " in line)
    n_out = root.split("= (", 1)[1].split(") tuple(", 1)[0].count("[") if " tuple(" in root else 1
    return n_params, n_out


def _make(side: str, workload: str, full: bool) -> tuple:
    """(step, lower) for one side: ``lower()`` gives the step's ``jax.stages.Lowered``."""
    import jax

    kwargs = {} if full else SMALL.get(workload, {})
    if side == "compile":
        import workloads

        import torchlike as torch

        device = "cuda" if jax.default_backend() == "gpu" else "cpu"
        step, _ = getattr(workloads, f"make_{workload}")(torch, device, torch.compile, **kwargs)

        def lower():
            entry = next(e for e in step.cache.values() if not e.eager)
            state = [b.get() for b in entry.state]
            return entry.jitted.lower(state[: entry.n_mut], state[entry.n_mut :], [], step._scalars_now(entry),
                                      step._key_state())  # fmt: skip

        def sync(out):
            jax.block_until_ready(out._data())

        def bare():
            """The step's own XLA program called directly, outputs threaded as a JAX loop does
            (bench/compile_overhead.py's comparison): what torchlike's Python adds is the rest."""
            import compile_overhead

            call = compile_overhead._bare(step)
            return lambda: _Loss(call())

        step.bare = bare
        return step, lower, sync
    import jax_reference

    jax.config.update("jax_default_matmul_precision", "highest")  # as bench/run.py
    run, _ = getattr(jax_reference, f"make_{workload}")(jax.devices()[0], **kwargs)
    return run, run.lower, jax.block_until_ready


class _Loss:
    def __init__(self, outs: list) -> None:
        self.outs = outs

    def _data(self):
        return self.outs


def _time(step, sync, steps: int) -> dict:
    for _ in range(5):
        sync(step())
    synced, host = [], []
    for _ in range(steps):
        t0 = time.perf_counter()
        out = step()
        t1 = time.perf_counter()
        sync(out)
        host.append(t1 - t0)
        synced.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    for _ in range(steps):
        out = step()
    sync(out)
    row = {"synced_ms": statistics.median(synced) * 1e3, "host_ms": statistics.median(host) * 1e3,
           "unsynced_ms": (time.perf_counter() - t0) / steps * 1e3}  # fmt: skip
    if hasattr(step, "bare"):
        row.update({f"bare_{k}": v for k, v in _time(step.bare(), sync, steps).items()})
    return row


def one(side: str, workload: str, full: bool, timed: bool, steps: int, dump: str | None) -> dict:
    """Build, warm up and inspect one side's program (in this process)."""
    step, lower, sync = _make(side, workload, full)
    for _ in range(3):
        sync(step())
    lowered = lower()
    text = lowered.compile().as_text()
    shlo = lowered.as_text()
    if dump:
        os.makedirs(dump, exist_ok=True)
        for ext, t in (("hlo", text), ("stablehlo", shlo)):
            with open(os.path.join(dump, f"{workload}.{side}.{ext}.txt"), "w") as f:
                f.write(t)
    n_params, n_out = _io(text)
    row = {"ops": _counts(text), "entry": _entry_ops(text), "dots": _dots(shlo), "aliases": _aliases(text),
           "params": n_params, "outputs": n_out}  # fmt: skip
    if timed:
        row.update(_time(step, sync, steps))
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--full", action="store_true", help="the benchmark's sizes instead of small ones")
    ap.add_argument("--time", action="store_true", help="also time both steps")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument(
        "--ref-flag",
        action="store_true",
        help="also run the JAX reference with torchlike's --xla_allow_excess_precision=false",
    )
    ap.add_argument("--dump", help="folder to write both programs' optimised HLO and StableHLO text to")
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(one(a.one[0], a.one[1], a.full, a.time, a.steps, a.dump)))
        return
    sides = ["compile", "jax"] + (["jax+flag"] if a.ref_flag else [])
    results = {}
    for w in a.workloads.split(","):
        rows = {}
        for side in sides:
            env = dict(os.environ)
            flags = env.get("XLA_FLAGS", "")
            # one tier: the timed program is the autotuned one from the first step (bench/run.py waits for it)
            env.setdefault("TORCHLIKE_LAZY_TIERS", "0")
            if side == "jax+flag":
                env["XLA_FLAGS"] = (flags + " --xla_allow_excess_precision=false").strip()
            cmd = [sys.executable, __file__, "--one", side.split("+")[0], w, "--steps", str(a.steps)]
            cmd += ["--full"] * a.full + ["--time"] * a.time + (["--dump", a.dump] if a.dump else [])
            r = subprocess.run(cmd, capture_output=True, text=True, env=env)
            if r.returncode:
                print(f"{w} {side} failed:\n{r.stderr[-3000:]}")
                continue
            rows[side] = json.loads(r.stdout.strip().splitlines()[-1])
        results[w] = rows
        _report(w, rows, sides)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


def _report(w: str, rows: dict, sides: list) -> None:
    sides = [s for s in sides if s in rows]
    head = "".join(f" {s:>10s}" for s in sides)
    print(f"\n=== {w}\n{'':34s}{head}")
    for label, key in (("params / outputs / aliased", None), ("kernels (ENTRY ops)", "entry")):
        if key is None:
            vals = [f"{rows[s]['params']}/{rows[s]['outputs']}/{rows[s]['aliases']}" for s in sides]
        else:
            vals = [str(sum(rows[s][key].values())) for s in sides]
        print(f"{label:34s}" + "".join(f" {v:>10s}" for v in vals))
    for label, key in (("  entry", "entry"), ("  op", "ops"), ("  dot", "dots")):
        keys = set().union(*(rows[s][key] for s in sides))
        for op in sorted(keys, key=lambda k: -sum(rows[s][key].get(k, 0) for s in sides)):
            vals = [rows[s][key].get(op, 0) for s in sides]
            if key == "ops" and len(set(vals)) == 1:
                continue
            mark = "  <-" if len(set(vals)) > 1 else ""
            print(f"{label} {op:30s}" + "".join(f" {v:10d}" for v in vals) + mark)
    if "synced_ms" in rows.get(sides[0], {}):
        for k in ("synced_ms", "host_ms", "unsynced_ms", "bare_synced_ms", "bare_host_ms", "bare_unsynced_ms"):
            print(f"{k:34s}" + "".join(f" {rows[s][k]:10.3f}" if k in rows[s] else f" {'':10s}" for s in sides))


if __name__ == "__main__":
    main()
