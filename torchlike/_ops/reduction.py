"""Reductions: sum, mean, prod, max/min and their dim forms, argmax/argmin, all/any, std/var..."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

from .._core import dtype as D
from .._core.tensor import Tensor
from . import return_types
from .registry import RawTensor, TensorArg, defop

__all__ = ["max", "min"]


def dims(dim: Any, ndim: int) -> tuple | None:
    """Normalise torch's ``dim`` (None, int, or sequence) into sorted positive axes, with torch's errors."""
    if dim is None:
        return None
    if isinstance(dim, (int, np.integer)):
        dim = (int(dim),)
    n = ndim if ndim > 0 else 1
    out = []
    for d in dim:
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
        d = d % n
        if d in out:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        out.append(d)
    if ndim == 0:
        return ()
    return tuple(sorted(out))


def _static_dim(dim: Any) -> Any:
    if isinstance(dim, list):
        return tuple(dim)
    return dim


def _sum_name(static: tuple, dyn: tuple) -> str:
    return "SumBackward0" if static[0] is None else "SumBackward1"


def _acc_dtype(x: Any, dtype: Any) -> Any:
    if dtype is not None:
        return D.to_dtype(dtype).np
    if jnp.issubdtype(x.dtype, jnp.integer) or x.dtype == jnp.bool_:
        return np.int64
    return x.dtype


@defop(promote=None, out=True, grad_name=_sum_name, saves=())
def sum(input: RawTensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    axes = dims(dim, input.ndim)
    if axes == () and dim is not None and input.ndim:
        axes = None
    return jnp.sum(input.astype(_acc_dtype(input, dtype)), axis=axes, keepdims=keepdim)


@defop(promote=None, out=True)
def nansum(input: RawTensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    return jnp.nansum(input.astype(_acc_dtype(input, dtype)), axis=dims(dim, input.ndim), keepdims=keepdim)


def _mean_name(static: tuple, dyn: tuple) -> str:
    return "MeanBackward0" if static[0] is None else "MeanBackward1"


def _float_only(name: str, x: Any, dtype: Any) -> Any:
    dt = D.to_dtype(dtype) if dtype is not None else D.from_numpy_dtype(x.dtype)
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(
            f"{name}(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. "
            f"Got: {D.cpp_name(dt)}"
        )
    return dt.np


@defop(promote=None, out=True, grad_name=_mean_name, saves=())
def mean(input: RawTensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    dt = _float_only("mean", input, dtype)
    return jnp.mean(input.astype(dt), axis=dims(dim, input.ndim), keepdims=keepdim)


@defop(promote=None, out=True)
def nanmean(input: RawTensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    dt = _float_only("nanmean", input, dtype)
    return jnp.nanmean(input.astype(dt), axis=dims(dim, input.ndim), keepdims=keepdim)


def _prod_name(static: tuple, dyn: tuple) -> str:
    return "ProdBackward0" if static[0] is None else "ProdBackward1"


@defop(promote=None, out=True, grad_name=_prod_name)
def prod(input: RawTensor, dim: int | None = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    return jnp.prod(input.astype(_acc_dtype(input, dtype)), axis=dims(dim, input.ndim), keepdims=keepdim)


# --- max / min --------------------------------------------------------------------------------------


def _empty_check(x: Any, name: str, axes: Any) -> None:
    if x.size == 0 and (axes is None or any(x.shape[a] == 0 for a in axes)):
        raise IndexError(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim "
            "with the 'dim' argument."
        ) if axes is None else RuntimeError(
            f"{name}(): Expected reduction dim {axes[0]} to have non-zero size."
        )


@defop("amax", promote=None, out=True, dtypes="nocomplex")
def amax(input: RawTensor, dim: Any = (), keepdim: bool = False) -> Any:
    axes = dims(dim, input.ndim) or None
    return jnp.max(input, axis=axes, keepdims=keepdim)


@defop("amin", promote=None, out=True, dtypes="nocomplex")
def amin(input: RawTensor, dim: Any = (), keepdim: bool = False) -> Any:
    axes = dims(dim, input.ndim) or None
    return jnp.min(input, axis=axes, keepdims=keepdim)


@defop(promote=None, method=False, grad_name="MaxBackward1", dtypes="nocomplex")
def _max_all(input: RawTensor) -> Any:
    _empty_check(input, "max", None)
    return jnp.max(input)


@defop(promote=None, method=False, grad_name="MinBackward1", dtypes="nocomplex")
def _min_all(input: RawTensor) -> Any:
    _empty_check(input, "min", None)
    return jnp.min(input)


def _arg_select(input: Any, dim: int, keepdim: bool, largest: bool) -> tuple:
    """values and first-occurrence indices along ``dim``; torch sends the gradient to that index only."""
    if input.ndim == 0:
        return input, jnp.zeros((), jnp.int64)
    x = input
    if jnp.issubdtype(x.dtype, jnp.floating):
        # torch treats NaN as the extreme value
        idx = jnp.argmax(jnp.where(jnp.isnan(x), jnp.inf, x), axis=dim) if largest else jnp.argmin(
            jnp.where(jnp.isnan(x), -jnp.inf, x), axis=dim)  # fmt: skip
        nan_idx = jnp.argmax(jnp.isnan(x), axis=dim)
        idx = jnp.where(jnp.any(jnp.isnan(x), axis=dim), nan_idx, idx)
    else:
        idx = jnp.argmax(x, axis=dim) if largest else jnp.argmin(x, axis=dim)
    idx = jnp.expand_dims(idx, dim)
    vals = jnp.take_along_axis(x, idx, axis=dim)
    if not keepdim:
        vals, idx = jnp.squeeze(vals, dim), jnp.squeeze(idx, dim)
    return vals, idx.astype(jnp.int64)


@defop(promote=None, method=False, out=True, grad_name="MaxBackward0", returns=return_types.max, dtypes="nocomplex")
def _max_dim(input: RawTensor, dim: int, keepdim: bool = False) -> Any:
    (d,) = dims(dim, input.ndim) or (0,)
    _empty_check(input, "max", (d,))
    return _arg_select(input, d, keepdim, True)


@defop(promote=None, method=False, out=True, grad_name="MinBackward0", returns=return_types.min, dtypes="nocomplex")
def _min_dim(input: RawTensor, dim: int, keepdim: bool = False) -> Any:
    (d,) = dims(dim, input.ndim) or (0,)
    _empty_check(input, "min", (d,))
    return _arg_select(input, d, keepdim, False)


def _minmax(name: str, all_op: Any, dim_op: Any, pair_op: Any) -> Any:
    def f(input: Tensor, dim: Any = None, keepdim: bool = False, *, out: Any = None) -> Any:
        if isinstance(dim, Tensor):
            return pair_op(input, dim, out=out)
        if dim is None:
            if keepdim:
                raise TypeError(f"{name}() received an invalid combination of arguments")
            r = all_op(input)
            if out is not None:
                from .registry import copy_to_out

                copy_to_out(r, out)
                return out
            return r
        return dim_op(input, dim, keepdim, out=out)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"torch.{name}(input), torch.{name}(input, dim, keepdim) -> (values, indices), torch.{name}(input, other)"
    return f


@defop(promote=None, out=True, differentiable=False, dtypes="nocomplex")
def argmax(input: RawTensor, dim: int | None = None, keepdim: bool = False) -> Any:
    if dim is None:
        _empty_check(input, "argmax", None)
        flat = input.reshape(-1)
        r = _arg_select(flat, 0, False, True)[1]
        return r.reshape((1,) * input.ndim) if keepdim else r
    (d,) = dims(dim, input.ndim) or (0,)
    return _arg_select(input, d, keepdim, True)[1]


@defop(promote=None, out=True, differentiable=False, dtypes="nocomplex")
def argmin(input: RawTensor, dim: int | None = None, keepdim: bool = False) -> Any:
    if dim is None:
        _empty_check(input, "argmin", None)
        flat = input.reshape(-1)
        r = _arg_select(flat, 0, False, False)[1]
        return r.reshape((1,) * input.ndim) if keepdim else r
    (d,) = dims(dim, input.ndim) or (0,)
    return _arg_select(input, d, keepdim, False)[1]


@defop(promote=None, out=True, differentiable=False)
def all(input: RawTensor, dim: Any = None, keepdim: bool = False) -> Any:
    r = jnp.all(input != 0, axis=dims(dim, input.ndim), keepdims=keepdim)
    return r if input.dtype != jnp.uint8 else r.astype(jnp.uint8)


@defop(promote=None, out=True, differentiable=False)
def any(input: RawTensor, dim: Any = None, keepdim: bool = False) -> Any:
    r = jnp.any(input != 0, axis=dims(dim, input.ndim), keepdims=keepdim)
    return r if input.dtype != jnp.uint8 else r.astype(jnp.uint8)


@defop(promote=None, differentiable=False)
def count_nonzero(input: RawTensor, dim: Any = None) -> Any:
    return jnp.sum(input != 0, axis=dims(dim, input.ndim)).astype(jnp.int64)


# --- statistics -------------------------------------------------------------------------------------


def _correction(unbiased: Any, correction: Any) -> float:
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def _var(x: Any, axes: Any, correction: float, keepdim: bool) -> Any:
    n = x.size if axes is None else int(np.prod([x.shape[a] for a in axes]))
    m = jnp.mean(x, axis=axes, keepdims=True)
    d = x - m
    sq = jnp.real(d * jnp.conj(d)) if jnp.issubdtype(x.dtype, jnp.complexfloating) else d * d
    return jnp.sum(sq, axis=axes, keepdims=keepdim) / max(n - correction, 0)


def _var_name(base: str) -> Any:
    def name(static: tuple, dyn: tuple) -> str:
        return f"{base}Backward0"

    return name


@defop(promote=None, out=True, grad_name="VarBackward0")
def var(input: RawTensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction: Any = None) -> Any:
    _float_only("var", input, None)
    return _var(input, dims(dim, input.ndim), _correction(unbiased, correction), keepdim)


@defop(promote=None, out=True, grad_name="StdBackward0")
def std(input: RawTensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,
        correction: Any = None) -> Any:
    _float_only("std", input, None)
    return jnp.sqrt(_var(input, dims(dim, input.ndim), _correction(unbiased, correction), keepdim))


@defop(promote=None, method=False, grad_name="VarMeanBackward0")
def var_mean(input: RawTensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,
             correction: Any = None) -> Any:
    axes = dims(dim, input.ndim)
    return _var(input, axes, _correction(unbiased, correction), keepdim), jnp.mean(input, axis=axes, keepdims=keepdim)


@defop(promote=None, method=False, grad_name="StdMeanBackward0")
def std_mean(input: RawTensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,
             correction: Any = None) -> Any:
    axes = dims(dim, input.ndim)
    v = _var(input, axes, _correction(unbiased, correction), keepdim)
    return jnp.sqrt(v), jnp.mean(input, axis=axes, keepdims=keepdim)


@defop(promote="float", out=True)
def logsumexp(input: TensorArg, dim: Any, keepdim: bool = False) -> Any:
    import jax.scipy.special

    axes = dims(dim, input.ndim)
    return jax.scipy.special.logsumexp(input, axis=axes, keepdims=keepdim)


@defop(promote=None, out=True, grad_name="CumsumBackward0")
def cumsum(input: RawTensor, dim: int, *, dtype: Any = None) -> Any:
    (d,) = dims(dim, input.ndim) or (None,)
    x = input.astype(_acc_dtype(input, dtype))
    return jnp.cumsum(x, axis=d) if d is not None else x


@defop(promote=None, out=True, grad_name="CumprodBackward0")
def cumprod(input: RawTensor, dim: int, *, dtype: Any = None) -> Any:
    (d,) = dims(dim, input.ndim) or (None,)
    x = input.astype(_acc_dtype(input, dtype))
    return jnp.cumprod(x, axis=d) if d is not None else x


def _install_minmax() -> tuple:
    from .pointwise import maximum, minimum

    return _minmax("max", _max_all, _max_dim, maximum), _minmax("min", _min_all, _min_dim, minimum)


max, min = _install_minmax()
