"""Lazy execution: ops record, and XLA runs fused programs (see docs/lazy.md).

torch has no such module; PyTorch/XLA's ``mark_step`` is the precedent for ``mark_step`` here.
The switch is ``TORCHLIKE_LAZY=1|0`` (default: on when JAX sees a GPU, off on a CPU-only machine)
or the functions below.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

from ._core import lazy as _lazy

__all__ = ["enabled", "enable", "disable", "mode", "mark_step", "stats", "reset_stats", "pending", "clear_caches"]


def enabled() -> bool:
    """Whether ops are recorded lazily."""
    return _lazy.enabled()


def enable() -> None:
    """Record ops lazily from now on."""
    _lazy.set_enabled(True)


def disable() -> None:
    """Run pending work, then run ops eagerly again."""
    _lazy.set_enabled(False)


@contextlib.contextmanager
def mode(on: bool = True) -> Iterator[None]:
    """``with torchlike.lazy.mode(False):`` runs a block in the other mode, then restores the old one."""
    old = _lazy.enabled()
    _lazy.set_enabled(on)
    try:
        yield
    finally:
        _lazy.set_enabled(old)


def mark_step() -> None:
    """Run everything recorded so far as one program, now (asynchronously: no value is waited for)."""
    _lazy.flush("mark_step")


def pending() -> int:
    """Nodes recorded and not yet run."""
    return _lazy.pending()


def stats() -> dict:
    """Counters: ``nodes``, ``flushes``, ``compiles``, ``hits``, ``cold_runs``, ``signatures``, ``evictions``,
    ``compile_failures``, ``dead_flushes``, and ``flush_reasons`` (why each flush happened)."""
    out = dict(_lazy.stats)
    out["nodes"] = out.get("nodes", 0) + _lazy.pending()
    out["flush_reasons"] = dict(_lazy.flush_reasons)
    if _lazy.flush_sites:
        out["flush_sites"] = dict(_lazy.flush_sites)
    return out


def reset_stats() -> None:
    """Zero the counters."""
    _lazy.reset_stats()


def clear_caches() -> None:
    """Forget compiled programs and cached signatures."""
    _lazy.clear_caches()
