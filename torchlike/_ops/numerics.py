"""Numerics and statistics: diff, gradient, trapezoid rules, quantiles, histograms, isin, cov/corrcoef,
frexp/ldexp, renorm, unravel_index."""

from __future__ import annotations

import builtins
import math
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._core import dtype as D
from .._core.tensor import Tensor, wrap_dim
from . import registry, return_types
from ._common import special_ord
from .registry import (
    OptRawTensor,
    OptScalar,
    OptTensor,
    RawTensor,
    Scalar,
    ScalarOrStatic,
    TensorArg,
    TensorList,
    TensorOrScalar,
    defop,
    expose,
)


if not hasattr(return_types, "histogramdd"):
    return_types.histogramdd = return_types._structseq("histogramdd", ("hist", "bin_edges"))


def _slice(x: Any, axis: int, start: int | None, stop: int | None) -> Any:
    index = [builtins.slice(None)] * x.ndim
    index[axis] = builtins.slice(start, stop)
    return x[tuple(index)]


# --- diff ---------------------------------------------------------------------------------------------------


def _diff_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x, prepend, append = dyn
    n, dim = static
    if x.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    for name, t in (("prepend", prepend), ("append", append)):
        if t is not None and t.dim() != x.dim():
            raise RuntimeError(f"diff expects {name} or its dimension to match input")


@defop(promote="default", out=True, grad_name="SubBackward0", check=_diff_check)
def diff(input: TensorArg, n: int = 1, dim: int = -1, prepend: OptTensor = None, append: OptTensor = None) -> Any:
    axis = dim % input.ndim
    parts = [a for a in (prepend, input, append) if a is not None]
    x = jnp.concatenate(parts, axis) if len(parts) > 1 else input
    for _ in range(n):
        if x.shape[axis] == 0:
            break
        left, right = _slice(x, axis, None, -1), _slice(x, axis, 1, None)
        x = jnp.logical_xor(right, left) if x.dtype == jnp.bool_ else right - left
    return x


# --- gradient ------------------------------------------------------------------------------------------------


def _gradient_axis(y: Any, axis: int, h: Any, edge_order: int) -> Any:
    """numpy's second-order accurate central differences along ``axis``; ``h`` a number or a coordinate array."""
    n = y.shape[axis]
    s = lambda a, b: _slice(y, axis, a, b)  # noqa: E731
    if not isinstance(h, (int, float)):
        shape = [1] * y.ndim
        shape[axis] = -1
        dx = jnp.diff(h)
        dx1, dx2 = dx[:-1].reshape(shape), dx[1:].reshape(shape)
        a, b, c = -dx2 / (dx1 * (dx1 + dx2)), (dx2 - dx1) / (dx1 * dx2), dx1 / (dx2 * (dx1 + dx2))
        interior = a * s(None, -2) + b * s(1, -1) + c * s(2, None)
        if edge_order == 1:
            first = (s(1, 2) - s(0, 1)) / dx[0]
            last = (s(n - 1, n) - s(n - 2, n - 1)) / dx[-1]
        else:
            d1, d2 = dx[0], dx[1]
            first = (-(2 * d1 + d2) / (d1 * (d1 + d2)) * s(0, 1) + (d1 + d2) / (d1 * d2) * s(1, 2)
                     - d1 / (d2 * (d1 + d2)) * s(2, 3))  # fmt: skip
            d1, d2 = dx[-2], dx[-1]
            last = (d2 / (d1 * (d1 + d2)) * s(n - 3, n - 2) - (d2 + d1) / (d1 * d2) * s(n - 2, n - 1)
                    + (2 * d2 + d1) / (d2 * (d1 + d2)) * s(n - 1, n))  # fmt: skip
    else:
        interior = (s(2, None) - s(None, -2)) / (2.0 * h)
        if edge_order == 1:
            first = (s(1, 2) - s(0, 1)) / h
            last = (s(n - 1, n) - s(n - 2, n - 1)) / h
        else:
            first = (-1.5 * s(0, 1) + 2.0 * s(1, 2) - 0.5 * s(2, 3)) / h
            last = (0.5 * s(n - 3, n - 2) - 2.0 * s(n - 2, n - 1) + 1.5 * s(n - 1, n)) / h
    return jnp.concatenate([first, interior, last], axis)


@defop("_gradient", promote=None, method=False, grad_name="DivBackward0")
def _gradient_op(input: RawTensor, spacing: tuple, axes: tuple, edge_order: int, cdt: Any) -> Any:
    y = input.astype(cdt.np)
    return tuple(_gradient_axis(y, axis, h, edge_order) for axis, h in zip(axes, spacing))


@defop("_gradient_coords", promote=None, method=False, grad_name="DivBackward0")
def _gradient_coords_op(input: RawTensor, coords: TensorList, axes: tuple, edge_order: int, cdt: Any) -> Any:
    y = input.astype(cdt.np)
    return tuple(_gradient_axis(y, axis, c.astype(cdt.np), edge_order) for axis, c in zip(axes, coords))


@expose("torch")
def gradient(input: Tensor, *, spacing: Any = 1, dim: Any = None, edge_order: int = 1) -> tuple:
    """torch.gradient: numpy's central differences; ``spacing`` a number, numbers, or coordinate tensors."""
    if dim is None:
        axes = tuple(range(input.dim()))
    elif isinstance(dim, int):
        axes = (wrap_dim(dim, input.dim()),)
    else:
        axes = tuple(wrap_dim(d, input.dim()) for d in dim)
    if spacing is None:
        spacing = 1
    if not isinstance(spacing, (list, tuple)):
        spacing = [spacing]
    spacing = list(spacing)
    if len(spacing) == 1 and len(axes) > 1:
        spacing = spacing * len(axes)
    if len(spacing) != len(axes):
        raise RuntimeError(
            f"torch.gradient expected spacing to be unspecified, a scalar or a list of length {len(axes)} but got "
            f"a list of length {len(spacing)}"
        )  # fmt: skip
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    for axis in axes:
        if input.shape[axis] < edge_order + 1:
            raise RuntimeError(
                "torch.gradient expected each dimension size to be at least edge_order+1"
            )
    cdt = input._dtype if (input._dtype.is_floating_point or input._dtype.is_complex) else D.get_default_dtype()
    if builtins.any(isinstance(s, Tensor) for s in spacing):
        coords = []
        for s, axis in zip(spacing, axes):
            if not isinstance(s, Tensor):
                raise TypeError("torch.gradient: spacing must be all numbers or all tensors")
            if s.dim() != 1 or s.shape[0] != input.shape[axis]:
                raise RuntimeError(
                    f"torch.gradient expected each tensor to be on the same device and of the same size along dim "
                    f"{axis} as input"
                )  # fmt: skip
            coords.append(s)
        return _gradient_coords_op(input, coords, axes, edge_order, cdt)
    hs = tuple(float(s) if isinstance(s, float) else builtins.int(s) for s in spacing)
    return _gradient_op(input, hs, axes, edge_order, cdt)


# --- trapezoid rules --------------------------------------------------------------------------------------


def _x_along(x: Any, y: Any, axis: int) -> Any:
    if x.ndim == 1:
        shape = [1] * y.ndim
        shape[axis] = x.shape[0]
        return x.reshape(shape)
    if x.ndim < y.ndim:
        return x.reshape((1,) * (y.ndim - x.ndim) + x.shape)
    return x


def _trapz_check(name: str) -> Any:
    def check(cdt: Any, dyn: tuple, static: tuple) -> None:
        y, x = dyn
        if x.dim() == 1 and y.dim() and x.shape[0] != y.shape[wrap_dim(static[0], y.dim())]:
            raise RuntimeError(
                f"{name}: There must be one `x` value for each sample point"
            )

    return check


@defop("_trapezoid_x", promote="float", method=False, grad_name="SumBackward1", check=_trapz_check("trapezoid"))
def _trapezoid_x(y: TensorArg, x: TensorArg, dim: int) -> Any:
    axis = dim % y.ndim
    dx = jnp.diff(_x_along(x, y, axis), axis=axis)
    return (dx * (_slice(y, axis, 1, None) + _slice(y, axis, None, -1))).sum(axis) / 2


@defop("_trapezoid_dx", promote="float", method=False, grad_name="MulBackward0")
def _trapezoid_dx(y: TensorArg, dx: TensorOrScalar, dim: int) -> Any:
    axis = dim % y.ndim
    if y.shape[axis] == 0:
        return jnp.zeros(y.shape[:axis] + y.shape[axis + 1:], y.dtype)
    ends = jnp.take(y, 0, axis) + jnp.take(y, -1, axis)
    return (y.sum(axis) - ends * 0.5) * dx


@defop("_cumulative_trapezoid_x", promote="float", method=False, grad_name="CumsumBackward0",
       check=_trapz_check("cumulative_trapezoid"))  # fmt: skip
def _cumulative_trapezoid_x(y: TensorArg, x: TensorArg, dim: int) -> Any:
    axis = dim % y.ndim
    dx = jnp.diff(_x_along(x, y, axis), axis=axis)
    return jnp.cumsum(dx * (_slice(y, axis, 1, None) + _slice(y, axis, None, -1)) / 2, axis)


@defop("_cumulative_trapezoid_dx", promote="float", method=False, grad_name="CumsumBackward0")
def _cumulative_trapezoid_dx(y: TensorArg, dx: TensorOrScalar, dim: int) -> Any:
    axis = dim % y.ndim
    return jnp.cumsum(dx / 2 * (_slice(y, axis, 1, None) + _slice(y, axis, None, -1)), axis)


def _trapz_front(name: str, y: Tensor, x: Any, dx: Any, dim: int, x_op: Any, dx_op: Any) -> Tensor:
    if x is not None and dx is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments")
    if isinstance(x, Tensor):
        return x_op(y, x, dim)
    if y.dim() == 0:
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got {dim})")
    wrap_dim(dim, y.dim())
    step = x if x is not None else (1 if dx is None else dx)
    return dx_op(y, step, dim)


@expose("torch")
def trapezoid(y: Tensor, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """torch.trapezoid: the trapezoid rule along ``dim``, with sample points ``x`` or a constant spacing ``dx``."""
    return _trapz_front("trapezoid", y, x, dx, dim, _trapezoid_x, _trapezoid_dx)


@expose("torch")
def trapz(y: Tensor, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """torch.trapz: an alias of :func:`trapezoid`."""
    return _trapz_front("trapz", y, x, dx, dim, _trapezoid_x, _trapezoid_dx)


@expose("torch")
def cumulative_trapezoid(y: Tensor, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """torch.cumulative_trapezoid: the running trapezoid rule along ``dim``."""
    return _trapz_front("cumulative_trapezoid", y, x, dx, dim, _cumulative_trapezoid_x, _cumulative_trapezoid_dx)


# --- quantiles ---------------------------------------------------------------------------------------------

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_body(x: Any, q: Any, axis: Any, interpolation: str, ignore_nan: bool) -> Any:
    if axis is None:
        x = x.reshape(-1)
        ax = 0
    else:
        ax = axis
    q = jnp.asarray(q, x.dtype)
    xs = jnp.sort(x, axis=ax)  # NaN sorts last, as in torch
    n = x.shape[ax]
    if ignore_nan:
        valid = jnp.sum(~jnp.isnan(x), axis=ax, keepdims=True)
    else:
        valid = jnp.full(tuple(1 if i == ax else s for i, s in enumerate(x.shape)), n)
    qq = q.reshape(q.shape + (1,) * x.ndim)
    rank = qq * (valid - 1).astype(x.dtype)
    if interpolation == "lower":
        rank = jnp.floor(rank)
    elif interpolation == "higher":
        rank = jnp.ceil(rank)
    elif interpolation == "nearest":
        rank = jnp.round(rank)  # torch: round half to even, as numpy
    lo = jnp.clip(jnp.floor(rank).astype(jnp.int64), 0, builtins.max(n - 1, 0))
    hi = jnp.clip(jnp.ceil(rank).astype(jnp.int64), 0, builtins.max(n - 1, 0))
    xb = jnp.broadcast_to(xs, q.shape + xs.shape)
    axq = ax + q.ndim
    below = jnp.take_along_axis(xb, lo, axis=axq)
    above = jnp.take_along_axis(xb, hi, axis=axq)
    if interpolation == "midpoint":
        out = below + (above - below) * 0.5
    elif interpolation == "linear":
        w = rank - jnp.floor(rank)
        out = below + w * (above - below)  # torch.lerp: weights below 0.5 start from ``below``
        out = jnp.where(w >= 0.5, above - (above - below) * (1 - w), out)
    else:
        out = below
    if ignore_nan:
        out = jnp.where(valid == 0, jnp.nan, out)
    else:
        out = jnp.where(jnp.isnan(xs).any(axis=ax, keepdims=True), jnp.nan, out)
    return out.squeeze(axq)


@defop("_quantile", promote=None, method=False, grad_name="QuantileBackward0")
def _quantile_op(input: RawTensor, q: RawTensor, dim: Any, keepdim: bool, interpolation: str, ignore_nan: bool) -> Any:
    axis = None if dim is None else dim % builtins.max(input.ndim, 1)
    x = input if input.ndim else input.reshape(1)
    out = _quantile_body(x, q, axis if input.ndim else None, interpolation, ignore_nan)
    if keepdim:
        if dim is None:
            out = out.reshape(q.shape + (1,) * input.ndim)
        elif input.ndim:
            out = jnp.expand_dims(out, axis + q.ndim)
    return out


def _quantile(name: str, input: Tensor, q: Any, dim: Any, keepdim: bool, interpolation: str, ignore_nan: bool,
              out: Any) -> Tensor:  # fmt: skip
    if not isinstance(q, Tensor):
        if not isinstance(q, (int, float)):
            raise TypeError(f"{name}() received an invalid combination of arguments")
        if not 0 <= q <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
        from .creation import tensor as _tensor

        q_t, scalar_q = _tensor(float(q), dtype=input._dtype if input._dtype.is_floating_point else None), True
    else:
        q_t, scalar_q = q, q.dim() == 0
    if not input._dtype.is_floating_point:
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if q_t._dtype is not input._dtype:
        raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
    if q_t.dim() > 1:
        raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(
            f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest. Got {interpolation}"
        )
    if isinstance(q, Tensor):
        qh = np.asarray(q._data())
        if qh.size and not ((qh >= 0) & (qh <= 1)).all():
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    if dim is not None:
        dim = wrap_dim(dim, input.dim())
    if input.numel() == 0 and dim is None:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    result = _quantile_op(input, q_t if not scalar_q else q_t.reshape(()), dim, keepdim, interpolation, ignore_nan)
    if out is not None:
        registry.copy_to_out(result, out)
        return out
    return result


@expose("torch")
def quantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *, interpolation: str = "linear",
             out: Tensor | None = None) -> Tensor:  # fmt: skip
    """torch.quantile: sorts along ``dim`` (NaN propagates) and interpolates as torch does."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False, out)


@expose("torch")
def nanquantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
                interpolation: str = "linear", out: Tensor | None = None) -> Tensor:  # fmt: skip
    """torch.nanquantile: :func:`quantile` ignoring NaN (all-NaN slices give NaN)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True, out)


# --- histograms ----------------------------------------------------------------------------------------


def _bin_index(x: Any, edges: Any) -> Any:
    """torch's bin of each element: ``edges[i] <= x < edges[i+1]``, the last bin closed; -1 outside."""
    nb = edges.shape[0] - 1
    pos = jnp.searchsorted(edges, x, side="right") - 1
    pos = jnp.where(x == edges[-1], nb - 1, pos)
    inside = (x >= edges[0]) & (x <= edges[-1])
    return jnp.where(inside, pos, -1)


def _outer_edges(x: Any, rng: Any) -> tuple:
    if rng is not None:
        lo, hi = jnp.asarray(rng[0], x.dtype), jnp.asarray(rng[1], x.dtype)
    elif x.size:
        lo, hi = x.min(0), x.max(0)
    else:
        lo, hi = jnp.zeros(x.shape[1:], x.dtype), jnp.zeros(x.shape[1:], x.dtype)
    same = lo == hi
    return jnp.where(same, lo - 0.5, lo), jnp.where(same, hi + 0.5, hi)


@defop("_histogramdd", promote=None, method=False, differentiable=False)
def _histogramdd_op(input: RawTensor, bin_edges: TensorList, weight: OptRawTensor, nbins: tuple, ranges: Any, density: bool) -> Any:
    d = input.shape[-1]
    x = input.reshape(-1, d)
    edges = []
    for i in range(d):
        if bin_edges:
            edges.append(bin_edges[i])
        else:
            lo, hi = _outer_edges(x[:, i], None if ranges is None else ranges[i])
            edges.append(jnp.linspace(lo, hi, nbins[i] + 1, dtype=x.dtype))
    sizes = tuple(e.shape[0] - 1 for e in edges)
    idx = [_bin_index(x[:, i], edges[i]) for i in range(d)]
    ok = jnp.ones(x.shape[0], bool)
    for i in idx:
        ok = ok & (i >= 0)
    flat = jnp.zeros(x.shape[0], jnp.int64)
    for i, n in zip(idx, sizes):
        flat = flat * n + jnp.clip(i, 0, n - 1)
    w = jnp.ones(x.shape[0], x.dtype) if weight is None else weight.reshape(-1).astype(x.dtype)
    hist = jnp.zeros(math.prod(sizes), x.dtype).at[flat].add(jnp.where(ok, w, 0)).reshape(sizes)
    if density:
        total = hist.sum()
        for i, e in enumerate(edges):
            shape = [1] * d
            shape[i] = -1
            hist = hist / jnp.diff(e).reshape(shape)
        hist = hist / total
    return (hist, *edges)


def _hist_prepare(name: str, input: Tensor, bins: Any, range: Any, weight: Any, d: int) -> tuple:
    if not input._dtype.is_floating_point:
        raise RuntimeError(f'"{name}_cpu" not implemented for \'{D.cpp_name(input._dtype)}\'')
    if weight is not None and tuple(weight.shape) != tuple(input.shape[:-1] if name == "histogramdd" else input.shape):
        raise RuntimeError(f"{name}(): if weight tensor is provided it should have the same shape as the input tensor "
                           "excluding its innermost dimension")
    edges = None
    nbins: tuple = ()
    if isinstance(bins, Tensor) or (isinstance(bins, (list, tuple)) and bins and isinstance(bins[0], Tensor)):
        edges = [bins] if isinstance(bins, Tensor) else list(bins)
    elif isinstance(bins, int):
        nbins = (bins,) * d
    else:
        nbins = tuple(builtins.int(b) for b in bins)
    for b in nbins:
        if b <= 0:
            raise RuntimeError(f"torch.{name}(): bins must be > 0, but got {b} for dimension 0")
    ranges = None
    if range is not None:
        r = [float(v) for v in range]
        ranges = tuple((r[2 * i], r[2 * i + 1]) for i in builtins.range(d))
        for lo, hi in ranges:
            if lo > hi:
                raise RuntimeError(f"{name}(): max must be larger than min")
    return edges, nbins, ranges


@expose("torch")
def histogram(input: Tensor, bins: Any = 100, *, range: Any = None, weight: Tensor | None = None,
              density: bool = False, out: Any = None) -> Any:  # fmt: skip
    """torch.histogram: ``bins`` equal-width bins over ``range`` (default: the data's min and max) or given edges."""
    edges, nbins, ranges = _hist_prepare("histogram", input, bins, range, weight, 1)
    x = input.reshape(-1, 1)
    w = None if weight is None else weight.reshape(-1)
    hist, e = _histogramdd_op(x, edges or [], w, nbins, ranges, density)
    result = return_types.histogram(hist, e)
    if out is not None:
        registry.copy_to_out(hist, out[0])
        registry.copy_to_out(e, out[1])
        return return_types.histogram(*out)
    return result


@expose("torch")
def histogramdd(input: Tensor, bins: Any = 10, *, range: Any = None, weight: Tensor | None = None,
                density: bool = False) -> Any:  # fmt: skip
    """torch.histogramdd: the histogram of the points in the last dimension of ``input``."""
    d = input.shape[-1]
    edges, nbins, ranges = _hist_prepare("histogramdd", input, bins, range, weight, d)
    res = _histogramdd_op(input, edges or [], weight, nbins, ranges, density)
    return return_types.histogramdd(res[0], list(res[1:]))


# --- isin, unravel_index -----------------------------------------------------------------------------------


@defop(promote="default", method=False, out=True, differentiable=False)
def isin(elements: TensorOrScalar, test_elements: TensorOrScalar, *, assume_unique: bool = False,
         invert: bool = False) -> Any:  # fmt: skip
    e = jnp.asarray(elements)
    t = jnp.asarray(test_elements).reshape(-1)
    if t.size == 0:
        found = jnp.zeros(e.shape, bool)
    else:
        found = (e[..., None] == t).any(-1)
    return ~found if invert else found


def _unravel_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    (indices,) = dyn
    shape = static[0]
    if indices._dtype.is_floating_point or indices._dtype.is_complex or indices._dtype is D.bool:
        raise TypeError("expected 'indices' to be integer dtype, but got " + str(indices._dtype))
    if builtins.any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(tuple(shape)))
    total = math.prod(shape)
    host = np.asarray(indices._data())
    if host.size and ((host >= total) | (host < -total)).any():
        raise RuntimeError("index out of bounds")


@defop("_unravel_index", promote=None, method=False, differentiable=False, check=_unravel_check)
def _unravel_index(indices: RawTensor, shape: tuple) -> Any:
    total = math.prod(shape)
    i = jnp.where(indices < 0, indices + total, indices).astype(jnp.int64)
    out = []
    for s in reversed(shape):
        out.append(i % s if s else i)
        i = i // s if s else i
    return tuple(reversed(out))


@expose("torch")
def unravel_index(indices: Tensor, shape: Any) -> tuple:
    """torch.unravel_index: the coordinates of flat ``indices`` in an array of ``shape``."""
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(builtins.int(s) for s in shape)
    if not isinstance(indices, Tensor):
        raise TypeError(f"expected 'indices' to be integer dtype, but got {type(indices)}")
    return _unravel_index(indices, shape)


# --- frexp, ldexp, renorm, cov, corrcoef ------------------------------------------------------------------


def _frexp_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    if not dyn[0]._dtype.is_floating_point:
        raise RuntimeError(
            "torch.frexp() only supports floating-point dtypes"
        )


@defop(promote=None, out=True, returns=return_types.frexp, check=_frexp_check)
def frexp(input: RawTensor) -> Any:
    mantissa, exponent = jnp.frexp(input)
    return mantissa, exponent.astype(jnp.int32)


@defop(inplace_in=("Tensor", "torch"), promote="float", out=True, inplace=True, grad_name="LdexpBackward0")
def ldexp(input: TensorArg, other: TensorArg) -> Any:
    return input * jnp.exp2(other)


def _renorm_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x, p, maxnorm = dyn
    dim = static[0]
    if x.dtype.is_complex:
        raise RuntimeError("renorm: input needs to be floating point")
    if not x.dtype.is_floating_point:
        raise RuntimeError(f'"renorm_out" not implemented for \'{D.cpp_name(x.dtype)}\'')
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if x.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {x.dim()} dimensions")
    wrap_dim(dim, x.dim())


@defop(promote=None, out=True, inplace=True, check=_renorm_check, bake=special_ord)
def renorm(input: RawTensor, p: ScalarOrStatic, dim: int, maxnorm: Scalar) -> Any:
    # a general p and maxnorm are traced (a loop over their values compiles once)
    axis = dim % input.ndim
    others = tuple(i for i in range(input.ndim) if i != axis)
    a = jnp.abs(input)
    maxnorm = jnp.asarray(maxnorm).astype(a.dtype)
    if not isinstance(p, (int, float)):
        norm = (a ** p.astype(a.dtype)).sum(axis=others, keepdims=True) ** (1 / p).astype(a.dtype)
    elif p == math.inf:
        norm = a.max(axis=others, keepdims=True)
    else:
        norm = (a**p).sum(axis=others, keepdims=True) ** (1.0 / p)
    factor = jnp.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0).astype(input.dtype)
    return input * factor


def _cov_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x, correction, fw, aw = dyn
    if not isinstance(correction, int) or isinstance(correction, bool):
        raise TypeError(f"cov(): argument 'correction' must be int, not {type(correction).__name__}")
    if not -(2**63) <= correction < 2**63:
        raise ValueError("Overflow when unpacking long long")
    if x.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with {x.dim()} "
                           "dimensions")  # fmt: skip
    n = x.numel() if x.dim() < 2 else x.shape[1]
    for name, w in (("fweights", fw), ("aweights", aw)):
        if w is None:
            continue
        if w.dim() > 1:
            raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
                               f"{w.dim()} dimensions")  # fmt: skip
        if w.numel() != n:
            raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the input "
                               f"but got {w.numel()} != {n}")  # fmt: skip
        if name == "fweights" and (w._dtype.is_floating_point or w._dtype.is_complex):
            raise RuntimeError(f"cov(): expected fweights to have integral dtype but got fweights with "
                               f"{D.cpp_name(w._dtype)} dtype")  # fmt: skip
        if name == "aweights" and not w._dtype.is_floating_point:
            raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got aweights with "
                               f"{D.cpp_name(w._dtype)} dtype")  # fmt: skip
        if w.numel() and bool((np.asarray(w._data()) < 0).any()):
            raise RuntimeError(f"cov(): {name} cannot be negative")
    # torch's checks of the weights' sum and of the degrees of freedom, on the host (the kernel has the values)
    if fw is None and aw is None:
        norm = n - correction
    else:
        w = np.ones(n)
        for t in (fw, aw):
            if t is not None:
                w = w * np.asarray(t._data(), np.float64).reshape(-1)
        w_sum = w.sum()
        if w_sum == 0:
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
        norm = w_sum - correction
        if aw is not None and correction != 0:
            norm = w_sum - correction * (w * np.asarray(aw._data(), np.float64).reshape(-1)).sum() / w_sum
    if norm <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", UserWarning, stacklevel=5)  # fmt: skip


def _cov(x: Any, correction: Any, fweights: Any, aweights: Any) -> Any:
    if not (jnp.issubdtype(x.dtype, jnp.floating) or jnp.issubdtype(x.dtype, jnp.complexfloating)):
        x = x.astype(D.get_default_dtype().np)
    x = x.reshape(1, -1) if x.ndim < 2 else x
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = fweights
    if aweights is not None:
        w = aweights if w is None else w.astype(aweights.dtype) * aweights  # torch: int64 * float -> float
    if w is None:
        avg = x.mean(1)
        norm = n - jnp.asarray(correction, jnp.int64)  # torch: an int64 count minus the correction
    else:
        w = w.astype(x.real.dtype)
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
        c = jnp.asarray(correction).astype(w.dtype)
        norm = w_sum - c
        if aweights is not None:  # torch: only where correction != 0 (a traced int64)
            norm = jnp.where(c != 0, w_sum - c * (w * aweights).sum() / w_sum, norm)
    norm = jnp.where(norm <= 0, 0, norm).astype(x.real.dtype)
    xc = x - avg[:, None]
    c = (xc @ (xc * w if w is not None else xc).T.conj()) / norm
    return c.squeeze()


@defop(promote=None, check=_cov_check, grad_name="SqueezeBackward0")
def cov(input: RawTensor, *, correction: OptScalar = 1, fweights: OptRawTensor = None, aweights: OptRawTensor = None) -> Any:
    return _cov(input, correction, fweights, aweights)


def _corrcoef_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x = dyn[0]
    if x.dim() > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{x.dim()} dimensions")  # fmt: skip


@defop(promote=None, check=_corrcoef_check, grad_name="DivBackward0")
def corrcoef(input: RawTensor) -> Any:
    c = _cov(input, 1, None, None)
    if c.ndim == 0:
        return c / c
    d = jnp.diagonal(c)
    std = jnp.sqrt(d.real if jnp.iscomplexobj(d) else d)
    c = c / std[:, None]
    c = c / std[None, :]
    if jnp.iscomplexobj(c):
        return jax.lax.complex(jnp.clip(c.real, -1, 1), jnp.clip(c.imag, -1, 1))
    return jnp.clip(c, -1, 1)

