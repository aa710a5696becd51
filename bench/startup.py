"""Start-up cost with and without the persistent compilation cache: time to the first finished
optimizer step and total wall time of example scripts, first run (empty cache) vs second run.

Each script runs three times in fresh processes: ``cold`` with an empty cache folder, ``warm``
again with the folder the cold run filled, and, with ``--torch``, under real torch (a script
written as ``import torchlike as torch`` gets torch through torchlike's reference shim). The
first step is timed by a global optimizer post-step hook that reads one parameter value back
(so the step has really finished), in wall time and in the process's CPU time (steadier than
wall time on a shared machine); a script without an optimizer (the quick start) is timed to
its first printed line matching ``--mark`` (default: a line starting ``step 0``).

    python bench/startup.py "examples/quickstart.py" "examples/digits_cnn.py --epochs 1"
    python bench/startup.py --torch --device cuda "examples/char_transformer.py --device cuda"
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _child(script: str, args: list) -> None:
    """Run ``script`` as __main__, printing when its first optimizer step has finished."""
    import importlib
    import runpy

    # the scripts say ``import torchlike as torch``; under --torch the reference shim makes that torch
    optim = importlib.import_module("torch.optim.optimizer" if os.environ.get("_STARTUP_TORCH") else
                                    "torchlike.optim.optimizer")  # fmt: skip
    done = []

    def hook(opt, *_):
        if done:
            return
        p = opt.param_groups[0]["params"][0]
        float(p.detach().reshape(-1)[0])  # wait for the step's results
        done.append(time.time())
        sys.__stderr__.write(f"\n@@first_step {done[0]!r} {time.process_time()!r}\n")

    optim.register_optimizer_step_post_hook(hook)
    mark = re.compile(os.environ.get("_STARTUP_MARK", r"^step\s+0\b"))

    class _Out:  # scripts without an optimizer: the first printed line matching the mark
        def __init__(self, out):
            self.out = out

        def write(self, text):
            if not done and mark.search(text):
                done.append(time.time())
                sys.__stderr__.write(f"\n@@first_step {done[0]!r} {time.process_time()!r}\n")
            return self.out.write(text)

        def __getattr__(self, name):
            return getattr(self.out, name)

    sys.stdout = _Out(sys.stdout)
    sys.argv = [script, *args]
    runpy.run_path(script, run_name="__main__")


def _run(cmd: str, env: dict) -> dict:
    script, *args = shlex.split(cmd)
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    r = subprocess.run([sys.executable, __file__, "--child", script, *args], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=3600)  # fmt: skip
    wall = time.time() - t0
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise RuntimeError(f"{cmd} failed:\n{r.stderr[-2000:]}")
    first = [line.split()[1:] for line in r.stderr.splitlines() if line.startswith("@@first_step")]
    return {"first_step_s": float(first[0][0]) - t0 if first else None, "wall_s": wall,
            "first_step_cpu_s": float(first[0][1]) if first else None,
            "cpu_s": cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("scripts", nargs="*", default=["examples/quickstart.py", "examples/digits_cnn.py --epochs 1"])
    ap.add_argument("--torch", action="store_true", help="also run each script under real torch")
    ap.add_argument("--mark", default=r"^step\s+0\b")
    ap.add_argument("--json")
    ap.add_argument("--child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        _child(a.child[0], a.child[1:])
        return
    base = dict(os.environ, PYTHONHASHSEED="0", MPLBACKEND="Agg", _STARTUP_MARK=a.mark)
    base["PYTHONPATH"] = os.pathsep.join([ROOT, *[p for p in base.get("PYTHONPATH", "").split(os.pathsep) if p]])
    rows = []
    for cmd in a.scripts:
        with tempfile.TemporaryDirectory(prefix="torchlike-startup-") as cache:
            env = dict(base, TORCHLIKE_CACHE_DIR=cache, TORCHLIKE_CACHE="1")
            row = {"script": cmd, "cold": _run(cmd, env), "warm": _run(cmd, env)}
            n = len(os.listdir(cache))
        row["cache_entries"] = n
        if a.torch:
            from torchlike.compat._compare import REFERENCE_SHIM_DIR

            env = dict(base, PYTHONPATH=os.pathsep.join([REFERENCE_SHIM_DIR, base["PYTHONPATH"]]), _STARTUP_TORCH="1")
            row["torch"] = _run(cmd, env)
        rows.append(row)
        fmt = lambda r: (f"first step {r['first_step_s']:6.2f} s (cpu {r['first_step_cpu_s']:6.2f} s), "  # noqa: E731
                         f"wall {r['wall_s']:6.2f} s (cpu {r['cpu_s']:6.2f} s)")
        print(f"{cmd}\n  cold  {fmt(row['cold'])}\n  warm  {fmt(row['warm'])}   ({n} cache entries)", flush=True)
        if a.torch:
            print(f"  torch {fmt(row['torch'])}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
