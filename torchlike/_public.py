"""Small top-level functions of torch's namespace that belong to no op family."""

from __future__ import annotations

from math import e, inf, nan, pi
from typing import Any

from ._core import dtype as D
from ._core.tensor import Tensor

newaxis = None  # torch's alias, as numpy's

__all__ = ["e", "inf", "nan", "pi", "newaxis", "is_tensor", "is_storage", "is_floating_point", "is_complex", "is_nonzero", "numel", "result_type",
           "typename", "is_same_size", "is_inference"]  # fmt: skip


def is_tensor(obj: Any) -> bool:
    return isinstance(obj, Tensor)


def is_storage(obj: Any) -> bool:
    return False


def is_floating_point(input: Tensor) -> bool:
    return input._dtype.is_floating_point


def is_complex(input: Tensor) -> bool:
    return input._dtype.is_complex


def is_inference(input: Tensor) -> bool:
    return input.is_inference()


def is_nonzero(input: Tensor) -> bool:
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


def numel(input: Tensor) -> int:
    return input.numel()


def is_same_size(input: Tensor, other: Tensor) -> bool:
    return input.shape == other.shape


def result_type(tensor1: Any, tensor2: Any) -> D.dtype:
    dims, zeros, scalars = [], [], []
    for a in (tensor1, tensor2):
        if isinstance(a, Tensor):
            (dims if a.dim() else zeros).append(a.dtype)
        else:
            scalars.append(D.scalar_dtype(a))
    return D.result_type_from(tuple(dims), tuple(zeros), tuple(scalars))


def typename(obj: Any) -> str:
    if isinstance(obj, Tensor):
        from ._ops._common import type_name

        return type_name(obj)
    module = type(obj).__module__
    return f"{module}.{type(obj).__qualname__}" if module not in ("builtins", None) else type(obj).__qualname__
