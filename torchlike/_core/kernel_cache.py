"""Bounds on compiled code: LRU tables of kernels, a limit on JAX's live executables, compile counters.

Every table torchlike keeps of jitted functions (the op table's kernels, the autograd engine's
programs and per-node VJPs, view read/write kernels, optimizer and fill kernels...) is a ``LRU``
holding at most ``get_kernel_cache_size()`` entries. A jitted function in turn keeps one XLA
executable per input shape, in JAX's own caches; those are counted as they compile and, past the
same limit, the executables of the least recently used kernels are dropped (each jitted function's own
``clear_cache()``) until half the limit is free, so memory levels off under shapes that keep changing
while the working set stays compiled. JAX's caches are never wiped: a wipe made every kernel in use
compile again (a sampling loop's second run paid ~1,600 lowerings for it).

``compile_stats()`` counts compiles and why: ``new_kernels`` (a table missed: a new op, static
argument or dtype), ``recompiles`` (a known kernel met new input shapes), ``flushes`` (times the
limit was crossed), ``evictions`` (table entries dropped) and ``executables_evicted``. When one of torchlike's kernels has compiled ``WARN_AFTER`` times, a warning names
it, as torch._dynamo warns on recompiles (JAX's own helpers are counted but not warned about).
"""

from __future__ import annotations

import collections
import itertools
import sys
import threading
import warnings
import weakref
from typing import Any

from jax import monitoring

__all__ = ["set_kernel_cache_size", "get_kernel_cache_size", "compile_stats", "LRU"]

DEFAULT_SIZE = 512
WARN_AFTER = 32  # compiles of one op before the warning

_size = DEFAULT_SIZE
_counts: collections.Counter = collections.Counter()
_by_op: collections.Counter = collections.Counter()
_warned: set = set()
_ours: set = set()  # names of the kernels torchlike's tables built: only these are warned about
_live = 0  # executables compiled since the last eviction pass left ``_live`` of ours alive
_lock = threading.Lock()
_tables: list = []  # weak references to the kernel tables, whose executables an eviction pass drops
_tick = itertools.count().__next__
_pending = False  # the limit was crossed inside a compile: evict at the next table lookup, outside it


def admit(met: Any, key: Any, sig: Any, limit: int) -> bool:
    """Whether ``sig`` is one of the signatures ``key`` has met in ``met`` (a mapping of key -> set), or there
    was room for one more (it is then recorded): a bounded memory of the shapes a kernel or a structure meets,
    past which a caller treats new ones as churn."""
    seen = met.get(key)
    if seen is None:
        seen = met[key] = set()
    if sig in seen:
        return True
    if len(seen) >= limit:
        return False
    seen.add(sig)
    return True


class LRU(collections.OrderedDict):
    """A table of compiled kernels keeping the ``get_kernel_cache_size()`` most recently used. A table of
    other things (``kernels=False``) is bounded the same way but does not count new kernels."""

    def __init__(self, kernels: bool = True) -> None:
        super().__init__()
        self.kernels = kernels
        self.used: dict = {}  # key -> the global clock at its last use: which executables to drop first
        if kernels:
            _tables.append(weakref.ref(self))

    def get(self, key: Any, default: Any = None) -> Any:
        if _pending:
            _evict()
        try:
            value = self[key]
            self.move_to_end(key)
        except KeyError:  # absent, or evicted by another thread just now
            return default
        if self.kernels:
            self.used[key] = _tick()
        return value

    def get_raw(self, key: Any) -> Any:
        """The value without marking it used (None if absent)."""
        return super().get(key)

    def __setitem__(self, key: Any, value: Any) -> None:
        if self.kernels:
            if key not in self:
                _counts["new_kernels"] += 1
                _ours.add(getattr(value, "__name__", None))
            self.used[key] = _tick()
        super().__setitem__(key, value)
        while len(self) > _size:
            try:
                key, _ = self.popitem(last=False)
            except KeyError:  # emptied by another thread
                break
            self.used.pop(key, None)
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
    out = {k: _counts[k] for k in ("compiles", "new_kernels", "recompiles", "flushes", "evictions",
                                   "executables_evicted")}
    out["by_op"] = dict(_by_op)
    return out


def _jitted(value: Any) -> Any:
    """The jitted function holding a table value's executables (a kernel, or a cold kernel around one)."""
    for v in (value, getattr(value, "jitted", None)):
        if v is not None and hasattr(v, "_cache_size") and hasattr(v, "clear_cache"):
            return v
    return None


def _evict() -> None:
    """Drop the executables of the least recently used kernels until half the limit is free; recount the rest."""
    global _pending, _live
    _pending = False
    found = []
    _tables[:] = [r for r in _tables if r() is not None]
    for ref in list(_tables):
        table = ref()
        if table is None:
            continue
        for key, stamp in list(table.used.items()):
            fn = _jitted(table.get_raw(key))
            if fn is not None:
                n = fn._cache_size()
                if n:
                    found.append((stamp, n, fn))
    found.sort(key=lambda x: x[0])
    live = sum(n for _, n, _ in found)
    target = _size // 2
    dropped = 0
    for _, n, fn in found[:-1]:  # never the kernel that has just compiled
        if live - dropped <= target:
            break
        fn.clear_cache()
        dropped += n
    _counts["executables_evicted"] += dropped
    _live = live - dropped


def _on_event(event: str, duration: float, **kw: Any) -> None:
    global _live, _pending
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
        flush = _live > _size and not _pending
        if flush:
            _counts["flushes"] += 1
            _pending = True
        warn = _by_op[name] == WARN_AFTER and name in _ours and name not in _warned
        if warn:
            _warned.add(name)
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
