"""The op table and its families; importing this package attaches the Tensor methods."""

from __future__ import annotations

import functools
import types
from typing import Any, Callable

from .._core import dtype as D
from .._core.tensor import Tensor
from ..autograd import grad_mode, graph
import importlib
import pkgutil

from . import creation, indexing, linalg, pointwise, reduction, return_types, shape, views  # noqa: F401
from .registry import METHODS, OPS, VIEWS

# Every module of this package is an op family; importing them all fills the table.
FAMILIES = [
    importlib.import_module(f"{__name__}.{m.name}")
    for m in pkgutil.iter_modules(__path__)
    if m.name not in ("registry",)
]


def public_names() -> dict:
    """The torchlike.* names the op families define: table ops, views, and each module's ``__all__``."""
    names = {}
    for fam in FAMILIES:
        for n in getattr(fam, "__all__", ()):
            names[n] = getattr(fam, n)
    for n, op in OPS.items():
        if not n.startswith("_") and op.method != "only":
            names.setdefault(n, op.wrapper)
    for n, fn in VIEWS.items():
        if n != "view":
            names.setdefault(n, fn)
    return names


@functools.cache
def namespace() -> types.SimpleNamespace:
    """``public_names()`` as attributes: how the rooms above call ops by their torch names
    (``_ops.namespace().stack``) without importing the top-level ``torchlike`` that imports them."""
    return types.SimpleNamespace(**public_names())


def _inplace(op: Any) -> Callable:
    fn = op.wrapper

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        if grad_mode._state.enabled and (self._rg or self._base_t is not None):
            graph.check_inplace(self)
        if self._view is not None or (args and isinstance(args[0], Tensor) and args[0]._buf is self._buf):
            indexing.check_overlap(self, args[0] if args else None)
        result = fn(self, *args, **kwargs)
        commit(self, result)
        return self

    method.__name__ = method.__qualname__ = op.name + "_"
    method.__doc__ = f"In-place version of :func:`torchlike.{op.name}`."
    return method


def commit(self: Tensor, result: Tensor) -> None:
    """Finish an in-place op: torch's cast and shape rules, then the mutation door."""
    if result._dtype is not self._dtype and not D.can_cast(result._dtype, self._dtype):
        raise RuntimeError(
            f"result type {D.cpp_name(result._dtype)} can't be cast to the desired output type {D.cpp_name(self._dtype)}"
        )
    if result._shape != self._shape:
        raise RuntimeError(
            f"output with shape [{', '.join(map(str, self._shape))}] doesn't match the broadcast shape "
            f"[{', '.join(map(str, result._shape))}]"
        )
    graph.commit_inplace(self, result)


def _swap(fn: Callable) -> Callable:
    def r(self: Tensor, other: Any) -> Any:
        return fn(other, self)

    return r


def _rdiv(self: Tensor, other: Any) -> Any:
    return pointwise.reciprocal(self) * other  # torch: other / self is computed as reciprocal(self) * other


def _install() -> None:
    for name, op in list(OPS.items()):
        if op.method and not name.startswith("_"):
            setattr(Tensor, name if op.method is True or name != op.name else op.method, op.wrapper)
        if op.inplace:
            iname = (name if op.inplace is True else op.inplace) + "_"
            setattr(Tensor, iname, _inplace(op))
    for name, fn in {**VIEWS, **METHODS}.items():
        setattr(Tensor, name, fn)
    for name, fn in getattr(__import__(f"{__name__}.registry", fromlist=["x"]), "PROPERTIES", {}).items():
        setattr(Tensor, name, property(fn))

    P = pointwise
    Tensor.max = reduction.max
    Tensor.min = reduction.min
    Tensor.clamp_min = P.clamp_min
    Tensor.clamp_max = P.clamp_max
    Tensor.where = lambda self, condition, other: P.where(condition, self, other)
    dunders = {
        "__add__": P.add, "__radd__": P.add, "__iadd__": Tensor.add_,
        "__sub__": P.sub, "__rsub__": P.rsub, "__isub__": Tensor.sub_,
        "__mul__": P.mul, "__rmul__": P.mul, "__imul__": Tensor.mul_,
        "__truediv__": P.div, "__rtruediv__": _rdiv, "__itruediv__": Tensor.div_,
        "__div__": P.div, "__rdiv__": _rdiv, "__idiv__": Tensor.div_,  # torch keeps Python 2's names too
        "__floordiv__": P.floor_divide, "__rfloordiv__": _swap(P.floor_divide), "__ifloordiv__": Tensor.floor_divide_,
        "__mod__": P.remainder, "__rmod__": _swap(P.remainder), "__imod__": Tensor.remainder_,
        "__pow__": P.pow, "__rpow__": _swap(P.pow), "__ipow__": Tensor.pow_,
        "__matmul__": linalg.matmul, "__rmatmul__": _swap(linalg.matmul),
        "__neg__": P.neg, "__pos__": lambda self: self, "__abs__": P.abs,
        "__invert__": lambda self: P.logical_not(self) if self._dtype is D.bool else P.bitwise_not(self),
        "__and__": P.bitwise_and, "__rand__": P.bitwise_and, "__iand__": Tensor.bitwise_and_,
        "__or__": P.bitwise_or, "__ror__": P.bitwise_or, "__ior__": Tensor.bitwise_or_,
        "__xor__": P.bitwise_xor, "__rxor__": P.bitwise_xor, "__ixor__": Tensor.bitwise_xor_,
        "__lshift__": P.bitwise_left_shift, "__rlshift__": _swap(P.bitwise_left_shift),
        "__ilshift__": Tensor.bitwise_left_shift_,
        "__rshift__": P.bitwise_right_shift, "__rrshift__": _swap(P.bitwise_right_shift),
        "__irshift__": Tensor.bitwise_right_shift_,
        "__eq__": P.eq, "__ne__": P.ne, "__lt__": P.lt, "__le__": P.le, "__gt__": P.gt, "__ge__": P.ge,
    }  # fmt: skip
    for name, fn in dunders.items():
        setattr(Tensor, name, fn)


_install()
