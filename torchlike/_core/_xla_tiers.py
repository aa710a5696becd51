"""Two compile tiers for a lazy program on a GPU: fast now, autotuned later.

XLA's GPU compiler autotunes GEMMs while it compiles, which is most of a small model's first
compile (an Adam MLP: 24.9 s against 2.1 s without it, on an H200). So the first time a structure
is seen on a GPU it is compiled with ``COLD_OPTIONS`` (no autotuning, no Triton GEMMs) and runs at
once; the same lowering is then compiled with XLA's defaults in a background thread, and that
program takes over at the first flush after it is ready.

Both go in the persistent compilation cache: per-compile options are part of JAX's cache key (the
compile options it hashes include them), so one tier's program is never served for the other.

One-op kernels (the op table's kernels, the autograd engine's fused backward and per-node VJPs, the
optimizer's fused update, view reads and writes) run eager mode, lazy mode's first sighting of a
structure and ``torchlike.compile``'s discovery call. On a GPU they are built by ``one_op_jit`` with
``COLD_OPTIONS`` too: autotuning each one-op GEMM cost 0.4-2 s of a first step (an MLP's compiled first
step: 25 s on an H200). They stay cold: a single GEMM without autotuning runs cuBLAS's heuristic choice.

Switches: ``TORCHLIKE_LAZY_TIERS=0`` compiles a new structure autotuned at once (one tier, the
old first-step stall) and one-op kernels with XLA's defaults; ``TORCHLIKE_LAZY_HOT=0`` keeps the fast
program and never autotunes; ``TORCHLIKE_GPU_KERNEL_TIERS=0`` builds one-op kernels with XLA's defaults only.
"""

from __future__ import annotations

import atexit
import os
import threading
import weakref
from typing import Any, Callable

import jax

try:  # no public name; JAX's own AOT call path uses it
    from jax._src.core import trace_state_clean as _trace_state_clean
except ImportError:  # another JAX: one-op kernels keep XLA's defaults
    _trace_state_clean = None

__all__ = ["COLD_OPTIONS", "busy", "cold_options", "join", "one_op_cold", "one_op_jit", "platform_of", "start",
           "tracing"]

COLD_OPTIONS = {"xla_gpu_autotune_level": 0, "xla_gpu_enable_triton_gemm": False}
GPU_PLATFORMS = frozenset({"gpu", "cuda", "rocm"})


def _flag(name: str) -> bool:
    return os.environ.get(name, "1").strip().lower() not in ("0", "false", "no", "off")


TIERS = _flag("TORCHLIKE_LAZY_TIERS")
HOT = _flag("TORCHLIKE_LAZY_HOT")
COLD_KERNELS = _flag("TORCHLIKE_GPU_KERNEL_TIERS")


def platform_of(leaves: list) -> str:
    """The platform of the first device-resident array among a program's arguments ("cpu" if none)."""
    for x in leaves:
        devices = getattr(x, "devices", None)
        if devices is not None:
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


_default_platform: str | None = None


def one_op_cold() -> bool:
    """Whether one-op kernels compile with ``COLD_OPTIONS``: JAX's default backend is a GPU.

    Asked when a kernel is built (a first call), so the backend is already up; never at import."""
    global _default_platform
    if not (TIERS and COLD_KERNELS) or _trace_state_clean is None:
        return False
    if _default_platform is None:
        _default_platform = jax.default_backend()
    return _default_platform in GPU_PLATFORMS


class _OneOp:
    """A one-op kernel on a GPU: called at top level, the program compiled without autotuning; called
    inside a trace (a lazy program, a compiled step, eval_shape, a VJP), the plain jit, because JAX
    refuses ``compiler_options`` on a nested jit. Anything else (lower, trace, eval_shape, __name__...)
    is the plain jit's."""

    __slots__ = ("cold", "plain", "__weakref__")

    def __init__(self, fn: Callable, kwargs: dict) -> None:
        self.plain = jax.jit(fn, **kwargs)
        self.cold = jax.jit(fn, compiler_options=dict(COLD_OPTIONS), **kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _trace_state_clean():
            return self.cold(*args, **kwargs)
        return self.plain(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.plain, name)


def tracing() -> bool:
    """Whether a JAX transformation is tracing now (a jitted call then returns tracers, even of constants)."""
    return _trace_state_clean is not None and not _trace_state_clean()


def one_op_jit(fn: Callable, **kwargs: Any) -> Any:
    """``jax.jit(fn, **kwargs)``; when ``one_op_cold()``, its top-level calls compile without autotuning
    (see ``_OneOp``). The CPU gets exactly ``jax.jit(fn, **kwargs)``."""
    if one_op_cold():
        return _OneOp(fn, kwargs)
    return jax.jit(fn, **kwargs)


def _persistent_cache_on() -> bool:
    return bool(jax.config.jax_compilation_cache_dir) and bool(getattr(jax.config, "jax_enable_compilation_cache", True))


class _Takeover:
    """The hot program's first call: records when it took over, then steps aside."""

    __slots__ = ("target", "run", "stats", "runs")

    def __init__(self, target: Any, run: Callable, stats: Any, runs: Callable[[], int]) -> None:
        self.target, self.run, self.stats, self.runs = target, run, stats, runs

    def __call__(self, *args: Any) -> Any:
        out = self.run(*args)
        self.target.compiled = self.run
        self.stats["hot_takeovers"] += 1
        self.stats["hot_takeover_at"] = self.runs()  # the N-th run of this program was the first hot one
        if "flushes" in self.stats:
            self.stats["hot_takeover_flush"] = self.stats["flushes"]
        return out


_running: weakref.WeakSet = weakref.WeakSet()


def busy() -> bool:
    """Whether an autotuned compile is still running in the background."""
    return any(t.is_alive() for t in list(_running))


@atexit.register
def join() -> None:
    """Wait for background compiles (a thread killed inside XLA's compiler at exit aborts the process,
    and a fork taken during one leaves the child XLA's locks held)."""
    for t in list(_running):
        t.join()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=join)


def start(target: Any, jitted: Any, lowered: Any, options: dict, stats: Any,
          runs: Callable[[], int]) -> threading.Thread | None:
    """Compile ``lowered`` (``jitted.lower(...)``) with ``options`` now and install it as
    ``target.compiled``; then compile it with XLA's defaults in a thread that installs that program
    (as ``jitted``) when ready, unless ``target.failed`` by then. ``runs()`` counts the target's runs.

    Returns the thread (None when no hot compile runs). Raises what the cold compile raises: the
    caller then compiles the ordinary way."""
    target.compiled = lowered.compile(options)
    stats["cold_compiles"] += 1
    if not HOT:
        return None

    def hot() -> None:
        try:
            compiled = lowered.compile()  # XLA's defaults: the same cache key as calling ``jitted``
        except Exception:  # the cold program stays: slower, never wrong
            stats["hot_compile_failures"] += 1
            return
        stats["hot_compiles"] += 1
        if target.failed or target.compiled is None:
            return
        # the jit object dispatches through JAX's C++ path; its first call reads the program this compile
        # put in the persistent cache. Without that cache it would compile again: keep the compiled object.
        target.compiled = _Takeover(target, jitted if _persistent_cache_on() else compiled, stats, runs)

    t = threading.Thread(target=hot, name="torchlike-autotune", daemon=True)
    _running.add(t)
    t.start()
    return t
