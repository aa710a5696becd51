"""Two compile tiers for a lazy program on a GPU: fast now, autotuned later.

XLA's GPU compiler autotunes GEMMs while it compiles, which is most of a small model's first
compile (an Adam MLP: 24.9 s against 2.1 s without it, on an H200). So the first time a structure
is seen on a GPU it is compiled with ``COLD_OPTIONS`` (no autotuning, no Triton GEMMs) and runs at
once; the same lowering is then compiled with XLA's defaults in a background thread, and that
program takes over at the first flush after it is ready.

Both go in the persistent compilation cache: per-compile options are part of JAX's cache key (the
compile options it hashes include them), so one tier's program is never served for the other.

Switches: ``TORCHLIKE_LAZY_TIERS=0`` compiles a new structure autotuned at once (one tier, the
old first-step stall); ``TORCHLIKE_LAZY_HOT=0`` keeps the fast program and never autotunes.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable

import jax

__all__ = ["COLD_OPTIONS", "cold_options", "platform_of", "start"]

COLD_OPTIONS = {"xla_gpu_autotune_level": 0, "xla_gpu_enable_triton_gemm": False}
GPU_PLATFORMS = frozenset({"gpu", "cuda", "rocm"})


def _flag(name: str) -> bool:
    return os.environ.get(name, "1").strip().lower() not in ("0", "false", "no", "off")


TIERS = _flag("TORCHLIKE_LAZY_TIERS")
HOT = _flag("TORCHLIKE_LAZY_HOT")


def platform_of(leaves: list) -> str:
    """The platform of the first device-resident array among a program's arguments ("cpu" if none)."""
    for x in leaves:
        devices = getattr(x, "devices", None)
        if devices is not None and not isinstance(x, type):
            try:
                return next(iter(devices())).platform
            except Exception:  # a tracer or a foreign array: look further
                continue
    return "cpu"


def cold_options(platform: str) -> dict | None:
    """The options for a structure's first compile on ``platform``, or None for a single tier.

    Options are passed to GPU backends only (the CPU compiler has no autotuning to skip)."""
    if not TIERS or platform not in GPU_PLATFORMS:
        return None
    return dict(COLD_OPTIONS)


def _persistent_cache_on() -> bool:
    return bool(jax.config.jax_compilation_cache_dir) and bool(getattr(jax.config, "jax_enable_compilation_cache", True))


class _Takeover:
    """The hot program's first call: records when it took over, then steps aside."""

    __slots__ = ("prog", "run", "stats")

    def __init__(self, prog: Any, run: Callable, stats: Any) -> None:
        self.prog, self.run, self.stats = prog, run, stats

    def __call__(self, *leaves: Any) -> Any:
        out = self.run(*leaves)
        self.prog.compiled = self.run
        self.stats["hot_takeovers"] += 1
        self.stats["hot_takeover_at"] = self.prog.seen  # this structure's N-th run is the first hot one
        self.stats["hot_takeover_flush"] = self.stats["flushes"]
        return out


def start(prog: Any, jitted: Any, structs: list, options: dict, stats: Any) -> threading.Thread | None:
    """Compile ``jitted`` for ``structs`` with ``options`` now and install it as ``prog.compiled``;
    then compile it with XLA's defaults in a thread that installs that program when ready.

    Returns the thread (None when no hot compile runs). Raises what the cold compile raises: the
    caller then compiles the ordinary way."""
    lowered = jitted.lower(*structs)
    prog.compiled = lowered.compile(options)
    stats["compiles"] += 1
    stats["cold_compiles"] += 1
    if not HOT:
        return None

    def hot() -> None:
        try:
            compiled = lowered.compile()  # XLA's defaults: the same key as calling ``jitted``
        except Exception:  # the cold program stays: slower, never wrong
            stats["hot_compile_failures"] += 1
            return
        stats["hot_compiles"] += 1
        if prog.failed or prog.compiled is None:
            return
        # the jit object dispatches through JAX's C++ path; its first call reads the program this compile
        # put in the persistent cache. Without that cache it would compile again: keep the compiled object.
        prog.compiled = _Takeover(prog, jitted if _persistent_cache_on() else compiled, stats)

    t = threading.Thread(target=hot, name="torchlike-lazy-autotune", daemon=True)
    t.start()
    return t
