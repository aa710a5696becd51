"""Tensor's autograd methods (``grad_fn``, ``retain_grad``, hooks, ``backward``), attached to the
Tensor class from here at import time, so that ``_core`` does not import the room above it."""

from __future__ import annotations

import warnings
from typing import Any, Callable

from .._core.tensor import Tensor
from .._core import grad_mode, graph
from . import engine

_warned_float_of_grad = [False]
_core_float = Tensor.__float__


def grad_fn(self: Tensor) -> Any:
    return graph.grad_fn_of(self)


def retain_grad(self: Tensor) -> None:
    if self._node is None:
        if not self._rg:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        return
    if not self._retains_grad:
        graph.retain(self)
    self._retains_grad = True


def register_hook(self: Tensor, hook: Callable) -> Any:
    if not self._rg:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    return graph.register_tensor_hook(self, hook)


def register_post_accumulate_grad_hook(self: Tensor, hook: Callable) -> Any:
    """Call ``hook(tensor)`` after a backward pass has accumulated into this leaf's ``.grad``."""
    if self._node is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if not self._rg:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    hooks = self.__dict__.setdefault("_post_acc_hooks", [])
    hooks.append(hook)
    return graph._RemovableHandle(hooks, hook)


def backward(
    self: Tensor, gradient: Tensor | None = None, retain_graph: bool | None = None, create_graph: bool = False,
    inputs: Any = None,
) -> None:  # fmt: skip
    engine.backward((self,), (gradient,), retain_graph, create_graph, inputs)


def __float__(self: Tensor) -> float:
    # torch warns once per process, for float() only, and only while grad mode is on
    # (LBFGS's float(loss) under no_grad stays silent)
    if self._rg and not _warned_float_of_grad[0] and grad_mode._state.enabled:
        _warned_float_of_grad[0] = True
        warnings.warn(
            "Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
            "Consider using tensor.detach() first.",
            UserWarning,
            stacklevel=2,
        )
    return _core_float(self)


Tensor.grad_fn = property(grad_fn)
for _f in (retain_grad, __float__, register_hook, register_post_accumulate_grad_hook, backward):
    _f.__qualname__ = f"Tensor.{_f.__name__}"
    setattr(Tensor, _f.__name__, _f)
