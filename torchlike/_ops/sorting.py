"""Sorting and selection: sort, argsort, msort, topk, kthvalue.

Order rules (torch's CPU kernels): NaN is the largest value; -0.0 and 0.0 are equal; equal values keep their
index order (a stable sort, also when descending). torch's unstable sort (x86-simd-sort) and topk
(std::nth_element) may order equal values differently on long rows; torchlike always returns the stable
order, which is what torch gives for ``stable=True`` and for short rows. kthvalue reproduces torch's own
quickselect, so its index among equal values is torch's. Gradients go to the selected indices.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from .._core import dtype as D
from . import return_types
from .reduction import _stable_order, _take, dims
from .registry import RawTensor, defop

__all__: list = []


def _dim(dim: int, ndim: int) -> int | None:
    (d,) = dims(dim, ndim) or (None,)
    return d


@defop(promote=None, out=True, returns=return_types.sort, dtypes="nocomplex", grad_name="SortBackward0")
def sort(input: RawTensor, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Any:
    """torch.sort -> (values, indices); always stable (see the module note)."""
    d = _dim(dim, input.ndim)
    if d is None:
        return input, jnp.zeros((), jnp.int64)
    order = _stable_order(input, d, descending)
    return jnp.take_along_axis(input, order, axis=d), order


@defop(promote=None, differentiable=False, dtypes="nocomplex")
def argsort(input: RawTensor, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Any:
    d = _dim(dim, input.ndim)
    if d is None:
        return jnp.zeros((), jnp.int64)
    return _stable_order(input, d, descending)


@defop(promote=None, out=True, dtypes="nocomplex", grad_name="SortBackward0")
def msort(input: RawTensor) -> Any:
    """torch.msort: sort along dim 0, values only."""
    d = _dim(0, input.ndim)
    if d is None:
        return input
    return jnp.take_along_axis(input, _stable_order(input, d), axis=d)


def _topk_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x, (k, dim) = dyn[0], static[:2]
    if x._dtype is D.bool:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    d = _dim(dim, x.dim())
    size = x.shape[d] if d is not None else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")


@defop(promote=None, out=True, returns=return_types.topk, check=_topk_check, dtypes="nocomplex")
def topk(input: RawTensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
    """torch.topk -> (values, indices), largest (or smallest) first; NaN counts as the largest. With
    ``sorted=False`` torch's order is unspecified; torchlike returns the sorted order."""
    d = _dim(dim, input.ndim)
    if d is None:
        return input, jnp.zeros((), jnp.int64)
    order = lax.slice_in_dim(_stable_order(input, d, descending=largest), 0, k, axis=d)
    return jnp.take_along_axis(input, order, axis=d), order


def _kth_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x, (k, dim) = dyn[0], static[:2]
    if x._dtype is D.bool:
        raise NotImplementedError("\"kthvalue_cpu\" not implemented for 'Bool'")
    d = _dim(dim, x.dim())
    size = x.shape[d] if d is not None else 1
    if not 0 < k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d if d is not None else 0}")


def _gt_or_nan(a: Any, b: Any) -> Any:
    if jnp.issubdtype(a.dtype, jnp.inexact):
        return (jnp.isnan(a) & ~jnp.isnan(b)) | (a > b)
    return a > b


def _swap(arr: Any, ids: Any, i: Any, j: Any, do: Any = True) -> tuple:
    ai, aj, ii, ij = arr[i], arr[j], ids[i], ids[j]
    arr = arr.at[i].set(jnp.where(do, aj, ai)).at[j].set(jnp.where(do, ai, aj))
    ids = ids.at[i].set(jnp.where(do, ij, ii)).at[j].set(jnp.where(do, ii, ij))
    return arr, ids


def _quickselect(arr: Any, k: int) -> Any:
    """The index torch's kthvalue returns: its quick_select_template (Sedgewick's median-of-three partition,
    NaN largest) run on one row, as a JAX loop."""
    ids = jnp.arange(arr.shape[0], dtype=jnp.int64)

    def partition(state: tuple) -> tuple:
        arr, ids, lo, hi = state
        arr, ids = _swap(arr, ids, (lo + hi) >> 1, lo + 1)
        arr, ids = _swap(arr, ids, lo + 1, hi, _gt_or_nan(arr[lo + 1], arr[hi]))
        arr, ids = _swap(arr, ids, lo, hi, _gt_or_nan(arr[lo], arr[hi]))
        arr, ids = _swap(arr, ids, lo + 1, lo, _gt_or_nan(arr[lo + 1], arr[lo]))
        piv = arr[lo]

        def scan(s: tuple) -> tuple:
            arr, ids, i, j, _ = s
            # the bounds never bind on a live row (the median-of-three leaves sentinels); they keep the loops
            # finite on rows that vmap keeps stepping after they are done
            i = lax.while_loop(lambda i: (i < hi) & _gt_or_nan(piv, arr[i]), lambda i: i + 1, i + 1)
            j = lax.while_loop(lambda j: (j > lo) & _gt_or_nan(arr[j], piv), lambda j: j - 1, j - 1)
            crossed = j < i
            arr, ids = _swap(arr, ids, i, j, ~crossed)
            return arr, ids, i, j, crossed

        arr, ids, i, j, _ = lax.while_loop(lambda s: ~s[4], scan, (arr, ids, lo + 1, hi, False))
        arr, ids = _swap(arr, ids, lo, j)
        return arr, ids, jnp.where(j <= k, i, lo), jnp.where(j >= k, j - 1, hi)

    def step(state: tuple) -> tuple:
        arr, ids, lo, hi = state
        two = hi == lo + 1
        arr2, ids2 = _swap(arr, ids, lo, hi, _gt_or_nan(arr[lo], arr[hi]))
        done = (arr2, ids2, lo, lo)  # finished: make hi <= lo
        return lax.cond(two, lambda: done, lambda: partition(state))

    state = (arr, ids, jnp.asarray(0), jnp.asarray(arr.shape[0] - 1))
    _, ids, _, _ = lax.while_loop(lambda s: s[3] > s[2], step, state)
    return ids[k]


@defop(promote=None, out=True, returns=return_types.kthvalue, check=_kth_check, dtypes="nocomplex")
def kthvalue(input: RawTensor, k: int, dim: int = -1, keepdim: bool = False) -> Any:
    """torch.kthvalue -> (values, indices): the k-th smallest (1-based) along ``dim``."""
    d = _dim(dim, input.ndim)
    if d is None:
        return input, jnp.zeros((), jnp.int64)
    rows = jnp.moveaxis(input, d, -1)
    flat = rows.reshape(-1, rows.shape[-1])
    idx = jax.vmap(lambda r: _quickselect(r, k - 1))(flat) if flat.shape[0] else jnp.zeros((0,), jnp.int64)
    return _take(input, idx.reshape(rows.shape[:-1]), d, keepdim)


for _op, _rt in ((sort, "sort_out"), (topk, "topk_out"), (kthvalue, "kthvalue_out")):
    _op._op.returns_out = getattr(return_types, _rt)
