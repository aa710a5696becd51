"""Sorting and selection: sort, argsort, msort, topk, kthvalue.

Order rules (torch's CPU kernels): NaN is the largest value; -0.0 and 0.0 are equal; equal values keep their
index order (a stable sort, also when descending). torch's unstable sort (x86-simd-sort) may order equal
values differently on long rows; torchlike returns the stable order, which is what torch gives for
``stable=True`` and for short rows. kthvalue reproduces torch's own quickselect and CPU topk its libstdc++
selection (``_core._stl_sort``), so their indices among equal values are torch's. Gradients go to the selected
indices.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .._core import _stl_sort
from .._core import dtype as D
from .._core import tensor as T
from .._core.tensor import Tensor, wrap_dim
from . import return_types
from ._common import dims
from .reduction import _stable_order, _take
from .registry import OptRawTensor, RawTensor, Scalar, defop, expose


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


@defop(promote=None, out=True, returns=return_types.topk, check=_topk_check, dtypes="nocomplex", method=False,
       grad_name="TopkBackward0")  # fmt: skip
def _topk(input: RawTensor, k: int, dim: int, largest: bool, sorted: bool, order: OptRawTensor = None) -> Any:
    """(values, indices), largest (or smallest) first, NaN counting as the largest; ``order`` (torch's
    CPU indices, computed on the host) when given, else the stable order."""
    d = _dim(dim, input.ndim)
    if d is None:
        return input, jnp.zeros((), jnp.int64)
    if order is None:
        order = _fast_topk(input, k, d, largest)
    if order is None:
        order = lax.slice_in_dim(_stable_order(input, d, descending=largest), 0, k, axis=d)
    return jnp.take_along_axis(input, order, axis=d), order


def _fast_topk(x: Any, k: int, d: int, largest: bool) -> Any:
    """lax.top_k (stable among equal keys) on float32 keys: XLA's CPU fast path exists only for float32,
    so float64 and integer inputs take the full stable sort instead. -0.0 is made equal to 0.0 and NaN
    the largest, as in torch (for smallest-k, NaN and +inf then tie; CPU rows with NaN are done on the
    host, see ``topk``)."""
    if not (jnp.issubdtype(x.dtype, jnp.floating) and x.dtype != jnp.float64):
        return None
    key = x.astype(jnp.float32)
    key = jnp.where(key == 0, 0, key)
    key = key if largest else jnp.where(jnp.isnan(key), -jnp.inf, -key)
    _, order = lax.top_k(jnp.moveaxis(key, d, -1), k)
    return jnp.moveaxis(order.astype(jnp.int64), -1, d)


@expose("torch")
def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True, *,
         out: Any = None) -> Any:  # fmt: skip
    """torch.topk -> (values, indices). On the CPU, where equal values (or ``sorted=False``) make the
    indices depend on torch's unstable selection algorithm, they are torch's exact ones (``_core._stl_sort``);
    elsewhere (GPUs, compiled code) the order is the stable one."""
    order = None
    if input.device.type == "cpu" and T.hook is None and input.dim() > 0 and isinstance(k, int):
        d = wrap_dim(dim, input.dim())
        if 0 < k <= input.shape[d] and not (input._dtype.is_complex or input._dtype is D.bool):
            host = input.detach()._host()
            found = _stl_sort.topk_order(host, k, d, largest, sorted, lambda rows: _host_order(rows, largest))
            if found is not None:
                order = T.make(found, input.device)
    return _topk(input, k, dim, largest, sorted, order, out=out)


def _host_order(rows: np.ndarray, largest: bool) -> np.ndarray:
    """The stable order of rows without NaN (rows with NaN are emulated anyway)."""
    if not largest:
        return np.argsort(rows, axis=-1, kind="stable")
    return np.flip(np.argsort(rows[:, ::-1], axis=-1, kind="stable"), axis=-1) * -1 + rows.shape[-1] - 1


def _kth_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x, k, dim = dyn[0], dyn[1], static[0]
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


def _cswap(gt: Any, a: Any, b: Any) -> tuple:
    """(a, b) swapped when gt(a, b): one compare-exchange of quick_select_template."""
    do = gt(a, b)
    return jnp.where(do, b, a), jnp.where(do, a, b)


def _quickselect(x: Any, k: Any) -> Any:
    """The index torch's kthvalue returns: its quick_select_template (Sedgewick's median-of-three partition,
    NaN largest) on one row. Written as one flat loop whose ``phase`` says which of the algorithm's loops runs
    (0: start a partition round, 1: scan i up, 2: scan j down), keeping only the permutation ``ids`` (the
    partially ordered row is ``x[ids]``) and writing it with one 4-slot scatter per step: nested loops and
    many scatters compile several times slower."""

    def gt(a: Any, b: Any) -> Any:  # on element ids
        return _gt_or_nan(x[a], x[b])

    def step(s: tuple) -> tuple:
        ids, lo, hi, i, j, phase = s
        # phase 0: two elements are ordered and done; otherwise median of three into lo, lo + 1, hi
        two = hi == lo + 1
        mid = (lo + hi) >> 1
        e_lo, e_lo1, e_mid, e_hi = ids[lo], ids[lo + 1], ids[mid], ids[hi]
        t_lo, t_hi = _cswap(gt, e_lo, e_hi)
        m_lo1, m_mid = e_mid, e_lo1  # swap(mid, lo + 1)
        m_lo1, m_hi = _cswap(gt, m_lo1, e_hi)
        m_lo, m_hi = _cswap(gt, e_lo, m_hi)
        m_lo1, m_lo = _cswap(gt, m_lo1, m_lo)
        m_mid = jnp.where(mid == lo + 1, m_lo1, m_mid)  # the same slot: write it consistently
        pos0 = jnp.stack([lo, lo + 1, mid, hi])
        val0 = jnp.where(two, jnp.stack([t_lo, t_hi, t_lo, t_hi]), jnp.stack([m_lo, m_lo1, m_mid, m_hi]))
        s0 = (lo, jnp.where(two, lo, hi), lo + 1, hi, jnp.where(two, 0, 1))
        piv = x[jnp.where(phase == 0, m_lo, ids[lo])]
        # phase 1: do i++ while piv > x[i]  (the bound never binds on a live row: median of three leaves
        # sentinels; it keeps rows that vmap steps after they are done finite)
        ni = i + 1
        s1 = (lo, hi, ni, j, jnp.where((ni < hi) & _gt_or_nan(piv, x[ids[ni]]), 1, 2))
        # phase 2: do j-- while x[j] > piv; then swap(i, j) and scan again, or (crossed) close the round
        nj = j - 1
        more = (nj > lo) & _gt_or_nan(x[ids[nj]], piv)
        crossed = nj < i
        a = jnp.where(crossed, lo, i)
        e_a, e_j = ids[a], ids[nj]
        pos2 = jnp.stack([a, nj, a, nj])
        val2 = jnp.where(more, jnp.stack([e_a, e_j, e_a, e_j]), jnp.stack([e_j, e_a, e_j, e_a]))
        closing = ~more & crossed
        s2 = (jnp.where(closing & (nj <= k), i, lo), jnp.where(closing & (nj >= k), nj - 1, hi), i, nj,
              jnp.where(more, 2, jnp.where(crossed, 0, 1)))  # fmt: skip
        pos = jnp.where(phase == 0, pos0, jnp.where(phase == 1, jnp.stack([lo] * 4), pos2))
        val = jnp.where(phase == 0, val0, jnp.where(phase == 1, jnp.stack([ids[lo]] * 4), val2))
        rest = tuple(jnp.where(phase == 0, p, jnp.where(phase == 1, q, r)) for p, q, r in zip(s0, s1, s2))
        return (ids.at[pos].set(val), *rest)

    zero = jnp.zeros((), jnp.int64)
    state = (jnp.arange(x.shape[0], dtype=jnp.int64), zero, zero + x.shape[0] - 1, zero, zero, zero)
    return lax.while_loop(lambda s: s[2] > s[1], step, state)[0][k]


@defop(promote=None, out=True, returns=return_types.kthvalue, check=_kth_check, dtypes="nocomplex")
def kthvalue(input: RawTensor, k: Scalar, dim: int = -1, keepdim: bool = False) -> Any:
    """torch.kthvalue -> (values, indices): the k-th smallest (1-based) along ``dim``."""
    d = _dim(dim, input.ndim)
    if d is None:
        return input, jnp.zeros((), jnp.int64)
    rows = jnp.moveaxis(input, d, -1)
    flat = rows.reshape(-1, rows.shape[-1])
    k = jnp.asarray(k, jnp.int64) - 1
    idx = jax.vmap(lambda r: _quickselect(r, k))(flat) if flat.shape[0] else jnp.zeros((0,), jnp.int64)
    return _take(input, idx.reshape(rows.shape[:-1]), d, keepdim)


for _op, _rt in ((sort, "sort_out"), (_topk, "topk_out"), (kthvalue, "kthvalue_out")):
    _op._op.returns_out = getattr(return_types, _rt)
