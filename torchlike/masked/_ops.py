"""torch.masked's functions: reductions and normalisations that ignore the elements where ``mask`` is False.

Each function fills the masked-out elements with the operation's identity (0 for sum, -inf for amax, ...) and
runs the ordinary op, as torch does, so values, dtypes, gradients (zero at masked-out elements) and the
results for fully masked-out slices (the identity, or nan where none exists) are torch's. Written against the
public namespace. Strided tensors only: torchlike has no sparse layouts (torch's sparse branches are absent).
"""

from __future__ import annotations

import math
from typing import Any, Sequence, Union

import torchlike
from torchlike import Tensor

__all__ = [
    "amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax", "logaddexp", "logsumexp", "mean",
    "median", "norm", "normalize", "prod", "softmax", "softmin", "std", "sum", "var",
]  # fmt: skip

Dims = Union[int, Sequence[int], None]

# torch: integer and bool sums and products accumulate in int64 unless a dtype is given
_WIDENED = ("bool", "uint8", "int8", "int16", "int32")


def _dims(dim: Any, ndim: int) -> tuple[int, ...]:
    """``dim`` as a sorted tuple of non-negative dims; None and () mean every dim."""
    if dim is None or dim == ():
        return tuple(range(ndim))
    bound = max(ndim, 1)
    found: list[int] = []
    for d in (dim,) if isinstance(dim, int) else dim:
        if d in found:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if not -bound <= d < bound:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-bound}, {bound - 1}], but got {d})"
            )
        found.append(d % bound)
    return tuple(sorted(found))


def _canonical_mask(input: Tensor, mask: Tensor) -> Tensor:
    """``mask`` broadcast to ``input``'s shape, as bool."""
    if mask.shape != input.shape:
        if mask.ndim > input.ndim:
            raise IndexError(
                "_input_mask expected broadcastable mask (got mask dimensionality higher than of the input)"
            )
        mask = torchlike.broadcast_to(mask, input.shape)
    return mask.to(dtype=torchlike.bool)


def _identity(op: str, input: Tensor, ord: Any = 2) -> Tensor | None:
    """The value that leaves ``op``'s result unchanged (None where it has none, e.g. mean, var)."""
    dtype = input.dtype
    lowest = op in ("amax", "argmax", "logaddexp", "logsumexp")
    if op == "sum" or (op == "norm" and ord != -math.inf):
        value: Any = 0
    elif op == "prod":
        value = 1
    elif op == "norm":
        if not dtype.is_floating_point:
            raise AssertionError(f"input must be floating point, got {dtype}")
        value = math.inf
    elif op == "median":  # nanmedian skips nan
        dtype = dtype if dtype.is_floating_point else torchlike.float32
        value = math.nan
    elif op in ("mean", "var", "std"):
        return None
    elif lowest or op in ("amin", "argmin"):
        if dtype.is_floating_point:
            value = -math.inf if lowest else math.inf
        elif op == "logsumexp" and dtype.is_complex:
            value = complex(-math.inf, 0)
        elif input.is_signed() or dtype == torchlike.uint8:
            value = torchlike.iinfo(dtype).min if lowest else torchlike.iinfo(dtype).max
        else:
            raise NotImplementedError(f"identity of {op} on {dtype} input")
    else:
        raise NotImplementedError(f"identity of {op} on {dtype} input")
    return torchlike.tensor(value, dtype=dtype, device=input.device)


def _fill(op: str, input: Tensor, mask: Tensor | None, ord: Any = 2) -> Tensor:
    """``input`` with its masked-out elements replaced by ``op``'s identity."""
    if mask is None:
        return input
    return torchlike.where(_canonical_mask(input, mask), input, _identity(op, input, ord))


def _sum_dtype(input: Tensor, dtype: Any) -> Any:
    if dtype is not None:
        return dtype
    return torchlike.int64 if str(input.dtype).removeprefix("torch.") in _WIDENED else input.dtype


def sum(
    input: Tensor, dim: Dims = None, *, keepdim: bool | None = False, dtype: Any = None, mask: Tensor | None = None
) -> Tensor:
    """torch.masked.sum: the sum of the elements where ``mask`` is True (0 where none is)."""
    dtype = _sum_dtype(input, dtype)
    dims = _dims(dim, input.ndim)
    return torchlike.sum(_fill("sum", input, mask), dims, bool(keepdim), dtype=dtype)


def prod(
    input: Tensor, dim: Dims = None, *, keepdim: bool | None = False, dtype: Any = None, mask: Tensor | None = None
) -> Tensor:
    """torch.masked.prod: the product of the elements where ``mask`` is True (1 where none is)."""
    dtype = _sum_dtype(input, dtype)
    dims = _dims(dim, input.ndim)
    result = _fill("prod", input, mask).to(dtype=dtype)
    for d in reversed(dims):  # torch.prod reduces one dim at a time
        result = result.prod(dim=d, keepdim=bool(keepdim))
    return result


def cumsum(input: Tensor, dim: int, *, dtype: Any = None, mask: Tensor | None = None) -> Tensor:
    """torch.masked.cumsum: masked-out elements count as 0."""
    dtype = input.dtype if dtype is None else dtype
    d = _dims(dim, input.ndim)[0]
    return torchlike.cumsum(_fill("sum", input, mask), d, dtype=dtype).to(dtype=dtype)


def cumprod(input: Tensor, dim: int, *, dtype: Any = None, mask: Tensor | None = None) -> Tensor:
    """torch.masked.cumprod: masked-out elements count as 1."""
    dtype = input.dtype if dtype is None else dtype
    d = _dims(dim, input.ndim)[0]
    return torchlike.cumprod(_fill("prod", input, mask), d, dtype=dtype).to(dtype=dtype)


def _extremum(op: str, input: Tensor, dim: Any, keepdim: Any, dtype: Any, mask: Tensor | None) -> Tensor:
    dtype = input.dtype if dtype is None else dtype
    filled = _fill(op, input, mask)
    return getattr(torchlike, op)(filled, _dims(dim, filled.ndim), bool(keepdim)).to(dtype=dtype)


def amax(
    input: Tensor, dim: Dims = None, *, keepdim: bool | None = False, dtype: Any = None, mask: Tensor | None = None
) -> Tensor:
    """torch.masked.amax: the largest element where ``mask`` is True (the dtype's lowest value where none is)."""
    return _extremum("amax", input, dim, keepdim, dtype, mask)


def amin(
    input: Tensor, dim: Dims = None, *, keepdim: bool | None = False, dtype: Any = None, mask: Tensor | None = None
) -> Tensor:
    """torch.masked.amin: the smallest element where ``mask`` is True (the dtype's highest value where none is)."""
    return _extremum("amin", input, dim, keepdim, dtype, mask)


def _arg(op: str, input: Tensor, dim: Any, keepdim: Any, dtype: Any, mask: Tensor | None) -> Tensor:
    # torch: the index is cast to ``dtype``, which defaults to the input's dtype (float indices for float input)
    dtype = input.dtype if dtype is None else dtype
    return getattr(torchlike, op)(_fill(op, input, mask), dim, bool(keepdim)).to(dtype=dtype)


def argmax(
    input: Tensor, dim: int | None = None, *, keepdim: bool | None = False, dtype: Any = None,
    mask: Tensor | None = None,
) -> Tensor:  # fmt: skip
    """torch.masked.argmax: the index of the largest element where ``mask`` is True, in ``dtype`` (default:
    the input's)."""
    return _arg("argmax", input, dim, keepdim, dtype, mask)


def argmin(
    input: Tensor, dim: int | None = None, *, keepdim: bool | None = False, dtype: Any = None,
    mask: Tensor | None = None,
) -> Tensor:  # fmt: skip
    """torch.masked.argmin: the index of the smallest element where ``mask`` is True, in ``dtype`` (default:
    the input's)."""
    return _arg("argmin", input, dim, keepdim, dtype, mask)


def _count(input: Tensor, dim: Any, keepdim: bool, mask: Tensor | None) -> Tensor:
    """How many elements are masked in along ``dim`` (int64)."""
    if mask is None:
        return sum(torchlike.ones(input.shape, dtype=torchlike.int64, device=input.device), dim, keepdim=keepdim)
    return mask.sum(dim=dim, keepdim=keepdim)


def mean(
    input: Tensor, dim: Dims = None, *, keepdim: bool | None = False, dtype: Any = None, mask: Tensor | None = None
) -> Tensor:
    """torch.masked.mean: nan where every element of a slice is masked out."""
    source = "Optional"
    if dtype is None:
        dtype, source = input.dtype, "Input"
    if not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(
            f"mean(): Could not infer output dtype. {source} dtype must be either "
            f"a floating point or complex dtype. Got: {dtype}"
        )
    if mask is not None:
        mask = _canonical_mask(input, mask)
    count = _count(input, dim, bool(keepdim), mask)
    return sum(input, dim, keepdim=keepdim, dtype=dtype, mask=mask) / count


def median(
    input: Tensor, dim: int = -1, *, keepdim: bool = False, dtype: Any = None, mask: Tensor | None = None
) -> Tensor:
    """torch.masked.median (the lower median, as torch.median): nan where a slice is fully masked out, which
    integer input may not have."""
    dtype = input.dtype if dtype is None else dtype
    d = _dims(dim, input.ndim)[0]
    is_float = input.dtype.is_floating_point
    if not is_float:
        input = input.to(dtype=torchlike.float32)
    output = torchlike.nanmedian(_fill("median", input, mask), d, keepdim).values
    if is_float:
        return output
    if torchlike.isnan(output).any():
        raise ValueError("masked median expects no fully masked out rows if dtype is not floating point")
    return output.to(dtype=dtype)


def logsumexp(
    input: Tensor, dim: Dims = None, *, keepdim: bool = False, dtype: Any = None, mask: Tensor | None = None
) -> Tensor:
    """torch.masked.logsumexp: -inf where every element of a slice is masked out."""
    dtype = input.dtype if dtype is None else dtype
    dims = _dims(dim, input.ndim)
    return torchlike.logsumexp(_fill("logsumexp", input, mask), dims, keepdim=keepdim).to(dtype=dtype)


def logaddexp(
    input: Tensor, other: Tensor, *, dtype: Any = None, input_mask: Tensor | None = None,
    other_mask: Tensor | None = None,
) -> Tensor:  # fmt: skip
    """torch.masked.logaddexp: each operand's masked-out elements count as -inf."""
    dtype = input.dtype if dtype is None else dtype
    a = _fill("logaddexp", input, input_mask)
    b = _fill("logaddexp", other, other_mask)
    return torchlike.logaddexp(a, b).to(dtype=dtype)


def norm(
    input: Tensor, ord: float | None = 2.0, dim: Dims = None, *, keepdim: bool | None = False, dtype: Any = None,
    mask: Tensor | None = None,
) -> Tensor:  # fmt: skip
    """torch.masked.norm: the vector norm of the masked-in elements (masked-out ones count as 0, or as inf for
    ``ord=-inf``)."""
    dtype = input.dtype if dtype is None else dtype
    filled = _fill("norm", input, mask, ord)
    return torchlike.linalg.vector_norm(filled, ord, _dims(dim, input.ndim), bool(keepdim), dtype=dtype)


def _std_var(
    input: Tensor, dim: Any, unbiased: bool | None, correction: Any, keepdim: Any, dtype: Any,
    mask: Tensor | None, take_sqrt: bool,
) -> Tensor:  # fmt: skip
    if unbiased is not None and correction is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    if correction is None:
        correction = 1.0 if unbiased is None else float(unbiased)
    correction = float(correction)
    if dtype is None:
        dtype = input.dtype
        if not (dtype.is_floating_point or dtype.is_complex):
            dtype = torchlike.float32
    compute = dtype if (dtype.is_floating_point or dtype.is_complex) else torchlike.float32
    if mask is not None:
        mask = _canonical_mask(input, mask)
    count = _count(input, dim, True, mask)
    centred = input - sum(input, dim, keepdim=True, dtype=dtype, mask=mask) / count
    total = sum(centred * centred.conj(), dim, keepdim=keepdim, dtype=compute, mask=mask)
    if not keepdim:
        count = count.reshape(total.shape)
    if correction != 0:
        count = count.to(compute.to_real() if compute.is_complex else compute) - correction
        count = torchlike.maximum(count, count.new_zeros([]))
    output = (total / count).to(dtype=dtype)
    return torchlike.sqrt(output) if take_sqrt else output


def var(
    input: Tensor, dim: Dims = None, unbiased: bool | None = None, *, correction: float | None = None,
    keepdim: bool | None = False, dtype: Any = None, mask: Tensor | None = None,
) -> Tensor:  # fmt: skip
    """torch.masked.var: nan where a slice has no more masked-in elements than ``correction``."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, False)


def std(
    input: Tensor, dim: Dims = None, unbiased: bool | None = None, *, correction: int | None = None,
    keepdim: bool | None = False, dtype: Any = None, mask: Tensor | None = None,
) -> Tensor:  # fmt: skip
    """torch.masked.std: the square root of ``masked.var``."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, True)


def _normalisation(fn: str, fill: str, input: Tensor, dim: int, dtype: Any, mask: Tensor | None) -> Tensor:
    dtype = input.dtype if dtype is None else dtype
    d = _dims(dim, input.ndim)[0]
    return getattr(torchlike.nn.functional, fn)(_fill(fill, input, mask), d, dtype=dtype)


def softmax(input: Tensor, dim: int, *, dtype: Any = None, mask: Tensor | None = None) -> Tensor:
    """torch.masked.softmax: masked-out elements get 0 (a fully masked-out slice gives nan)."""
    return _normalisation("softmax", "amax", input, dim, dtype, mask)


def log_softmax(input: Tensor, dim: int, *, dtype: Any = None, mask: Tensor | None = None) -> Tensor:
    """torch.masked.log_softmax: masked-out elements get -inf (a fully masked-out slice gives nan)."""
    return _normalisation("log_softmax", "amax", input, dim, dtype, mask)


def softmin(input: Tensor, dim: int, *, dtype: Any = None, mask: Tensor | None = None) -> Tensor:
    """torch.masked.softmin: masked-out elements get 0 (a fully masked-out slice gives nan)."""
    return _normalisation("softmin", "amin", input, dim, dtype, mask)


def normalize(
    input: Tensor, ord: float, dim: int, *, eps: float = 1e-12, dtype: Any = None, mask: Tensor | None = None
) -> Tensor:
    """torch.masked.normalize: masked-in elements divided by their ``ord``-norm (at least ``eps``); masked-out
    elements are 0."""
    dtype = input.dtype if dtype is None else dtype
    filled = _fill("sum", input, mask)
    denom = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return torchlike.divide(filled, torchlike.maximum(denom, denom.new_full([], eps)))
