"""Bounds on compiled code: LRU tables of kernels, a limit on JAX's live executables, compile counters.

Every table torchlike keeps of jitted functions (the op table's kernels, the autograd engine's
programs and per-node VJPs, view read/write kernels, optimizer and fill kernels...) is a ``LRU``
holding at most ``get_kernel_cache_size()`` entries. A jitted function in turn keeps one XLA
executable per input shape, in JAX's own caches; those are counted as they compile and, past the
same limit, JAX's caches are cleared (``jax.clear_caches()``), so memory levels off under shapes that
keep changing. The kernels in use then compile again once, on their next call.

``compile_stats()`` counts compiles and why: ``new_kernels`` (a table missed: a new op, static
argument or dtype), ``recompiles`` (a known kernel met new input shapes), ``flushes`` and
``evictions``. When one of torchlike's kernels has compiled ``WARN_AFTER`` times, a warning names
it, as torch._dynamo warns on recompiles (JAX's own helpers are counted but not warned about).
"""

from __future__ import annotations

import collections
import sys
import threading
import warnings
from typing import Any

import jax
from jax import monitoring

__all__ = ["set_kernel_cache_size", "get_kernel_cache_size", "compile_stats", "LRU"]

DEFAULT_SIZE = 512
WARN_AFTER = 32  # compiles of one op before the warning

_size = DEFAULT_SIZE
_counts: collections.Counter = collections.Counter()
_by_op: collections.Counter = collections.Counter()
_warned: set = set()
_ours: set = set()  # names of the kernels torchlike's tables built: only these are warned about
_live = 0  # executables compiled since JAX's caches were last cleared
_lock = threading.Lock()


class LRU(collections.OrderedDict):
    """A table of compiled kernels keeping the ``get_kernel_cache_size()`` most recently used. A table of
    other things (``kernels=False``) is bounded the same way but does not count new kernels."""

    def __init__(self, kernels: bool = True) -> None:
        super().__init__()
        self.kernels = kernels

    def get(self, key: Any, default: Any = None) -> Any:
        try:
            value = self[key]
            self.move_to_end(key)
        except KeyError:  # absent, or evicted by another thread just now
            return default
        return value

    def __setitem__(self, key: Any, value: Any) -> None:
        if self.kernels and key not in self:
            _counts["new_kernels"] += 1
            _ours.add(getattr(value, "__name__", None))
        super().__setitem__(key, value)
        while len(self) > _size:
            try:
                self.popitem(last=False)
            except KeyError:  # emptied by another thread
                break
            _counts["evictions"] += 1


def set_kernel_cache_size(n: int) -> None:
    """Keep at most ``n`` entries per kernel table and ``n`` compiled executables alive (default 512).
    Smaller saves memory under changing shapes; larger avoids recompiling a big working set."""
    global _size
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"set_kernel_cache_size: expected a positive int, got {n!r}")
    _size = n


def get_kernel_cache_size() -> int:
    return _size


def compile_stats() -> dict:
    """Counters since the process started: compiles (XLA executables built), new_kernels, recompiles,
    flushes, evictions, and by_op (compiles per op or kernel name)."""
    out = {k: _counts[k] for k in ("compiles", "new_kernels", "recompiles", "flushes", "evictions")}
    out["by_op"] = dict(_by_op)
    return out


def _on_event(event: str, duration: float, **kw: Any) -> None:
    global _live
    if event != "/jax/core/compile/backend_compile_duration":
        return
    name = str(kw.get("fun_name", "?"))
    if name.startswith("jit(") and name.endswith(")"):
        name = name[4:-1]
    with _lock:
        _counts["compiles"] += 1
        _by_op[name] += 1
        _live += 1
        _counts["recompiles"] = max(0, _counts["compiles"] - _counts["new_kernels"])
        flush = _live > _size
        if flush:
            _live = 0
            _counts["flushes"] += 1
        warn = _by_op[name] == WARN_AFTER and name in _ours and name not in _warned
        if warn:
            _warned.add(name)
    if flush:
        # NOTE: runs inside the compile that crossed the limit; that call keeps its own references
        jax.clear_caches()
    if warn:
        warnings.warn(
            f"torchlike: '{name}' has compiled {WARN_AFTER} times (new input shapes or arguments each call); "
            "each compile costs time and memory. Keep shapes to a few sizes (pad batches), or pass changing "
            "values as tensors. torchlike.compile_stats() has the counters.",
            stacklevel=_user_stacklevel(),
        )


_INTERNAL = ("torchlike", "jax", "jaxlib", "contextlib", "functools")


def _user_stacklevel() -> int:
    """The ``stacklevel`` of the innermost frame outside torchlike and JAX (the user's line that made the
    kernel compile), counted from ``_on_event``'s caller of ``warnings.warn``."""
    f = sys._getframe(1)  # _on_event: stacklevel 1
    level = 1
    while f is not None:
        mod = f.f_globals.get("__name__") or "torchlike"  # the generated op wrappers' globals have no name
        if mod.partition(".")[0] not in _INTERNAL:
            return level
        f = f.f_back
        level += 1
    return 1


monitoring.register_event_duration_secs_listener(_on_event)
