"""How the compile time of a whole GPT training-step program grows with its depth (issue 30: the GPT's
first step on a GPU spends 14 s in one cold-tier compile). Each depth runs in its own process, so no
kernel is shared; the program is torchlike.compile's (the same ops as lazy mode's whole-step program).

    python bench/compile_scaling.py [--device cpu] [--layers 1,2,4,8] [--d 64] [--fp32] [--sgd]

Prints, per depth, the seconds XLA spent compiling the step program; if compile time
grows linearly with depth, compiling per-layer regions of one structure (compiled once, run per layer)
is what would cut it, not splitting the step into forward/backward/update programs.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def one(device: str, layers: int, d: int, autocast: bool = True, sgd: bool = False) -> dict:
    sys.path.insert(0, HERE)
    sys.path.insert(0, os.path.dirname(HERE))
    os.environ["TORCHLIKE_LAZY"] = "0"
    os.environ["TORCHLIKE_CACHE"] = "0"  # every compile for real
    os.environ["TORCHLIKE_LAZY_HOT"] = "0"  # on a GPU: only the fast tier's compile (the first step's)
    import jax

    times: list = []

    class H(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            m = re.search(r"Finished XLA compilation of (.*) in ([\d.e-]+) sec", record.getMessage())
            if m:
                times.append((m.group(1), float(m.group(2))))

    jax.config.update("jax_log_compiles", True)
    logging.getLogger("jax").addHandler(H())
    import workloads

    import torchlike as lib

    if sgd:  # plain SGD in place of AdamW: how much of the compile is the optimizer update
        lib.optim.AdamW = lambda params, lr: lib.optim.SGD(params, lr=lr)
    cfg = dict(layers=layers, d=d, heads=4, seq=32, batch=4, vocab=128)
    step, _ = workloads.make_gpt(lib, device, lib.compile, cfg=cfg, autocast=autocast)
    step()._data().block_until_ready()  # discovery (eager)
    times.clear()
    t0 = time.perf_counter()
    step()._data().block_until_ready()  # trace, lower, compile, run
    wall = time.perf_counter() - t0
    prog = [t for n, t in times if "pure" in n]
    return {"layers": layers, "program_compile_s": round(sum(prog), 3), "wall_s": round(wall, 3),
            "compiles": [(n[:40], round(t, 3)) for n, t in times]}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cpu")
    p.add_argument("--layers", default="1,2,4,8")
    p.add_argument("--d", type=int, default=64)
    p.add_argument("--fp32", action="store_true", help="no bf16 autocast")
    p.add_argument("--sgd", action="store_true", help="SGD in place of AdamW")
    p.add_argument("--one", type=int, default=None)
    a = p.parse_args()
    if a.one is not None:
        print(json.dumps(one(a.device, a.one, a.d, not a.fp32, a.sgd)))
        return
    for n in [int(x) for x in a.layers.split(",")]:
        out = subprocess.run([sys.executable, __file__, "--device", a.device, "--d", str(a.d), "--one", str(n)]
                             + (["--fp32"] if a.fp32 else []) + (["--sgd"] if a.sgd else []),
                             capture_output=True, text=True)
        lines = out.stdout.strip().splitlines()
        print(lines[-1] if lines else f"layers {n}: failed: {out.stderr[-500:]}", flush=True)


if __name__ == "__main__":
    main()
