"""The compiled GPT step's XLA program against bench/jax_reference.py's, op by op.

Counts the ops of each optimised program (and of each lowered StableHLO module) and lists where
they differ: extra copies or transposes, float32 round trips under autocast (converts), missing
donation (parameters not aliased to outputs). Runs on any backend; a small GPT by default.

    python bench/compare_hlo.py                 # CPU, GPT 2 layers d=64
    python bench/compare_hlo.py --full          # the benchmark's GPT (6 layers, d=512)
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

SMALL = dict(layers=2, d=64, heads=4, seq=32, batch=4, vocab=128)


def _counts(text: str) -> collections.Counter:
    """Op names of an HLO module's instructions (fusions counted once, their bodies too)."""
    return collections.Counter(re.findall(r"= [^ ]+ ([a-z][\w-]*)\(", text))


def _stablehlo_counts(text: str) -> collections.Counter:
    return collections.Counter(re.findall(r"(stablehlo\.[\w.]+|func\.call)", text))


def _aliases(text: str) -> int:
    """How many outputs reuse a donated input's buffer (the module header's input_output_alias)."""
    header = text.split("\n", 1)[0]
    return header.count("may-alias") + header.count("must-alias")


def compiled_step(cfg: dict) -> tuple:
    import jax
    import workloads

    import torchlike as torch

    step, _ = workloads.make_gpt(torch, "cuda" if jax.default_backend() == "gpu" else "cpu", torch.compile, cfg=cfg)
    for _ in range(3):
        step()
    entry = next(e for e in step.cache.values() if not e.eager)
    state = [b.get() for b in entry.state]
    lowered = entry.jitted.lower(state[: entry.n_mut], state[entry.n_mut :], [], step._scalars_now(entry),
                                 step._key_state())  # fmt: skip
    return lowered, len(state)


def reference_step(cfg: dict) -> tuple:
    import jax
    import jax_reference

    jax.config.update("jax_default_matmul_precision", "highest")
    run, _ = jax_reference.make_gpt(jax.devices()[0], cfg)
    run()
    return run.lower(), None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", action="store_true", help="the benchmark's GPT config instead of a small one")
    ap.add_argument("--dump", help="folder to write both programs' optimised HLO text to")
    a = ap.parse_args()
    from workloads import GPT_CFG

    cfg = GPT_CFG if a.full else SMALL
    progs = {}
    for name, make in (("torchlike.compile", compiled_step), ("jax", reference_step)):
        lowered, n_state = make(cfg)
        text = lowered.compile().as_text()
        progs[name] = (_counts(text), _stablehlo_counts(lowered.as_text()), _aliases(text), text)
        if a.dump:
            os.makedirs(a.dump, exist_ok=True)
            with open(os.path.join(a.dump, f"{name}.hlo.txt"), "w") as f:
                f.write(text)
    (c1, s1, al1, _), (c2, s2, al2, _) = progs["torchlike.compile"], progs["jax"]
    print(f"GPT {cfg}\n{'optimised HLO op':28s} {'compile':>9s} {'jax':>9s}")
    for op in sorted(set(c1) | set(c2), key=lambda k: -(c1[k] + c2[k])):
        mark = "  <-" if c1[op] != c2[op] else ""
        print(f"{op:28s} {c1[op]:9d} {c2[op]:9d}{mark}")
    print(f"{'donated (aliased) buffers':28s} {al1:9d} {al2:9d}")
    print(f"\n{'lowered StableHLO op':28s} {'compile':>9s} {'jax':>9s}")
    for op in sorted(set(s1) | set(s2), key=lambda k: -(s1[k] + s2[k]))[:25]:
        mark = "  <-" if s1[op] != s2[op] else ""
        print(f"{op:28s} {s1[op]:9d} {s2[op]:9d}{mark}")


if __name__ == "__main__":
    main()
