"""Reductions and scans: sum, mean, prod, max/min and their dim forms, argmax/argmin, all/any, std/var,
median/mode, logsumexp, cumulative ops, dist.

Gradient conventions (torch's, where JAX's differ, marked ``# torch:``): max()/min()/amax/amin/median()
spread the gradient evenly over ties; max(dim)/min(dim)/median(dim)/mode/cummax send it to the returned
index (they gather with ``take_along_axis``); std's gradient is 0 where std is 0.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .._core import dtype as D
from .._core.tensor import Tensor
from . import return_types
from ._common import _vector_norm_impl, dims, special_ord
from .registry import RawTensor, ScalarOrStatic, TensorArg, copy_to_out, defop, expose


for _name, _fields in (("max", ("values", "indices")), ("min", ("values", "indices")), ("median", ("values", "indices")),
                      ("nanmedian", ("values", "indices")), ("mode", ("values", "indices")),
                      ("cummax", ("values", "indices")), ("cummin", ("values", "indices")),
                      ("sort", ("values", "indices")), ("topk", ("values", "indices")),
                      ("kthvalue", ("values", "indices")), ("aminmax", ("min", "max"))):  # fmt: skip
    # torch names the named tuple of an out= call ``<op>_out``
    if not hasattr(return_types, _name + "_out"):
        setattr(return_types, _name + "_out", return_types._structseq(_name + "_out", _fields))


def _axes(dim: Any, ndim: int) -> tuple | None:
    """``dims`` where an empty list means every dimension (torch's sum/mean/amax convention)."""
    axes = dims(dim, ndim)
    if axes == () and ndim:
        return None
    return axes


def _one_dim(dim: int, ndim: int) -> int | None:
    """A single wrapped dim; None for a 0-dim tensor."""
    (d,) = dims(dim, ndim) or (None,)
    return d


def _is_int(x: Any) -> bool:
    return jnp.issubdtype(x.dtype, jnp.integer) or x.dtype == jnp.bool_


def _acc_dtype(x: Any, dtype: Any) -> Any:
    if dtype is not None:
        return D.to_dtype(dtype).np
    if _is_int(x):
        return np.int64
    return x.dtype


def _dim_name(base: str) -> Callable:
    """torch numbers the full reduction 0 and the dim overload 1 (SumBackward0 / SumBackward1)."""
    return lambda static, dyn: f"{base}Backward0" if static[0] is None else f"{base}Backward1"


def _keep_all(r: Any, x: Any, axes: Any, keepdim: bool) -> Any:
    return r.reshape((1,) * x.ndim) if keepdim and axes is None else r


def _accumulate(fn: Callable, x: Any, axes: Any, keepdim: bool, dtype: Any) -> Any:
    """sum/nansum/prod: computed and returned in the accumulation dtype (bool stays bool, as torch's)."""
    acc = _acc_dtype(x, dtype)
    return _keep_all(fn(x.astype(acc), axis=axes, keepdims=keepdim).astype(acc), x, axes, keepdim)


# --- sums and means ---------------------------------------------------------------------------------


def _zeros_everywhere(static: tuple, shapes: tuple) -> tuple:
    """Every axis padded with zeros, which add nothing to a sum (reduced axes) or are sliced off (the others)."""
    return ({a: 0 for a in range(len(shapes[0]))} if shapes[0] else None,)


@defop(promote=None, out=True, grad_name=_dim_name("Sum"), saves=(), out_dtype="compute", pad=_zeros_everywhere)
def sum(input: RawTensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    """torch.sum: integers and bool accumulate in int64; ``dim=()`` reduces everything."""
    return _accumulate(jnp.sum, input, _axes(_static(dim), input.ndim), keepdim, dtype)


def _nansum_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x, dtype = dyn[0], static[2]
    if x.device.type != "cpu":
        return
    if x._dtype.is_complex:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if dtype is not None and D.to_dtype(dtype).is_complex:
        raise NotImplementedError(f"\"nansum_cpu\" not implemented for '{D.cpp_name(D.to_dtype(dtype))}'")


@defop(promote=None, out=True, saves=(), check=_nansum_check, out_dtype="compute")
def nansum(input: RawTensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    return _accumulate(jnp.nansum, input, _axes(_static(dim), input.ndim), keepdim, dtype)


def _float_only(name: str, x: Any, dtype: Any) -> Any:
    dt = D.to_dtype(dtype) if dtype is not None else D.from_numpy_dtype(x.dtype)
    if not (dt.is_floating_point or dt.is_complex):
        which = "Input" if dtype is None else "Optional"
        raise RuntimeError(
            f"{name}(): could not infer output dtype. {which} dtype must be either a floating point or complex dtype. "
            f"Got: {D.cpp_name(dt)}"
        )
    return dt.np


@defop(promote=None, out=True, grad_name=_dim_name("Mean"), saves=(), out_dtype="compute_float")
def mean(input: RawTensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    dt = _float_only("mean", input, dtype)
    axes = _axes(_static(dim), input.ndim)
    return _keep_all(jnp.mean(input.astype(dt), axis=axes, keepdims=keepdim), input, axes, keepdim)


@defop(promote=None, out=True, grad_name="DivBackward0", check=_nansum_check, out_dtype="compute")
def nanmean(input: RawTensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    """torch.nanmean = nansum / count of non-NaN: an all-NaN slice gives NaN, and NaN gradients."""
    if _is_int(input):
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex dtype but got "
            f"{D.cpp_name(D.from_numpy_dtype(input.dtype))}"
        )
    x = input.astype(_float_only("nanmean", input, dtype))
    axes = _axes(_static(dim), input.ndim)
    value = jnp.nanmean(x, axis=axes, keepdims=keepdim)
    # torch: its gradient is that of nansum / count, NaN over all-NaN slices
    return _keep_all(_even_split(x, value, ~jnp.isnan(x), axes, keepdim), input, axes, keepdim)


def _prod_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    if isinstance(static[0], (tuple, list)):
        raise TypeError("prod() received an invalid combination of arguments - got (Tensor, tuple)")


@defop(promote=None, out=True, grad_name=_dim_name("Prod"), check=_prod_check, out_dtype="compute")
def prod(input: RawTensor, dim: int | None = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    """torch.prod over one dim or everything; its gradient is exact with zeros (as JAX's)."""
    return _accumulate(jnp.prod, input, None if dim is None else dims(dim, input.ndim), keepdim, dtype)


def _static(dim: Any) -> Any:
    return tuple(dim) if isinstance(dim, list) else dim


# --- max / min ---------------------------------------------------------------------------------------


def _no_identity(name: str, x: Any, axes: Any, specify: bool = True) -> None:
    """torch's errors for reducing an empty tensor or an empty dim without an identity."""
    if x.size != 0:
        return
    if axes is None:
        suffix = " Specify the reduction dim with the 'dim' argument." if specify else ""
        cls = RuntimeError if specify else IndexError
        raise cls(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.{suffix}")
    for a in axes:
        if x.ndim and x.shape[a] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {a} to have non-zero size.")


def _even_split(x: Any, value: Any, mask: Any, axes: Any, keepdim: bool) -> Any:
    """``value`` whose gradient is spread evenly over ``mask`` (torch's rule for max()/amax/median() ties;
    JAX's reductions agree on ties but not when NaN decides). With an empty mask the gradient is NaN, as
    torch's grad / count * mask."""
    maskf = mask.astype(x.dtype)
    count = jnp.sum(maskf, axis=axes, keepdims=True)
    coef = jnp.where(count == 0, jnp.nan, maskf / count).astype(x.dtype)  # explicit: XLA folds 0 * (1 / 0)

    @jax.custom_jvp
    def split(x: Any, value: Any, coef: Any) -> Any:
        return value

    @split.defjvp
    def split_jvp(primals: tuple, tangents: tuple) -> tuple:
        _, value, coef = primals
        return value, jnp.sum(tangents[0] * coef, axis=axes, keepdims=keepdim).astype(value.dtype)

    return split(x, value, lax.stop_gradient(coef))


def _extreme(x: Any, axes: Any, keepdim: bool, largest: bool) -> Any:
    f = jnp.max if largest else jnp.min
    r = f(x, axis=axes, keepdims=True)
    value = r if keepdim else jnp.squeeze(r, axes if axes is not None else tuple(range(x.ndim)))
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        return value
    # torch: amax/amin spread the gradient over the elements equal to the result (none when it is NaN)
    return _even_split(x, value, x == r, axes, keepdim)


def _amax_check(name: str) -> Callable:
    def check(cdt: Any, dyn: tuple, static: tuple) -> None:
        x = dyn[0]
        axes = _axes(_static(static[0]), x.dim())
        if x.numel() == 0:
            _no_identity(name, np.empty(tuple(x.shape)), axes)

    return check


@defop(promote=None, out=True, dtypes="nocomplex", check=_amax_check("amax"))
def amax(input: RawTensor, dim: Any = (), keepdim: bool = False) -> Any:
    axes = _axes(_static(dim), input.ndim)
    return _keep_all(_extreme(input, axes, keepdim, True), input, axes, keepdim)


@defop(promote=None, out=True, dtypes="nocomplex", check=_amax_check("amin"))
def amin(input: RawTensor, dim: Any = (), keepdim: bool = False) -> Any:
    axes = _axes(_static(dim), input.ndim)
    return _keep_all(_extreme(input, axes, keepdim, False), input, axes, keepdim)


def _select_all(x: Any, largest: bool) -> Any:
    r = jnp.max(x) if largest else jnp.min(x)
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        return r
    # torch: max()/min() spread the gradient over the ties, or over the NaNs when the result is NaN
    mask = jnp.where(jnp.isnan(r), jnp.isnan(x), x == r)
    return _even_split(x, r, mask, None, False)


@defop(promote=None, method=False, grad_name="MaxBackward1", dtypes="nocomplex")
def _max_all(input: RawTensor) -> Any:
    _no_identity("max", input, None)
    return _select_all(input, True)


@defop(promote=None, method=False, grad_name="MinBackward1", dtypes="nocomplex")
def _min_all(input: RawTensor) -> Any:
    _no_identity("min", input, None)
    return _select_all(input, False)


def _arg_extreme(x: Any, axis: int, largest: bool) -> Any:
    """First index of the max (min) along ``axis``; NaN counts as the extreme (its first occurrence)."""
    if x.dtype == jnp.bool_:
        x = x.astype(jnp.int8)
    idx = jnp.argmax(x, axis=axis) if largest else jnp.argmin(x, axis=axis)
    if jnp.issubdtype(x.dtype, jnp.inexact):
        nan = jnp.isnan(x)
        idx = jnp.where(jnp.any(nan, axis=axis), jnp.argmax(nan, axis=axis), idx)
    return idx.astype(jnp.int64)


def _take(x: Any, idx: Any, axis: int, keepdim: bool) -> tuple:
    """values at ``idx`` (no ``axis`` dim) along ``axis``; the gradient goes to those indices."""
    idx = jnp.expand_dims(idx, axis)
    vals = jnp.take_along_axis(x, idx, axis=axis)
    if not keepdim:
        vals, idx = jnp.squeeze(vals, axis), jnp.squeeze(idx, axis)
    return vals, idx


def _select_dim(name: str, x: Any, dim: int, keepdim: bool, largest: bool) -> tuple:
    d = _one_dim(dim, x.ndim)
    if d is None:
        return x, jnp.zeros((), jnp.int64)
    _no_identity(name, x, (d,))
    return _take(x, _arg_extreme(x, d, largest), d, keepdim)


@defop(promote=None, method=False, out=True, grad_name="MaxBackward0", returns=return_types.max, dtypes="nocomplex")
def _max_dim(input: RawTensor, dim: int, keepdim: bool = False) -> Any:
    return _select_dim("max", input, dim, keepdim, True)


@defop(promote=None, method=False, out=True, grad_name="MinBackward0", returns=return_types.min, dtypes="nocomplex")
def _min_dim(input: RawTensor, dim: int, keepdim: bool = False) -> Any:
    return _select_dim("min", input, dim, keepdim, False)


def _minmax(name: str, all_op: Any, dim_op: Any, pair: str) -> Any:
    def f(input: Tensor, dim: Any = None, keepdim: bool = False, *, other: Any = None, out: Any = None) -> Any:
        if isinstance(dim, Tensor) or other is not None:
            from . import pointwise

            return getattr(pointwise, pair)(input, dim if other is None else other, out=out)
        if dim is None:
            if keepdim:
                raise TypeError(f"{name}() received an invalid combination of arguments - got (keepdim=bool, )")
            r = all_op(input)
            if out is not None:
                copy_to_out(r, out)
                return out
            return r
        if not isinstance(dim, (int, np.integer)):
            raise TypeError(
                f"{name}() received an invalid combination of arguments - got (Tensor, {type(dim).__name__})"
            )
        return dim_op(input, int(dim), bool(keepdim), out=out)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (
        f"torch.{name}(input) -> Tensor, torch.{name}(input, dim, keepdim=False) -> (values, indices), "
        f"torch.{name}(input, other) -> torch.{pair}."
    )
    return f


max = _minmax("max", _max_all, _max_dim, "maximum")
expose("torch")(max)
min = _minmax("min", _min_all, _min_dim, "minimum")
expose("torch")(min)
_max_dim._op.returns_out = return_types.max_out
_min_dim._op.returns_out = return_types.min_out


def _arg_check(name: str) -> Callable:
    def check(cdt: Any, dyn: tuple, static: tuple) -> None:
        x = dyn[0]
        if x._dtype is D.bool:
            raise RuntimeError(f"{name}(): does not support bool input")
        if static[0] is None and x.numel() == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")

    return check


def _arg(input: Any, dim: Any, keepdim: bool, largest: bool, name: str) -> Any:
    if dim is None:
        r = _arg_extreme(input.reshape(-1), 0, largest)
        return r.reshape((1,) * input.ndim) if keepdim else r
    d = _one_dim(dim, input.ndim)
    if d is None:
        return jnp.zeros((), jnp.int64)
    _no_identity(name, input, (d,))
    r = _arg_extreme(input, d, largest)
    return jnp.expand_dims(r, d) if keepdim else r


@defop(promote=None, out=True, differentiable=False, dtypes="nocomplex", check=_arg_check("argmax"))
def argmax(input: RawTensor, dim: int | None = None, keepdim: bool = False) -> Any:
    return _arg(input, dim, keepdim, True, "argmax")


@defop(promote=None, out=True, differentiable=False, dtypes="nocomplex", check=_arg_check("argmin"))
def argmin(input: RawTensor, dim: int | None = None, keepdim: bool = False) -> Any:
    return _arg(input, dim, keepdim, False, "argmin")


def _aminmax_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x, dim = dyn[0], static[0]
    if x.numel() != 0:
        return
    if dim is None:
        raise RuntimeError(
            "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity."
        )
    d = _one_dim(dim, x.dim())
    if d is not None and x.shape[d] == 0:
        raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")


@defop(promote=None, out=True, returns=return_types.aminmax, check=_aminmax_check, dtypes="nocomplex",
       grad_name="AminmaxBackward0")  # fmt: skip
def aminmax(input: RawTensor, *, dim: int | None = None, keepdim: bool = False) -> Any:
    """torch.aminmax -> (min, max); gradients as amin/amax (even split over ties)."""
    axes = None if dim is None else dims(dim, input.ndim)
    lo = _keep_all(_extreme(input, axes, keepdim, False), input, axes, keepdim)
    hi = _keep_all(_extreme(input, axes, keepdim, True), input, axes, keepdim)
    return lo, hi


# --- logical reductions ---------------------------------------------------------------------------------


def _logical(x: Any, dim: Any, keepdim: bool, f: Callable) -> Any:
    axes = _axes(_static(dim), x.ndim)
    r = _keep_all(f(x.astype(jnp.bool_), axis=axes, keepdims=keepdim), x, axes, keepdim)
    return r if x.dtype != jnp.uint8 else r.astype(jnp.uint8)


@defop(promote=None, out=True, differentiable=False)
def all(input: RawTensor, dim: Any = None, keepdim: bool = False) -> Any:
    """torch.all: bool result (uint8 for uint8 input)."""
    return _logical(input, dim, keepdim, jnp.all)


@defop(promote=None, out=True, differentiable=False)
def any(input: RawTensor, dim: Any = None, keepdim: bool = False) -> Any:
    return _logical(input, dim, keepdim, jnp.any)


@defop(promote=None, differentiable=False)
def count_nonzero(input: RawTensor, dim: Any = None) -> Any:
    return jnp.sum(input != 0, axis=_axes(_static(dim), input.ndim)).astype(jnp.int64)


def _hash_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x, (dim, _, mode) = dyn[0], static
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    if x._dtype.is_complex:
        raise NotImplementedError(f"\"xor_sum_cpu\" not implemented for '{D.cpp_name(x._dtype)}'")
    axes = _axes(_static(dim), x.dim())
    if x.numel() == 0:
        if axes is None or axes == ():
            raise RuntimeError("hash_tensor: Expected reduction dim to be specified for input.numel() == 0. Specify "
                               "the reduction dim with the 'dim' argument.")  # fmt: skip
        for d in axes:
            if x.shape[d] == 0:
                raise IndexError(f"hash_tensor: Expected reduction dim {d} to have non-zero size.")


@defop(promote=None, differentiable=False, check=_hash_check)
def hash_tensor(input: RawTensor, dim: Any = (), *, keepdim: bool = False, mode: int = 0) -> Any:
    """torch.hash_tensor: the xor of the elements' 64-bit patterns (floats as float64 bits, integers as uint64)."""
    if jnp.issubdtype(input.dtype, jnp.floating):
        bits = lax.bitcast_convert_type(input.astype(jnp.float64), jnp.uint64)
    else:
        bits = input.astype(jnp.uint64)
    axes = _axes(_static(dim), input.ndim)
    axes = tuple(range(input.ndim)) if axes is None else axes
    r = lax.reduce(bits, np.uint64(0), lax.bitwise_xor, axes)
    return jnp.expand_dims(r, axes) if keepdim else r


# --- statistics -------------------------------------------------------------------------------------


def _var_args(dim: Any, unbiased: Any, correction: Any, name: str) -> tuple:
    """torch's overloads: var(x, unbiased: bool), var(x, dim, unbiased, keepdim), var(x, dim, *, correction)."""
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments - got (correction=, unbiased=)")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    return _static(dim), correction


def _var_check(label: str) -> Callable:
    def check(cdt: Any, dyn: tuple, static: tuple) -> None:
        x = dyn[0]
        if not (x._dtype.is_floating_point or x._dtype.is_complex):
            raise RuntimeError(f"{label} only support floating point and complex dtypes")
        dim, correction = static[0], dyn[1]
        axes = _axes(dim, x.dim())
        n = x.numel() if axes is None else int(np.prod([x.shape[a] for a in axes])) if x.dim() else 1
        if n - correction <= 0:
            name = label.split()[0] if label.endswith("mean") else static[2]
            warnings.warn(
                f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction factor "
                "(input numel divided by output numel).",
                UserWarning,
                stacklevel=5,
            )

    return check


@jax.custom_jvp
def _sqrt0(v: Any) -> Any:
    return jnp.sqrt(v)


# torch: std's gradient is 0 where std is 0 (JAX's sqrt gives inf * 0 = NaN there)
_sqrt0.defjvp(lambda p, t: (_sqrt0(p[0]), t[0] * jnp.where(p[0] == 0, 0, 0.5 / _sqrt0(p[0])).astype(p[0].dtype)))


def _var(x: Any, dim: Any, correction: Any, keepdim: bool) -> tuple:
    """(var, mean) with torch's divisor ``n - correction if n > correction else 0`` (a NaN correction gives 0);
    ``correction`` is a traced 0-d array (int64 or float64) or a baked 0/1, the divisor is computed in its type and cast to
    the result's, as a Python number's would be."""
    axes = _axes(dim, x.ndim)
    n = x.size if axes is None else int(np.prod([x.shape[a] for a in axes]))
    m = jnp.mean(x, axis=axes, keepdims=True)
    d = x - m
    sq = jnp.real(d * jnp.conj(d)) if jnp.issubdtype(x.dtype, jnp.complexfloating) else d * d
    divisor = jnp.where(n > correction, n - correction, 0).astype(sq.dtype)
    v = jnp.sum(sq, axis=axes, keepdims=keepdim) / divisor
    mean = m if keepdim else jnp.squeeze(m, axes if axes is not None else tuple(range(x.ndim)))
    return _keep_all(v, x, axes, keepdim), _keep_all(mean, x, axes, keepdim)


def _common_correction(c: Any) -> bool:
    """0 and 1 (unbiased=False/True, the default) are baked: the usual calls keep a kernel without the extra
    argument; any other correction is traced."""
    return c == 0 or c == 1


# The table ops take (dim, correction, keepdim); the public functions map torch's overloads onto them (a
# ``False`` in the dim position means unbiased=False, and must not share a kernel with dim=0).
@defop("_var", promote=None, out=True, method=False, grad_name="VarBackward0", check=_var_check("std and var"),
       bake=_common_correction)
def _var_op(input: RawTensor, dim: Any, correction: ScalarOrStatic, keepdim: bool, name: str) -> Any:
    return _var(input, dim, correction, keepdim)[0]


@defop("_std", promote=None, out=True, method=False, grad_name="StdBackward0", check=_var_check("std and var"),
       bake=_common_correction)
def _std_op(input: RawTensor, dim: Any, correction: ScalarOrStatic, keepdim: bool, name: str) -> Any:
    return _sqrt0(_var(input, dim, correction, keepdim)[0])


@defop("_var_mean", promote=None, method=False, grad_name="VarMeanBackward0", check=_var_check("var_mean"),
       bake=_common_correction)
def _var_mean_op(input: RawTensor, dim: Any, correction: ScalarOrStatic, keepdim: bool, name: str) -> Any:
    return _var(input, dim, correction, keepdim)


@defop("_std_mean", promote=None, method=False, grad_name="StdMeanBackward0", check=_var_check("std_mean"),
       bake=_common_correction)
def _std_mean_op(input: RawTensor, dim: Any, correction: ScalarOrStatic, keepdim: bool, name: str) -> Any:
    v, m = _var(input, dim, correction, keepdim)
    return _sqrt0(v), m


def _var_front(name: str, op: Any, has_out: bool) -> Callable:
    def f(input: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *,
          correction: Any = None, out: Any = None) -> Any:  # fmt: skip
        d, c = _var_args(dim, unbiased, correction, name)
        if has_out:
            return op(input, d, c, bool(keepdim), name, out=out)
        return op(input, d, c, bool(keepdim), name)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (
        f"torch.{name}: ``correction`` (default 1) or the legacy ``unbiased``; ``{name}(x, False)`` means "
        "unbiased=False."
    )
    return f


var = _var_front("var", _var_op, True)
expose("torch")(var)
std = _var_front("std", _std_op, True)
expose("torch")(std)
var_mean = _var_front("var_mean", _var_mean_op, False)
expose("torch")(var_mean)
std_mean = _var_front("std_mean", _std_mean_op, False)
expose("torch")(std_mean)


@defop(promote="float", namespaces=("torch", "Tensor", "special"), out=True, out_dtype="compute")
def logsumexp(input: TensorArg, dim: Any, keepdim: bool = False) -> Any:
    """torch.logsumexp: integer inputs give the default float dtype."""
    axes = dims(_static(dim), input.ndim)
    if input.size == 0:
        return jnp.full(jnp.sum(input, axis=axes, keepdims=keepdim).shape, -jnp.inf, input.dtype)
    return jax.scipy.special.logsumexp(input, axis=axes, keepdims=keepdim)


# --- median / mode ----------------------------------------------------------------------------------


def _stable_order(x: Any, axis: int, descending: bool = False) -> Any:
    """Indices that stably sort ``x`` along ``axis`` in torch's order: NaN is the largest value, -0.0 == 0.0,
    equal values keep their index order (also when descending)."""
    iota = lax.broadcasted_iota(jnp.int64, x.shape, axis)
    if x.dtype == jnp.bool_:
        key = x.astype(jnp.int8)
    elif jnp.issubdtype(x.dtype, jnp.floating):
        key = jnp.where(x == 0, jnp.zeros_like(x), x)  # merge -0.0 into +0.0
    else:
        key = x
    if not descending:
        return lax.sort((key, iota), dimension=axis, is_stable=True, num_keys=1)[1]
    if jnp.issubdtype(key.dtype, jnp.floating):
        keys = (~jnp.isnan(key), -key)
    else:
        keys = (~key,)  # reverses the order of signed and unsigned integers without overflow
    return lax.sort((*keys, iota), dimension=axis, is_stable=True, num_keys=len(keys))[-1]


def _median_check(name: str, kernel: str) -> Callable:
    def check(cdt: Any, dyn: tuple, static: tuple) -> None:
        x = dyn[0]
        if x._dtype is D.bool:
            raise NotImplementedError(f"\"{kernel if static[0] is None else 'median_out'}\" not implemented for 'Bool'")
        if static[0] is not None:
            d = _one_dim(static[0], x.dim())
            if d is not None and x.shape[d] == 0:
                raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")

    return check


def _median_all(x: Any, ignore_nan: bool) -> Any:
    flat = x.reshape(-1)
    if flat.size == 0:
        return jnp.full((), jnp.nan, x.dtype)
    s = jnp.sort(flat)  # NaNs last
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        return s[(flat.size - 1) // 2]
    nan = jnp.isnan(flat)
    n_nan = jnp.sum(nan)
    if ignore_nan:
        k = flat.size - n_nan - 1
        value = s[jnp.where(k < 0, 0, k // 2)]  # all NaN: NaN
    else:
        value = jnp.where(n_nan > 0, jnp.nan, s[(flat.size - 1) // 2]).astype(x.dtype)
    # torch: the gradient is spread over the elements equal to the median (the NaNs when it is NaN)
    mask = jnp.where(jnp.isnan(value), nan, flat == value)
    return _even_split(flat, value, mask, None, False)


@functools.lru_cache(maxsize=None)
def _nth0_all_equivalent(n: int) -> int:
    """The original index that libstdc++'s std::nth_element(first, first, last) leaves in front when all n
    elements compare equivalent: what torch.nanmedian returns for an all-NaN slice. (Its introselect swaps
    the middle to the front, then swaps pairs inward, then keeps the half holding the front.)"""
    perm = list(range(n))
    first, last = 0, n
    while last - first > 3:
        mid = first + (last - first) // 2
        perm[first], perm[mid] = perm[mid], perm[first]
        lo, hi = first + 1, last
        while True:
            hi -= 1
            if not lo < hi:
                break
            perm[lo], perm[hi] = perm[hi], perm[lo]
            lo += 1
        if lo <= 0:
            first = lo
        else:
            last = lo
    return perm[0]


def _median_dim(x: Any, dim: int, keepdim: bool, ignore_nan: bool) -> tuple:
    d = _one_dim(dim, x.ndim)
    if d is None:
        return x, jnp.zeros((), jnp.int64)
    n = x.shape[d]
    order = _stable_order(x, d)
    if jnp.issubdtype(x.dtype, jnp.inexact):
        nan = jnp.isnan(x)
        n_nan = jnp.sum(nan, axis=d, keepdims=True)
    else:
        nan, n_nan = None, jnp.zeros((1,) * x.ndim, jnp.int64)
    if ignore_nan:
        k = n - n_nan - 1
        k = jnp.where(k < 0, 0, k // 2)  # C's truncating division: (-1) / 2 == 0
    else:
        k = jnp.broadcast_to(jnp.asarray((n - 1) // 2), n_nan.shape)
    idx = jnp.take_along_axis(order, k.astype(jnp.int64), axis=d)
    if nan is not None and not ignore_nan:
        # torch: the first NaN of the slice is the median
        idx = jnp.where(n_nan > 0, jnp.argmax(nan, axis=d, keepdims=True), idx)
    if nan is not None and ignore_nan:
        idx = jnp.where(n_nan == n, _nth0_all_equivalent(n), idx)
    return _take(x, jnp.squeeze(idx, d), d, keepdim)


@defop("_median", promote=None, method=False, grad_name=_dim_name("Median"), dtypes="nocomplex",
       check=_median_check("median", "median_cpu"))  # fmt: skip
def _median(input: RawTensor, dim: Any, keepdim: bool) -> Any:
    if dim is None:
        return _median_all(input, False)
    return _median_dim(input, dim, keepdim, False)


@defop("_nanmedian", promote=None, method=False, grad_name=_dim_name("Nanmedian"), dtypes="nocomplex",
       check=_median_check("median", "median_cpu"))  # fmt: skip
def _nanmedian(input: RawTensor, dim: Any, keepdim: bool) -> Any:
    if dim is None:
        return _median_all(input, True)
    return _median_dim(input, dim, keepdim, True)


def _median_front(op: Any, returns: type, returns_out: type, name: str) -> Callable:
    def f(input: Tensor, dim: int | None = None, keepdim: bool = False, *, out: Any = None) -> Any:
        if dim is None:
            r = op(input, None, False)
            if out is not None:
                copy_to_out(r, out)
                return out
            return r
        r = op(input, int(dim), bool(keepdim))
        if out is not None:
            for o, v in zip(out, r):
                copy_to_out(v, o)
            return returns_out(*out)
        return returns(*r)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (
        f"torch.{name}(input) -> Tensor (the lower median), torch.{name}(input, dim, keepdim=False) -> "
        "(values, indices); the index is that of the stable-sorted middle element."
    )
    return f


median = _median_front(_median, return_types.median, return_types.median_out, "median")
expose("torch")(median)
nanmedian = _median_front(_nanmedian, return_types.nanmedian, return_types.nanmedian_out, "nanmedian")
expose("torch")(nanmedian)


def _mode_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x = dyn[0]
    d = _one_dim(static[0], x.dim())
    if d is not None and x.shape[d] == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")


@defop(promote=None, out=True, returns=return_types.mode, check=_mode_check, dtypes="nocomplex")
def mode(input: RawTensor, dim: int = -1, keepdim: bool = False) -> Any:
    """torch.mode: the most frequent value (the smallest among equally frequent ones) and the index of its
    last occurrence (torch sorts each slice and takes the end of the run)."""
    d = _one_dim(dim, input.ndim)
    if d is None:
        return input, jnp.zeros((), jnp.int64)
    n = input.shape[d]
    order = _stable_order(input, d)
    s = jnp.take_along_axis(input, order, axis=d)
    pos = lax.broadcasted_iota(jnp.int64, s.shape, d)
    nxt = jnp.concatenate([lax.slice_in_dim(s, 1, n, axis=d), lax.slice_in_dim(s, n - 1, n, axis=d)], axis=d)
    last = (pos == n - 1) | (s != nxt)
    prev = jnp.concatenate([lax.slice_in_dim(s, 0, 1, axis=d), lax.slice_in_dim(s, 0, n - 1, axis=d)], axis=d)
    first = (pos == 0) | (s != prev)
    start = lax.cummax(jnp.where(first, pos, 0), axis=d)
    freq = jnp.where(last, pos - start + 1, 0)
    best = jnp.argmax(freq, axis=d)  # first maximal run: the smallest value
    idx = jnp.take_along_axis(order, jnp.expand_dims(best, d), axis=d)
    return _take(input, jnp.squeeze(idx, d), d, keepdim)


# --- cumulative ops -------------------------------------------------------------------------------------


def _scan_input(x: Any, dim: int, dtype: Any) -> tuple:
    d = _one_dim(dim, x.ndim)
    acc = _acc_dtype(x, dtype)
    # torch accumulates half precision in float32
    wide = np.float32 if acc in (np.float16, D.bfloat16.np) else acc
    return d, x.astype(wide), acc


@defop(promote=None, out=True, grad_name="CumsumBackward0", inplace=True, out_dtype="compute")
def cumsum(input: RawTensor, dim: int, *, dtype: Any = None) -> Any:
    d, x, acc = _scan_input(input, dim, dtype)
    return (jnp.cumsum(x, axis=d) if d is not None else x).astype(acc)


@defop(promote=None, out=True, grad_name="CumprodBackward0", inplace=True, out_dtype="compute")
def cumprod(input: RawTensor, dim: int, *, dtype: Any = None) -> Any:
    d, x, acc = _scan_input(input, dim, dtype)
    return (jnp.cumprod(x, axis=d) if d is not None else x).astype(acc)


def _logcumsumexp_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    dt = dyn[0]._dtype
    if not (dt.is_floating_point or dt.is_complex):
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for '{D.cpp_name(dt)}'")


def _logcumsumexp(x: Any, d: int) -> Any:
    @jax.custom_vjp
    def f(x: Any) -> Any:
        return lax.cumlogsumexp(x, axis=d)

    def fwd(x: Any) -> tuple:
        r = f(x)
        return r, (x, r)

    def bwd(res: tuple, g: Any) -> tuple:
        # torch's logcumsumexp_backward (reverse log-cum-sum-exp of log|g| - result, split by the sign of g);
        # it differs from JAX's where the inputs are infinite
        x, r = res
        low = jnp.finfo(g.dtype).min

        def rev(v: Any) -> Any:
            return jnp.flip(lax.cumlogsumexp(jnp.flip(v, d), axis=d), d)

        pos = jnp.where(g > 0, jnp.log(jnp.where(g > 0, g, 1)), low)
        neg = jnp.where(g < 0, jnp.log(jnp.where(g < 0, -g, 1)), low)
        return (jnp.exp(rev(pos - r) + x) - jnp.exp(rev(neg - r) + x),)

    f.defvjp(fwd, bwd)
    return f(x)


@defop(promote=None, out=True, check=_logcumsumexp_check)
def logcumsumexp(input: RawTensor, dim: int) -> Any:
    d, x, _ = _scan_input(input, dim, None)
    return (_logcumsumexp(x, d) if d is not None else x).astype(input.dtype)


def _cum_extreme(x: Any, dim: int, largest: bool) -> tuple:
    """cummax/cummin: running extreme and the index of its last occurrence; NaN wins and sticks (torch)."""
    d = _one_dim(dim, x.ndim)
    if d is None:
        return x, jnp.zeros((), jnp.int64)
    key = x.astype(jnp.int8) if x.dtype == jnp.bool_ else x
    idx = lax.broadcasted_iota(jnp.int64, x.shape, d)
    nan = jnp.isnan(key) if jnp.issubdtype(key.dtype, jnp.inexact) else jnp.zeros(key.shape, bool)

    def pick(a: tuple, b: tuple) -> tuple:
        ka, na, ia = a
        kb, nb, ib = b
        better = kb >= ka if largest else kb <= ka
        take_b = nb | (~na & better)
        return jnp.where(take_b, kb, ka), jnp.where(take_b, nb, na), jnp.where(take_b, ib, ia)

    _, _, best = lax.associative_scan(pick, (key, nan, idx), axis=d)
    return jnp.take_along_axis(x, best, axis=d), best


@defop(promote=None, out=True, returns=return_types.cummax, dtypes="nocomplex")
def cummax(input: RawTensor, dim: int) -> Any:
    return _cum_extreme(input, dim, True)


@defop(promote=None, out=True, returns=return_types.cummin, dtypes="nocomplex")
def cummin(input: RawTensor, dim: int) -> Any:
    return _cum_extreme(input, dim, False)


# --- distances -----------------------------------------------------------------------------------------


def _dist_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    from .pointwise import _sub_check

    _sub_check(cdt, (*dyn[:2], 1), static)  # torch computes input - other first
    if not (cdt.is_floating_point or cdt.is_complex):
        raise RuntimeError(
            f"norm(): input dtype should be either floating point or complex. Got {D.cpp_name(cdt)} instead."
        )


@defop(out=True, check=_dist_check, bake=special_ord)
def dist(input: TensorArg, other: TensorArg, p: ScalarOrStatic = 2) -> Any:
    """torch.dist: the p-norm of ``input - other`` (broadcast), with torch.norm's gradient conventions."""
    return _vector_norm_impl(input - other, float(p) if isinstance(p, int) else p, None, False)


for _op, _rt in ((aminmax, "aminmax_out"), (mode, "mode_out"), (cummax, "cummax_out"), (cummin, "cummin_out")):
    _op._op.returns_out = getattr(return_types, _rt)
