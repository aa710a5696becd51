"""torch.testing.make_tensor: random test tensors drawn from torch's generator stream."""

from __future__ import annotations

import collections.abc
import math
import warnings
from typing import Any

import torchlike
from torchlike._core import dtype as D

_INTEGRAL_TYPES = (D.uint8, D.int8, D.int16, D.int32, D.int64, D.uint16, D.uint32, D.uint64)
_BOOLEAN_OR_INTEGRAL_TYPES = (D.bool, *_INTEGRAL_TYPES)
_FLOATING_OR_COMPLEX_TYPES = (D.float16, D.bfloat16, D.float32, D.float64, D.complex64, D.complex128)
# clone(memory_format=...) of a contiguous tensor: the permutation that is laid out contiguously, and its rank
_CHANNELS_LAST = {"channels_last": ((0, 2, 3, 1), 4), "channels_last_3d": ((0, 2, 3, 4, 1), 5)}


def _bounds(low: float | None, high: float | None, dtype: D.dtype, lowest: float, highest: float,
            default_low: float, default_high: float) -> tuple:  # fmt: skip
    """Validate ``low``/``high`` as torch does, clamp them into the dtype's range; integer bounds are ceiled."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got {low=} and {high=}")
    if low == high and dtype in _FLOATING_OR_COMPLEX_TYPES:
        warnings.warn(
            "Passing `low==high` to `torch.testing.make_tensor` for floating or complex types "
            "is deprecated since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.",
            FutureWarning,
            stacklevel=3,
        )
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(
            f"The value interval specified by `low` and `high` is [{low}, {high}), "
            f"but {dtype} only supports [{lowest}, {highest})"
        )
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if dtype in _BOOLEAN_OR_INTEGRAL_TYPES:
        # ceil low so no value falls below it; high is exclusive for randint, so it is ceiled too
        return math.ceil(low), math.ceil(high)
    return low, high


def _uniform(t: Any, low: float, high: float) -> Any:
    # torch: uniform_ needs high - low <= the dtype's max, so a wider range is drawn halved and doubled
    if high - low >= torchlike.finfo(t.dtype).max:
        return t.uniform_(low / 2, high / 2).mul_(2)
    return t.uniform_(low, high)


def _clone_with_format(t: Any, memory_format: Any) -> Any:
    name = str(memory_format).removeprefix("torch.")
    if name not in _CHANNELS_LAST:
        return t.clone()  # contiguous_format / preserve_format of a freshly made contiguous tensor
    perm, rank = _CHANNELS_LAST[name]
    if t.dim() != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {name} format")
    inverse = tuple(perm.index(i) for i in range(rank))
    return t.permute(*perm).contiguous().permute(*inverse)


def make_tensor(*shape: int | torchlike.Size | list[int] | tuple[int, ...], dtype: D.dtype, device: Any,
                low: float | None = None, high: float | None = None, requires_grad: bool = False,
                noncontiguous: bool = False, exclude_zero: bool = False, memory_format: Any = None) -> Any:  # fmt: skip
    """Implementation of torch.testing.make_tensor; after ``manual_seed`` the values equal torch's (CPU generator).

    Differs: torchlike has no complex32 or float8 dtypes, so those are not accepted.
    """
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(
            f"The parameters `noncontiguous` and `memory_format` are mutually exclusive, "
            f"but got {noncontiguous=} and {memory_format=}"
        )
    if requires_grad and dtype in _BOOLEAN_OR_INTEGRAL_TYPES:
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, but got {dtype=}")

    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:
        # twice the last dimension, so the strided view picks values that differ from a contiguous draw
        shape = (*shape[:-1], 2 * shape[-1])

    if dtype is D.bool:
        low, high = _bounds(low, high, dtype, 0, 2, 0, 2)
        result = torchlike.randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _INTEGRAL_TYPES:
        info = torchlike.iinfo(dtype)
        # torch: randint converts bounds to int64, so int64's max itself can't be the exclusive bound + 1
        highest = info.max + (1 if dtype is not D.int64 else 0)
        low, high = _bounds(low, high, dtype, info.min, highest, -9, 10)
        result = torchlike.randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _FLOATING_OR_COMPLEX_TYPES:
        info = torchlike.finfo(dtype)
        low, high = _bounds(low, high, dtype, info.min, info.max, -9, 9)
        if dtype.is_complex:
            # torch draws into view_as_real(result): real and imaginary parts interleaved
            parts = _uniform(torchlike.empty((*shape, 2), device=device, dtype=dtype.to_real()), low, high)
            result = torchlike.complex(parts[..., 0], parts[..., 1])
        else:
            result = _uniform(torchlike.empty(shape, device=device, dtype=dtype), low, high)
    else:
        raise TypeError(
            f"The requested dtype '{dtype}' is not supported by torch.testing.make_tensor()."
            " To request support, file an issue at: https://github.com/pytorch/pytorch/issues"
        )

    if noncontiguous:
        result = result[..., 1::2]  # offset by one to also catch offset bugs
    elif memory_format is not None:
        result = _clone_with_format(result, memory_format)

    if exclude_zero:
        result[result == 0] = 1 if dtype in _BOOLEAN_OR_INTEGRAL_TYPES else torchlike.finfo(dtype).tiny

    if dtype in _FLOATING_OR_COMPLEX_TYPES:
        result.requires_grad = requires_grad
    return result
