"""torch.autograd anomaly mode: detect_anomaly, set_detect_anomaly and the NaN check of backward.

While anomaly mode is on, every new backward node keeps the stack that created it in
``metadata["traceback_"]`` (and a node a backward creates keeps that backward's node in
``metadata["parent_"]``); with it off nothing is recorded. Backward then runs node by node (the
engine's per-node path, never the fused one); with ``check_nan`` it raises torch's error naming
the first node whose gradient holds a NaN. When a node's backward raises, torch's "Error detected
in XBackward0. Traceback of forward call that caused the error" warnings are issued first.
Differs from torch: the traceback stops at the line that called into torchlike (torch's also
lists its own Python frames below ``torch.autograd.grad``), and the warnings lack torch's C++
"(Triggered internally at ...)" suffix.
"""

from __future__ import annotations

import os
import traceback
import warnings
from typing import Any, Callable

import jax
import jax.numpy as jnp

from .._core import graph as _graph
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
    if _enabled and _record_stack not in _graph.region:
        _graph.region.append(_record_stack)
    elif not _enabled and _record_stack in _graph.region:
        _graph.region.remove(_record_stack)


_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_INTERNAL = tuple(_PKG + d + os.sep for d in ("_core", "_ops", "_compile", "autograd"))
parent: Any = None  # the node whose backward is running (create_graph records nodes under it)


def _record_stack(node: Any) -> None:
    frames = traceback.extract_stack()
    while frames and frames[-1].filename.startswith(_INTERNAL):
        frames.pop()  # torchlike's dispatch, below the call torch's stack ends at
    node.metadata["traceback_"] = traceback.format_list(frames)
    if parent is not None:
        node.metadata["parent_"] = parent


def report(node: Any) -> None:
    """torch's warnings for an error raised by ``node``'s backward: where the node (and the nodes whose
    backward created it) came from."""
    meta = node._metadata or {}
    name = type(node).__name__
    if "traceback_" not in meta:
        warnings.warn(
            f"Error detected in {name}. No forward pass information available. Enable detect anomaly during "
            "forward pass for more information.",
            stacklevel=2,
        )
        return
    warnings.warn(
        f"Error detected in {name}. Traceback of forward call that caused the error:\n" + "".join(meta["traceback_"]),
        stacklevel=2,
    )
    node = meta.get("parent_")
    while node is not None:
        meta = node._metadata or {}
        if "traceback_" not in meta:
            break
        warnings.warn(
            f"\n\nPrevious calculation was induced by {type(node).__name__}. Traceback of forward call that induced "
            "the previous calculation:\n" + "".join(meta["traceback_"]),
            stacklevel=2,
        )
        node = meta.get("parent_")


def reporting(vjp: Callable, nodes: list) -> Callable:
    """``vjp(i, ...)`` of the engine's per-node loop, reporting torch's way a node whose backward raises."""
    global parent

    def run(i: int, *args: Any) -> Any:
        global parent
        prev, parent = parent, nodes[i]
        try:
            return vjp(i, *args)
        except Exception:
            report(nodes[i])
            raise
        finally:
            parent = prev

    return run


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
