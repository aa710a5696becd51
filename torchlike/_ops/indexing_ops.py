"""Indexing ops: index_select/add/copy/fill/put, gather/scatter (+ reductions), masked_select/scatter,
and the ops whose output shape depends on values (nonzero, unique, bincount...).

Value-dependent output shapes are computed eagerly on the host (numpy), so those ops need concrete
tensors: they cannot run inside traced (compiled) code.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._core import dtype as D
from .._core import tensor as T
from .._core.tensor import Tensor, wrap_dim
from .._core import grad_mode, graph
from . import registry, return_types
from ._common import _broadcast_shape
from .registry import RawTensor, Scalar, TensorOrScalar, defop, expose


def _shape_str(shape: Any) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


def _first_bad(index: Tensor, lo: int, hi: int) -> Any:
    """The first index value outside [lo, hi) (torch checks ranges on the CPU; JAX would clamp)."""
    if index.numel() == 0 or index._buf.device.type != "cpu":
        return None
    host = index._host().reshape(-1)
    bad = np.flatnonzero((host >= hi) | (host < lo))
    return host[bad[0]] if bad.size else None


# --- index_select / index_add / index_copy / index_fill ---------------------------------------------


def _index_select_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x, index = dyn
    d = wrap_dim(static[0], max(x.dim(), 1))
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index._dtype not in (D.int32, D.int64):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if _first_bad(index, 0, x._shape[d] if x.dim() else 1) is not None:
        raise IndexError("index out of range in self")


def _slice_shape(shape: tuple, d: int) -> tuple:
    return tuple(s for i, s in enumerate(shape) if i != d)


def _index_add_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x, index, source = dyn[0], dyn[1], dyn[2]
    d = wrap_dim(static[0], max(x.dim(), 1))
    if index.dim() > 1:
        raise IndexError(
            f"index_add_(): Index is supposed to be a vector, but got dim: {index.dim()} with type: "
            f"{D.cpp_name(index._dtype)} and size: {_shape_str(index._shape)}"
        )
    if index._dtype not in (D.int32, D.int64):
        raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: {D.cpp_name(index._dtype)}")
    if source._dtype is not x._dtype:
        raise RuntimeError(
            f"index_add_(): self ({D.cpp_name(x._dtype)}) and source ({D.cpp_name(source._dtype)}) must have the "
            "same scalar type"
        )
    ns = source._shape[d] if source.dim() else 1
    if index.numel() != ns:
        raise RuntimeError(
            f"index_add_(): Number of indices ({index.numel()}) should be equal to source.size(dim): ({ns}), for dim: {d}"
        )
    if x.dim() and source.dim() and _slice_shape(x._shape, d) != _slice_shape(source._shape, d):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified dimension. Got self.shape = "
            f"{_shape_str(x._shape)} source.shape = {_shape_str(source._shape)}"
        )
    n = x._shape[d] if x.dim() else 1
    bad = _first_bad(index, 0, n)
    if bad is not None:
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {n}")


def _index_copy_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x, index, source = dyn
    d = wrap_dim(static[0], max(x.dim(), 1))
    if index.dim() > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.dim()})")
    if index._dtype is not D.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got {D.cpp_name(index._dtype)}")
    if source._dtype is not x._dtype:
        raise RuntimeError(
            f"index_copy_(): self and source expected to have the same dtype, but got (self) "
            f"{D.cpp_name(x._dtype)} and (source) {D.cpp_name(source._dtype)}"
        )
    if x.dim() and source.dim():
        for i, (a, b) in enumerate(zip(_slice_shape(x._shape, d), _slice_shape(source._shape, d))):
            if a != b:
                dx = i if i < d else i + 1
                raise RuntimeError(
                    "index_copy_(): Source/destination tensor must have same slice shapes. Destination slice shape: "
                    f"{a} at dimension {dx} and source slice shape: {b} at dimension {i}."
                )
    ns = source._shape[d] if source.dim() else 1
    if index.numel() != ns:
        raise IndexError(
            f"index_copy_(): Number of indices ({index.numel()}) should be equal to source.size(dim) ({ns})"
        )
    n = x._shape[d] if x.dim() else 1
    bad = _first_bad(index, 0, n)
    if bad is not None:
        raise IndexError(f"index_copy_(): index {bad} is out of bounds for dimension {d} with size {n}")


def _index_fill_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x, index, value = dyn
    d = wrap_dim(static[0], max(x.dim(), 1))
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError(
            f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with {value.dim()} dimension(s)."
        )
    if index._dtype is not D.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index.dim() > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    n = x._shape[d] if x.dim() else 1
    bad = _first_bad(index, -n, n)
    if bad is not None:
        raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {n}")


@defop(promote=None, out=True, check=_index_select_check, saves=("index",), nondiff=("index",))
def index_select(input: RawTensor, dim: int, index: RawTensor) -> Any:
    if input.ndim == 0:
        return jnp.take(input.reshape(1), index.reshape(-1), axis=0).reshape(())
    return jnp.take(input, index.reshape(-1), axis=wrap_dim(dim, input.ndim))


def _index_along(x: Any, d: int, index: Any) -> tuple:
    return (slice(None),) * d + (index.reshape(-1),)


@defop(promote=None, inplace=True, out=True, check=_index_add_check, saves=("index",), nondiff=("index",))
def index_add(input: RawTensor, dim: int, index: RawTensor, source: RawTensor, *, alpha: Scalar = 1) -> Any:
    x = input.reshape((1,) * (input.ndim == 0) + input.shape)
    d = wrap_dim(dim, x.ndim)
    src = source.reshape(x.shape[:d] + (index.size,) + x.shape[d + 1 :])
    at = x.at[_index_along(x, d, index)]
    if x.dtype == jnp.bool_:  # torch: a bool sum saturates to True
        out = at.max(jnp.logical_and(src, alpha).astype(x.dtype))
    else:
        out = at.add((src * jnp.asarray(alpha, src.dtype)).astype(x.dtype))
    return out.reshape(input.shape)


@defop(promote=None, inplace=True, out=True, check=_index_copy_check, saves=("index",), nondiff=("index",))
def index_copy(input: RawTensor, dim: int, index: RawTensor, source: RawTensor) -> Any:
    x = input.reshape((1,) * (input.ndim == 0) + input.shape)
    d = wrap_dim(dim, x.ndim)
    src = source.reshape(x.shape[:d] + (index.size,) + x.shape[d + 1 :])
    return x.at[_index_along(x, d, index)].set(src).reshape(input.shape)


@defop(promote=None, inplace=True, check=_index_fill_check, saves=("index",), nondiff=("index",), scalar=("value",))
def index_fill(input: RawTensor, dim: int, index: RawTensor, value: TensorOrScalar) -> Any:
    x = input.reshape((1,) * (input.ndim == 0) + input.shape)
    d = wrap_dim(dim, x.ndim)
    v = jnp.asarray(value).astype(x.dtype)
    return x.at[_index_along(x, d, index)].set(v).reshape(input.shape)


# --- index_put ---------------------------------------------------------------------------------------


def _index_put_prepare(input: Tensor, indices: Any, values: Any) -> tuple:
    from . import indexing

    if not isinstance(indices, (tuple, list)):
        raise TypeError(
            f"index_put(): argument 'indices' (position 2) must be tuple of Tensors, not {type(indices).__name__}"
        )
    if len(indices) > input.dim():
        raise IndexError(f"too many indices for tensor of dimension {input.dim()} (got {len(indices)})")
    advanced = []
    dim = 0
    for idx in indices:
        if idx is None:
            dim += 1
            continue
        advanced.append((dim, idx))
        dim += idx.dim() if idx._dtype in (D.bool, D.uint8) else 1
    if not advanced:
        raise RuntimeError("index_put_: indices must contain at least one tensor")
    k, arrays, dims_, bshape = indexing._advanced(input, advanced)
    if not isinstance(values, Tensor):
        raise TypeError(f"index_put(): argument 'values' (position 3) must be Tensor, not {type(values).__name__}")
    indexing._index_put_checks(input, values, advanced, indexing._result_shape(input, dims_, bshape), strip=False)
    return k, indexing._index_tensors(arrays, input.device)


@expose("torch")
def index_put(input: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:
    from . import indexing

    k, arrays = _index_put_prepare(input, indices, values)
    return indexing._index_put(input, arrays, values, k, bool(accumulate))


@expose("torch")
def index_put_(input: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:
    from . import indexing

    if grad_mode._state.enabled and (input._rg or input._base_t is not None or values._rg):
        graph.check_inplace(input)
    k, arrays = _index_put_prepare(input, indices, values)
    graph.commit_inplace(input, indexing._index_put(input, arrays, values, k, bool(accumulate)))
    return input


# --- gather / scatter -----------------------------------------------------------------------------------


def _gather_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x, index = dyn
    d = wrap_dim(static[0], max(x.dim(), 1))
    if index.numel() == 0:  # torch checks an empty index neither for its dtype nor its shape
        return
    if index._dtype not in (D.int32, D.int64):
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    if max(index.dim(), 1) != max(x.dim(), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    xs, ix = tuple(x._shape) or (1,), tuple(index._shape) or (1,)
    if index.numel():
        for i in range(len(xs)):
            if i != d and ix[i] > xs[i]:
                raise RuntimeError(
                    f"Size does not match at dimension {i} expected index {_shape_str(index._shape)} to be no larger "
                    f"than self {_shape_str(x._shape)} apart from dimension {d}"
                )
    bad = _first_bad(index, 0, xs[d])
    if bad is not None:
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {xs[d]}")


def _grid(index: Any, d: int) -> tuple:
    """Full index arrays addressing ``index``'s positions, with ``index`` itself along ``d``."""
    out = []
    for i in range(index.ndim):
        if i == d:
            out.append(index)
        else:
            shape = [1] * index.ndim
            shape[i] = index.shape[i]
            out.append(jnp.arange(index.shape[i]).reshape(shape))
    return tuple(out)


def _as_nd(x: Any) -> Any:
    return x.reshape(1) if x.ndim == 0 else x


@defop(promote=None, out=True, check=_gather_check, saves=("index",), nondiff=("index",))
def gather(input: RawTensor, dim: int, index: RawTensor, *, sparse_grad: bool = False) -> Any:
    if index.size == 0:
        return jnp.zeros(index.shape, input.dtype)
    x, idx = _as_nd(input), _as_nd(index)
    d = wrap_dim(dim, x.ndim)
    return x[_grid(idx, d)].reshape(index.shape)


def _scatter_check(name: str, x: Tensor, d: int, index: Tensor, src: Any) -> None:
    if isinstance(src, Tensor) and src._dtype is not x._dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if index.numel() == 0:  # torch checks an empty index neither for its dtype nor its shape
        return
    if index._dtype not in (D.int32, D.int64):
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    nd = max(x.dim(), 1)
    if max(index.dim(), 1) != nd:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if isinstance(src, Tensor) and max(src.dim(), 1) != nd:
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    xs, ix = tuple(x._shape) or (1,), tuple(index._shape) or (1,)
    ss = (tuple(src._shape) or (1,)) if isinstance(src, Tensor) else None
    if index.numel():
        for i in range(nd):
            if (i != d and ix[i] > xs[i]) or (ss is not None and ix[i] > ss[i]):
                if ss is None:
                    raise RuntimeError(
                        f"Expected index {_shape_str(index._shape)} to be no larger than self "
                        f"{_shape_str(x._shape)} apart from dimension {d}"
                    )
                raise RuntimeError(
                    f"Expected index {_shape_str(index._shape)} to be no larger than self {_shape_str(x._shape)} "
                    f"apart from dimension {d} and to be no larger size than src {_shape_str(src._shape)}"
                )
    bad = _first_bad(index, 0, xs[d])
    if bad is not None:
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {xs[d]}")


def _src_block(src: Any, index: Any) -> Any:
    if index.size == 0:  # nothing is scattered (and an empty index need not match src's rank)
        return src
    src = _as_nd(src)
    return src[tuple(slice(0, n) for n in index.shape)]


def _scatter_check_src(cdt: Any, dyn: tuple, static: tuple) -> None:
    x, index, src = dyn
    _scatter_check("scatter", x, wrap_dim(static[0], max(x.dim(), 1)), index, src)
    _reduce_check(static[1])


def _scatter_check_value(cdt: Any, dyn: tuple, static: tuple) -> None:
    x, index, _ = dyn
    _scatter_check("scatter", x, wrap_dim(static[0], max(x.dim(), 1)), index, None)
    _reduce_check(static[1])


def _reduce_check(reduce: Any) -> None:
    if reduce is not None and reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")


def _scatter_apply(x: Any, dim: int, index: Any, v: Any, reduce: Any) -> Any:
    if index.size == 0:
        return x
    xs = _as_nd(x)
    idx = _as_nd(index)
    d = wrap_dim(dim, xs.ndim)
    at = xs.at[_grid(idx, d)]
    if reduce is None:
        out = at.set(v)
    elif reduce == "add":
        out = at.max(v) if xs.dtype == jnp.bool_ else at.add(v)  # bool: torch's sum saturates to True
    else:
        out = at.multiply(v)
    return out.reshape(x.shape)


def _scatter_name(base: str) -> Any:
    def name(static: tuple, dyn: tuple) -> str:
        return "NotImplemented" if static[1] is not None else base

    return name


@defop(promote=None, method=False, grad_name=_scatter_name("ScatterBackward0"), check=_scatter_check_src,
       saves=("index",), nondiff=("index",))  # fmt: skip
def _scatter_src(input: RawTensor, dim: int, index: RawTensor, src: RawTensor, reduce: Any = None) -> Any:
    return _scatter_apply(input, dim, index, _src_block(src, _as_nd(index)).astype(input.dtype), reduce)


@defop(promote=None, method=False, grad_name=_scatter_name("ScatterBackward1"), check=_scatter_check_value,
       saves=("index",), nondiff=("index",), scalar=("value",))  # fmt: skip
def _scatter_value(input: RawTensor, dim: int, index: RawTensor, value: TensorOrScalar, reduce: Any = None) -> Any:
    v = jnp.broadcast_to(jnp.asarray(value).astype(input.dtype), _as_nd(index).shape)
    return _scatter_apply(input, dim, index, v, reduce)


@expose("torch")
def scatter(input: Tensor, dim: int, index: Tensor, src: Any = None, value: Any = None, *, reduce: str | None = None,
            out: Tensor | None = None) -> Tensor:  # fmt: skip
    """torch.scatter(input, dim, index, src) / scatter(input, dim, index, value)."""
    if src is not None and value is not None:
        raise TypeError("scatter() received an invalid combination of arguments - got both src and value")
    if src is None:
        src = value
    if src is None:
        raise TypeError("scatter() missing required argument 'src' or 'value'")
    if isinstance(src, Tensor) and not (src.dim() == 0 and value is not None):
        return _scatter_src(input, dim, index, src, reduce, out=out) if out is not None else _scatter_src(
            input, dim, index, src, reduce)  # fmt: skip
    if isinstance(src, Tensor):
        src = src.item()
    return _scatter_value(input, dim, index, src, reduce)


def _scatter_add_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x, index, src = dyn
    _scatter_check("scatter_add", x, wrap_dim(static[0], max(x.dim(), 1)), index, src)


@defop(promote=None, inplace=True, out=True, check=_scatter_add_check, saves=("index",), nondiff=("index",))
def scatter_add(input: RawTensor, dim: int, index: RawTensor, src: RawTensor) -> Any:
    return _scatter_apply(input, dim, index, _src_block(src, _as_nd(index)), "add")


_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _scatter_reduce_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x, index, src = dyn
    if static[1] not in _REDUCES + ("max", "min"):
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {static[1]}")
    _scatter_check("scatter_reduce", x, wrap_dim(static[0], max(x.dim(), 1)), index, src)


def _reduce_identity(dtype: Any, reduce: str) -> Any:
    if reduce in ("sum", "mean"):
        return jnp.zeros((), dtype)
    if reduce == "prod":
        return jnp.ones((), dtype)
    if jnp.issubdtype(dtype, jnp.floating):
        return jnp.array(-jnp.inf if reduce == "amax" else jnp.inf, dtype)
    info = jnp.iinfo(dtype) if dtype != jnp.bool_ else None
    if info is None:
        return jnp.array(reduce == "amin", dtype)
    return jnp.array(info.min if reduce == "amax" else info.max, dtype)


@jax.custom_vjp
def _prod_scatter(x: Any, grid: tuple, src: Any) -> Any:
    return x.at[grid].multiply(src)


def _prod_fwd(x: Any, grid: tuple, src: Any) -> Any:
    out = x.at[grid].multiply(src)
    return out, (x, grid, src, out)


def _prod_bwd(res: Any, g: Any) -> Any:
    # torch's formula (derivatives.yaml, scatter_reduce prod): exclusive products around zeros.
    x, grid, src, out = res
    masked_x = jnp.where(x == 0, 1, x)
    masked_x_result = masked_x.at[grid].multiply(src)
    g_x = g * masked_x_result / masked_x
    src_zero = src == 0
    n_zeros = jnp.zeros(x.shape, x.dtype).at[grid].add(src_zero.astype(x.dtype))[grid]
    single_zero = src_zero & (n_zeros == 1)
    masked_src = jnp.where(single_zero, 1, src)
    masked_src_result = x.at[grid].multiply(masked_src)
    g_src = jnp.where(single_zero, (g * masked_src_result)[grid], (g * out)[grid] / jnp.where(src_zero, 1, src))
    zeros = tuple(np.zeros(i.shape, jax.dtypes.float0) for i in grid)
    return g_x, zeros, g_src


_prod_scatter.defvjp(_prod_fwd, _prod_bwd)


@defop(promote=None, inplace=True, out=True, check=_scatter_reduce_check, saves=("index",), nondiff=("index",))
def scatter_reduce(input: RawTensor, dim: int, index: RawTensor, src: RawTensor, reduce: str, *,
                   include_self: bool = True) -> Any:  # fmt: skip
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)
    if index.size == 0:
        return input
    x, idx = _as_nd(input), _as_nd(index)
    d = wrap_dim(dim, x.ndim)
    return _reduce_into(input, x, _grid(idx, d), _src_block(src, idx), reduce, include_self)


def _reduce_into(input: Any, x: Any, grid: tuple, src: Any, reduce: str, include_self: bool) -> Any:
    """Reduce ``src`` into ``x`` at the positions ``grid`` with torch's scatter_reduce rules."""
    hit = jnp.zeros(x.shape, bool).at[grid].set(True)
    base = x if include_self else jnp.where(hit, _reduce_identity(x.dtype, reduce), x)
    if x.dtype == jnp.bool_ and reduce in ("sum", "prod"):  # torch: a bool sum is any, a bool product all
        out = base.at[grid].max(src) if reduce == "sum" else base.at[grid].min(src)
    elif reduce in ("sum", "mean"):
        out = base.at[grid].add(src)
        if reduce == "mean":
            count = jnp.zeros(x.shape, x.dtype).at[grid].add(jnp.ones_like(src))
            count = count + 1 if include_self else jnp.where(count == 0, 1, count)
            if jnp.issubdtype(x.dtype, jnp.floating):
                out = out / count
            else:
                out = jnp.floor_divide(out, count)
    elif reduce == "prod":
        if jnp.issubdtype(x.dtype, jnp.floating):
            out = _prod_scatter(base, grid, src)
        else:
            out = base.at[grid].multiply(src)
    elif jnp.issubdtype(x.dtype, jnp.floating):
        out = _extremal_scatter(x, base, grid, src, reduce == "amax", include_self)
    else:
        out = base.at[grid].max(src) if reduce == "amax" else base.at[grid].min(src)
    return out.reshape(input.shape)


def _extremal(base: Any, grid: tuple, src: Any, is_max: bool) -> Any:
    return base.at[grid].max(src) if is_max else base.at[grid].min(src)


@jax.custom_vjp
def _extremal_core(x: Any, base: Any, grid: tuple, src: Any, is_max: Any, include_self: Any) -> Any:
    return _extremal(base, grid, src, is_max.shape[0] == 1)


def _extremal_fwd(x: Any, base: Any, grid: tuple, src: Any, is_max: Any, include_self: Any) -> Any:
    out = _extremal(base, grid, src, is_max.shape[0] == 1)
    return out, (x, grid, src, out, is_max, include_self)


def _extremal_bwd(res: Any, g: Any) -> Any:
    # torch's formula: the gradient is split evenly between ties, counting ``self`` wherever it equals the
    # result -- even when include_self=False, where self then gets no gradient itself.
    x, grid, src, out, is_max, include_self = res
    value = out[grid]
    self_is = (x == out).astype(g.dtype)
    src_is = (src == value).astype(g.dtype)
    n = self_is.at[grid].add(src_is)
    dist = g / n
    g_self = self_is * dist
    if include_self.shape[0] == 0:
        g_self = jnp.where(jnp.zeros(x.shape, bool).at[grid].set(True), 0, g_self)
    zeros = tuple(np.zeros(i.shape, jax.dtypes.float0) for i in grid)
    return g_self, jnp.zeros_like(x), zeros, src_is * dist[grid], None, None


_extremal_core.defvjp(_extremal_fwd, _extremal_bwd)


def _extremal_scatter(x: Any, base: Any, grid: tuple, src: Any, is_max: bool, include_self: bool) -> Any:
    # static flags ride in the shapes of empty arrays (custom_vjp arguments must be arrays)
    return _extremal_core(x, base, grid, src, jnp.zeros((int(is_max),)), jnp.zeros((int(include_self),)))


def _index_reduce_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x, index, source = dyn
    d = wrap_dim(static[0], max(x.dim(), 1))
    if static[1] not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(
            f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {static[1]}."
        )
    if index.dim() > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    if index._dtype not in (D.int32, D.int64):
        raise RuntimeError("index_reduce_(): Expected dtype int32/int64 for index")
    if source._dtype is not x._dtype:
        raise RuntimeError("index_reduce_(): self and source must have the same scalar type")
    ns = source._shape[d] if source.dim() else 1
    if index.numel() != ns:
        raise RuntimeError("index_reduce_(): Number of indices should be equal to source.size(dim)")
    n = x._shape[d] if x.dim() else 1
    bad = _first_bad(index, -n, n)
    if bad is not None:
        raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {n}")


@defop(promote=None, inplace=True, out=True, check=_index_reduce_check, saves=("index",))
def index_reduce(input: RawTensor, dim: int, index: RawTensor, source: RawTensor, reduce: str, *,
                 include_self: bool = True) -> Any:  # fmt: skip
    x = _as_nd(input)
    d = wrap_dim(dim, x.ndim)
    src = source.reshape(x.shape[:d] + (index.size,) + x.shape[d + 1 :])
    idx = jnp.where(index < 0, index + x.shape[d], index).reshape((1,) * d + (-1,) + (1,) * (x.ndim - d - 1))
    return _reduce_into(input, x, _grid(jnp.broadcast_to(idx, src.shape), d), src, reduce, include_self)


def _put_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x, index, source = dyn
    if index._dtype is not D.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {D.cpp_name(index._dtype)}")
    if source._dtype is not x._dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{D.cpp_name(x._dtype)} and source.dtype = {D.cpp_name(source._dtype)}")  # fmt: skip
    if index.numel() != source.numel():
        raise IndexError(
            f"put_(): Expected source and index to have the same number of elements, but got source.numel() = "
            f"{source.numel()}, index.numel() = {index.numel()}"
        )
    n = x.numel()
    bad = _first_bad(index, -n, n)
    if bad is not None:
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")


@defop(promote=None, inplace=True, check=_put_check, saves=("index",), nondiff=("index",))
def put(input: RawTensor, index: RawTensor, source: RawTensor, accumulate: bool = False) -> Any:
    flat = input.reshape(-1)
    at = flat.at[index.reshape(-1)]
    if accumulate:
        out = at.max(source.reshape(-1)) if flat.dtype == jnp.bool_ else at.add(source.reshape(-1))
    else:
        out = at.set(source.reshape(-1))
    return out.reshape(input.shape)


# --- masked ---------------------------------------------------------------------------------------


def _broadcast_shapes(*shapes: tuple) -> tuple:
    return _broadcast_shape(*shapes)


@defop(promote=None, method=False, grad_name="MaskedSelectBackward0", saves=("mask",), nondiff=("index",))
def _masked_gather(input: RawTensor, index: RawTensor, shape: tuple) -> Any:
    return jnp.broadcast_to(input, shape).reshape(-1)[index]


@expose("torch")
def masked_select(input: Tensor, mask: Tensor, *, out: Tensor | None = None) -> Tensor:
    if mask._dtype is not D.bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = _broadcast_shapes(tuple(mask._shape), tuple(input._shape))
    m = np.broadcast_to(mask._host(), shape).reshape(-1)
    idx = T.make_on(jnp.asarray(np.flatnonzero(m)), input.device)
    result = _masked_gather(input, idx, shape)
    if out is not None:
        registry.copy_to_out(result, out)
        return out
    return result


def _masked_scatter_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x, mask, source = dyn
    if mask._dtype is not D.bool:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype {mask._dtype}")
    if source._dtype is not x._dtype:
        raise RuntimeError(
            f"masked_scatter: expected self and source to have same dtypes but got{D.cpp_name(x._dtype)} and "
            f"{D.cpp_name(source._dtype)}"
        )
    shape = _broadcast_shapes(tuple(x._shape), tuple(mask._shape))
    if shape != tuple(x._shape) and static and static[0]:
        raise RuntimeError(
            f"output with shape {_shape_str(x._shape)} doesn't match the broadcast shape {_shape_str(shape)}"
        )
    if mask.numel() and int(mask._host().sum()) > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")


@defop(promote=None, method=False, grad_name="MaskedScatterBackward0", check=_masked_scatter_check, saves=("mask",),
       nondiff=("mask",))  # fmt: skip
def _masked_scatter(input: RawTensor, mask: RawTensor, source: RawTensor, inplace: bool = False) -> Any:
    shape = jnp.broadcast_shapes(input.shape, mask.shape)
    m = jnp.broadcast_to(mask, shape).reshape(-1)
    pos = jnp.clip(jnp.cumsum(m) - 1, 0, max(source.size - 1, 0))
    vals = source.reshape(-1)[pos] if source.size else jnp.zeros(m.shape, input.dtype)
    return jnp.where(m, vals, jnp.broadcast_to(input, shape).reshape(-1)).reshape(shape)


@expose("torch")
def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    return _masked_scatter(input, mask, source)


def masked_scatter_(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    if grad_mode._state.enabled and (self._rg or self._base_t is not None):
        graph.check_inplace(self)
    from . import commit

    commit(self, _masked_scatter(self, mask, source, True))
    return self


# --- value-dependent shapes (host) --------------------------------------------------------------------


def _int64(arr: Any, device: Any) -> Tensor:
    return T.make_on(jnp.asarray(np.asarray(arr, np.int64)), device)


@expose("torch")
def nonzero(input: Tensor, *, out: Tensor | None = None, as_tuple: bool = False) -> Any:
    if not isinstance(as_tuple, bool):
        raise TypeError(f"nonzero(): argument 'as_tuple' must be bool, not {type(as_tuple).__name__}")
    host = input._host()
    if as_tuple:
        nz = np.nonzero(np.atleast_1d(host))
        return tuple(_int64(a, input.device) for a in nz)
    nz = np.argwhere(host) if host.ndim else np.zeros((int(bool(host)), 0), np.int64)
    result = _int64(nz, input.device)
    if out is not None:
        registry.copy_to_out(result, out)
        return out
    return result


@expose("torch")
def argwhere(input: Tensor) -> Tensor:
    return nonzero(input)


def _unique_host(x: np.ndarray, dim: int | None, consecutive: bool) -> tuple:
    if dim is None:
        flat = x.reshape(-1)
        if consecutive:
            if flat.size == 0:
                return flat, np.zeros(x.shape, np.int64), np.zeros(0, np.int64)
            change = np.concatenate([[True], flat[1:] != flat[:-1]])
            starts = np.flatnonzero(change)
            inverse = np.cumsum(change) - 1
            counts = np.diff(np.append(starts, flat.size))
            return flat[starts], inverse.reshape(x.shape), counts
        vals, inverse, counts = np.unique(flat, return_inverse=True, return_counts=True)
        return vals, inverse.reshape(x.shape), counts
    moved = np.moveaxis(x, dim, 0)
    rows = moved.reshape(moved.shape[0], -1)
    if consecutive:
        if rows.shape[0] == 0:
            return x, np.zeros(0, np.int64), np.zeros(0, np.int64)
        change = np.concatenate([[True], (rows[1:] != rows[:-1]).any(axis=1)])
        starts = np.flatnonzero(change)
        inverse = np.cumsum(change) - 1
        counts = np.diff(np.append(starts, rows.shape[0]))
        vals = moved[starts]
    else:
        _, first, inverse, counts = np.unique(rows, axis=0, return_index=True, return_inverse=True,
                                              return_counts=True)  # fmt: skip
        vals = moved[first]
    return np.moveaxis(vals, 0, dim), inverse.reshape(-1), counts


def _unique_result(input: Tensor, vals: np.ndarray, inverse: np.ndarray, counts: np.ndarray,
                   return_inverse: bool, return_counts: bool) -> Any:  # fmt: skip
    out = T.make_on(jnp.asarray(vals).astype(input._dtype.np), input.device, input._dtype)
    if not return_inverse and not return_counts:
        return out
    res = [out]
    if return_inverse:
        res.append(_int64(inverse, input.device))
    if return_counts:
        res.append(_int64(counts, input.device))
    return tuple(res)


@expose("torch")
def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
           dim: int | None = None) -> Any:  # fmt: skip
    """torch.unique. The values are always sorted (as torch's CPU kernel does for sorted=False too)."""
    d = None if dim is None else wrap_dim(dim, input.dim())
    vals, inverse, counts = _unique_host(input._host(), d, consecutive=False)
    return _unique_result(input, vals, inverse, counts, return_inverse, return_counts)


@expose("torch")
def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None) -> Any:  # fmt: skip
    d = None if dim is None else wrap_dim(dim, input.dim())
    vals, inverse, counts = _unique_host(input._host(), d, consecutive=True)
    return _unique_result(input, vals, inverse, counts, return_inverse, return_counts)


@expose("torch")
def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    if input._dtype.is_floating_point or input._dtype.is_complex or input._dtype is D.bool:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{D.cpp_name(input._dtype)}'")
    if input.dim() != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    host = input._host()
    if host.size and host.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.dim() != 1 or weights._shape[0] != input._shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    n = max(int(host.max()) + 1 if host.size else 0, minlength)
    if weights is None:
        return _int64(np.bincount(host, minlength=n), input.device)
    dt = weights._dtype if weights._dtype in (D.float32, D.float64) else D.float64
    return _weighted_bincount_op(input, weights, n, dt)


@defop(promote=None, method=False, differentiable=False)
def _weighted_bincount_op(input: RawTensor, weights: RawTensor, n: int, dt: Any) -> Any:
    return jnp.zeros((n,), dt.np).at[input].add(weights.astype(dt.np))


def _histc_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x, lo, hi = dyn
    (bins,) = static
    if not x._dtype.is_floating_point:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{D.cpp_name(x._dtype)}'")
    if bins <= 0:
        raise RuntimeError("torch.histc(): bins must be > 0, but got " + str(bins) + " for bins")
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if lo == hi and x.numel():  # the range comes from the data: torch needs it finite
        lo, hi = x.min().item(), x.max().item()
        if math.isnan(lo) or math.isnan(hi):
            lo = hi = -math.nan  # torch prints the NaN range as "-nan"
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{_c_float(lo)}, {_c_float(hi)}] is not finite")


def _c_float(v: float) -> str:
    """A float as C++'s stream prints it (``-nan`` for a NaN with the sign bit, as torch's min/max give)."""
    if math.isnan(v):
        return "-nan" if math.copysign(1.0, v) < 0 else "nan"
    return f"{v:g}"


@defop(promote=None, out=True, differentiable=False, check=_histc_check)
def histc(input: RawTensor, bins: int = 100, min: Scalar = 0, max: Scalar = 0) -> Any:
    x = input.reshape(-1)
    acc = jnp.float64 if input.dtype == jnp.float64 else jnp.float32
    lo, hi = jnp.asarray(min, acc), jnp.asarray(max, acc)
    if x.size:  # min == max (compared as given, before the cast): the data's range
        same = jnp.asarray(min, jnp.float64) == jnp.asarray(max, jnp.float64)
        lo, hi = jnp.where(same, jnp.min(x).astype(acc), lo), jnp.where(same, jnp.max(x).astype(acc), hi)
    lo, hi = jnp.where(lo == hi, lo - 1, lo), jnp.where(lo == hi, hi + 1, hi)
    xf = x.astype(acc)
    pos = ((xf - lo) * bins / (hi - lo)).astype(jnp.int64)
    pos = jnp.where(xf == hi, bins - 1, pos)
    ok = (xf >= lo) & (xf <= hi)
    return jnp.zeros((bins,), input.dtype).at[jnp.where(ok, pos, bins)].add(1, mode="drop")


# --- sorted search ---------------------------------------------------------------------------------------


@defop(promote=None, method=False, differentiable=False)
def _searchsorted(sorted_sequence: RawTensor, input: RawTensor, right: bool, out_int32: bool) -> Any:
    side = "right" if right else "left"
    dt = jnp.int32 if out_int32 else jnp.int64
    seq = sorted_sequence
    if seq.ndim == 1:
        return jnp.searchsorted(seq, input, side=side).astype(dt)
    lead = seq.shape[:-1]
    s2 = seq.reshape(-1, seq.shape[-1])
    v2 = input.reshape(s2.shape[0], -1)
    out = jax.vmap(lambda s, v: jnp.searchsorted(s, v, side=side))(s2, v2)
    return out.reshape(lead + input.shape[-1:]).astype(dt)


@expose("torch")
def searchsorted(sorted_sequence: Tensor, input: Any, *, out_int32: bool = False, right: bool = False,
                 side: str | None = None, out: Tensor | None = None, sorter: Tensor | None = None) -> Tensor:  # fmt: skip
    from .creation import tensor as _tensor

    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError(
                "torch.searchsorted(): side and right can't be set to opposites, got side of left while right was True"
            )
        right = side == "right"
    scalar = not isinstance(input, Tensor)
    if scalar:
        input = _tensor(input, dtype=sorted_sequence._dtype, device=sorted_sequence.device)
    seq = sorted_sequence
    if sorter is not None:
        if sorter._dtype is not D.int64:
            raise RuntimeError("torch.searchsorted(): sorter must be a tensor of long dtype but got dtype " +
                               str(sorter._dtype).replace("torch.", ""))  # fmt: skip
        if tuple(sorter._shape) != tuple(seq._shape):
            raise RuntimeError(
                "torch.searchsorted(): boundary and sorter must have the same size, but got boundary tensor "
                f"{_shape_str(seq._shape)}and got sorter tensor {_shape_str(sorter._shape)}"
            )
        seq = gather(seq, -1, sorter)
    if seq.dim() == 0:
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 dimension"
        )
    if seq.dim() > 1 and (input.dim() != seq.dim() or tuple(input._shape[:-1]) != tuple(seq._shape[:-1])):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
            f"tensor and input value tensor must match, but we got boundaries tensor {_shape_str(seq._shape)} and "
            f"input value tensor {_shape_str(input._shape)}"
        )
    if input._dtype is not seq._dtype:
        common = D.promote_types(input._dtype, seq._dtype)
        input, seq = input.to(common), seq.to(common)
    result = _searchsorted(seq, input, bool(right), bool(out_int32))
    if out is not None:
        registry.copy_to_out(result, out)
        return out
    return result


@expose("torch")
def bucketize(input: Any, boundaries: Tensor, *, out_int32: bool = False, right: bool = False,
              out: Tensor | None = None) -> Tensor:  # fmt: skip
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)


del return_types
