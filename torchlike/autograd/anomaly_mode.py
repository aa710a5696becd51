"""torch.autograd anomaly mode: detect_anomaly, set_detect_anomaly and the NaN check of backward.

With anomaly mode on and ``check_nan``, backward runs node by node (the engine's per-node path,
never the fused one) and raises torch's error naming the first node whose gradient holds a NaN.
Differs from torch: the "Error detected in XBackward0. Traceback of forward call that caused the
error" warning is not printed (forward tracebacks are not recorded), and ``create_graph=True``
backwards are not checked.
"""

from __future__ import annotations

import warnings
from typing import Any

import jax
import jax.numpy as jnp

from .._core import lazy

__all__ = ["detect_anomaly", "set_detect_anomaly"]

_enabled = False
_check_nan = True
checking = False  # what the engine reads: enabled and check_nan


def is_anomaly_enabled() -> bool:
    """torch.is_anomaly_enabled."""
    return _enabled


def is_anomaly_check_nan_enabled() -> bool:
    """torch.is_anomaly_check_nan_enabled."""
    return _check_nan


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """torch.set_anomaly_enabled: switch anomaly mode globally."""
    global _enabled, _check_nan, checking
    _enabled = bool(enabled)
    _check_nan = bool(check_nan)
    checking = _enabled and _check_nan
    lazy.suspend(_enabled)  # anomaly detection needs each op's values as it runs


class detect_anomaly:
    """Context manager turning anomaly detection on (torch's is not a decorator either)."""

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = _enabled
        self.check_nan = check_nan
        self.prev_check_nan = _check_nan
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should only be enabled "
            "for debugging.",
            stacklevel=2,
        )

    def __enter__(self) -> None:
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *args: object) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


class set_detect_anomaly:
    """Set anomaly detection on or off; as a function call, or as a context manager that restores it."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = _enabled
        self.prev_check_nan = _check_nan
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *args: object) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


_has_nan = jax.jit(lambda a: jnp.isnan(a).any())


def check_grads(node: Any, grads: Any) -> None:
    """Raise torch's error if a gradient ``node`` produced holds a NaN. ``grads`` align with
    ``node.diff``; torch numbers a node's outputs by its inputs (``next_functions``)."""
    used: set = set()
    for k, g in enumerate(grads):
        if g is None:
            continue
        idx = _output_index(node, k, used)
        used.add(idx)
        arr = g._data() if hasattr(g, "_data") else g
        if jnp.issubdtype(arr.dtype, jnp.inexact) and bool(_has_nan(arr)):
            raise RuntimeError(f"Function '{type(node).__name__}' returned nan values in its {idx}th output.")


def _output_index(node: Any, k: int, used: set) -> int:
    if node.kernel is None:  # a custom autograd.Function: gradients follow forward's arguments
        return node.diff[k][0]
    src, nr = node.edges[k]
    for i, (s, n) in enumerate(node.input_edges):
        if s is src and n == nr and i not in used:
            return i
    return k
