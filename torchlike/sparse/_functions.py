"""Functions of sparse COO tensors beyond arithmetic: sums over dims (``torch.sparse.sum``, ``torch.sum``,
``Tensor.sum``), ``index_select``, ``torch.sparse.softmax``/``log_softmax``, and ``dense + sparse`` in its
function and method forms (``torch.add``, ``Tensor.add``, ``sub`` and the in-place forms)."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from .._core import dtype as D
from .._core.tensor import Tensor
from .._ops import creation, pointwise, reduction
from .._ops.registry import RawTensor, defop
from ._coo import SparseCooTensor, _host_indices, _make, matches, segment_sum
from ._matmul import sparse_first

__all__ = ["add", "index_select", "log_softmax", "softmax", "sparse_sum", "sub", "sum"]


def _sum_kernel(values: Any, segments: Any, nnz: int | None) -> Any:
    return values.sum() if nnz is None else segment_sum(values, segments, nnz)


@defop(promote=None, method=False, grad_name="SparseSumBackward0")
def _sparse_sum_values(values: RawTensor, segments: RawTensor, nnz: int | None) -> Any:
    """The values summed into ``nnz`` segments (all of them into a 0-dim tensor when ``nnz`` is None)."""
    return _sum_kernel(values, segments, nnz)


@defop(promote=None, method=False, grad_name="SumBackward1")
def _sum_values(values: RawTensor, segments: RawTensor, nnz: int | None) -> Any:
    return _sum_kernel(values, segments, nnz)


def _wrap(dim: int, n: int) -> int:
    if not -n <= dim < max(n, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(n, 1)}, {max(n, 1) - 1}], but "
                         f"got {dim})")  # fmt: skip
    return dim % max(n, 1)


def _segments(idx: np.ndarray, shape: tuple, dims: list) -> tuple[np.ndarray, np.ndarray]:
    """Each entry's group among the distinct index tuples over ``dims`` (sorted), and those tuples."""
    if not dims:
        return np.zeros(idx.shape[1], np.int64), np.zeros((0, min(idx.shape[1], 1)), np.int64)
    keys = np.ravel_multi_index(tuple(idx[dims]), tuple(shape[d] for d in dims))
    uniq, seg = np.unique(keys, return_inverse=True)
    return seg.reshape(-1), np.stack(np.unravel_index(uniq, tuple(shape[d] for d in dims))).reshape(len(dims), -1)


def _sum(input: SparseCooTensor, dim: Any, keepdim: bool, dtype: Any, torch_sum: bool) -> Tensor:
    op = _sum_values if torch_sum else _sparse_sum_values
    n = input.dim()
    dims = sorted(_wrap(d, n) for d in (range(n) if dim is None else (dim,) if isinstance(dim, int) else dim))
    if len(set(dims)) != len(dims):
        repeated = next(d for d in dims if dims.count(d) > 1)
        raise RuntimeError(f"dim {repeated} appears multiple times in the list of dims")
    vals = input._values()
    if dtype is not None:
        vals = vals.to(dtype)
    elif vals.dtype is D.bool and (torch_sum or len(dims) == n):
        vals = vals.to(D.int64)
    elif not (vals.dtype.is_floating_point or vals.dtype.is_complex) and torch_sum:
        vals = vals.to(D.int64)  # torch: torch.sparse.sum keeps int32 (and bool over some dims)
    dev = vals.device
    if len(dims) == n:
        out = op(vals, creation.zeros(0, dtype=D.int64, device=dev), None)
        return out.reshape((1,) * n) if keepdim else out
    keep = [d for d in range(n) if d not in dims]
    seg, kept = _segments(_host_indices(input), tuple(input.shape), keep)
    summed = op(vals, creation.tensor(seg, device=dev), kept.shape[1])
    if keepdim:
        full = np.zeros((n, kept.shape[1]), np.int64)
        full[keep] = kept
        kept, size = full, tuple(1 if d in dims else input.shape[d] for d in range(n))
    else:
        size = tuple(input.shape[d] for d in keep)
    return _make(creation.tensor(kept.astype(np.int64), device=dev), summed, size, coalesced=True)


def sparse_sum(input: Tensor, dim: Any = None, dtype: Any = None) -> Tensor:
    """torch.sparse.sum: all elements (a dense 0-dim tensor), or over ``dim`` (sparse and coalesced, or dense
    0-dim when no dim is left); integral values keep their dtype over dims, as in torch."""
    if not isinstance(input, SparseCooTensor):
        return input.sum(dtype=dtype) if dim is None else input.sum(dim, dtype=dtype)
    if dim is None:  # torch: coalesced first, which or-s duplicate bool entries
        return reduction.sum(input.coalesce()._values(), dtype=dtype)
    return _sum(input, dim, False, dtype, torch_sum=False)


def sum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None, out: Any = None) -> Tensor:
    """torch.sum / Tensor.sum of a sparse tensor: over ``dim`` a coalesced sparse tensor (integral values
    summed as int64), over every dim a dense one."""
    if out is not None:
        raise NotImplementedError("torchlike: out= with a sparse operand")
    if dim is None and not keepdim:
        return reduction.sum(input._values(), dtype=dtype)
    return _sum(input, dim, keepdim, dtype, torch_sum=True)


@defop(promote=None, method=False, grad_name="IndexSelectBackward0")
def _index_select_values(values: RawTensor, selected: RawTensor) -> Any:
    return values[selected]


def index_select(input: Tensor, dim: int, index: Tensor, *, out: Any = None) -> SparseCooTensor:
    """torch.index_select / Tensor.index_select of a sparse tensor: the entries whose index along ``dim`` is
    selected, in the order of torch's nested loop (an uncoalesced tensor for two entries or more)."""
    if out is not None:
        raise NotImplementedError("torchlike: out= with a sparse operand")
    if input.dim() == 0:
        raise IndexError("index_select() cannot be applied to a 0-dim tensor.")
    if not isinstance(index, Tensor):
        raise TypeError(f"index_select(): argument 'index' (position 3) must be Tensor, not {type(index).__name__}")
    if isinstance(index, SparseCooTensor) or index.dim() != 1 or index.dtype is not D.int64:
        raise IndexError("index_select() argument index must be 1-D strided (non-sparse) long-tensor.")
    dim = _wrap(dim, input.dim())
    size = input.shape[dim]
    wanted = np.asarray(index._data()).astype(np.int64)
    bad = wanted[(wanted < -size) | (wanted >= size)]
    if len(bad):
        raise IndexError(f"index_select(): index contains {bad[0]} that is out of range for tensor of size "
                         f"{list(input.shape)} at dimension {dim}")  # fmt: skip
    wanted = np.where(wanted < 0, wanted + size, wanted)
    idx = _host_indices(input)
    # torch: the loop over the longer of the two runs inside (for more than 2**15 pairs torch searches
    # instead, and its order of equal-index entries may differ; the coalesced tensor is the same)
    if idx.shape[1] >= len(wanted):
        position, selected = matches(wanted, idx[dim])
    else:
        selected, position = matches(idx[dim], wanted)
    new_idx = idx[:, selected]
    new_idx[dim] = position
    dev = input.device
    vals = _index_select_values(input._values(), creation.tensor(selected.astype(np.int64), device=dev))
    shape = tuple(len(wanted) if d == dim else s for d, s in enumerate(input.shape))
    return _make(creation.tensor(new_idx.astype(np.int64), device=dev), vals, shape, coalesced=len(selected) < 2)


def _softmax_kernel(values: Any, segments: Any, nseg: int, log: bool) -> Any:
    # the shift changes nothing mathematically, so it takes no gradient
    top = jax.lax.stop_gradient(jax.ops.segment_max(values, segments, num_segments=nseg))
    shifted = values - top[segments]
    total = jax.ops.segment_sum(jax.numpy.exp(shifted), segments, num_segments=nseg)[segments]
    return shifted - jax.numpy.log(total) if log else jax.numpy.exp(shifted) / total


@defop(promote=None, method=False, grad_name="SparseSoftmaxBackward0")
def _softmax_values(values: RawTensor, segments: RawTensor, nseg: int) -> Any:
    return _softmax_kernel(values, segments, nseg, log=False)


@defop(promote=None, method=False, grad_name="SparseLogSoftmaxBackward0")
def _log_softmax_values(values: RawTensor, segments: RawTensor, nseg: int) -> Any:
    return _softmax_kernel(values, segments, nseg, log=True)


def _softmax(input: Tensor, dim: int, dtype: Any, name: str) -> SparseCooTensor:
    if not isinstance(input, SparseCooTensor):
        raise NotImplementedError(f"Could not run 'aten::_sparse_{name}' with arguments from the 'CPU' backend: "
                                  f"torch.sparse.{name} takes a sparse tensor")  # fmt: skip
    dim = _wrap(dim, input.dim())
    s = input.coalesce()
    vals = s._values() if dtype is None else s._values().to(dtype)
    if not (vals.dtype.is_floating_point or vals.dtype.is_complex):
        raise NotImplementedError(f"\"{name}\" not implemented for '{D._CPP_NAME[vals.dtype]}'")
    others = [d for d in range(s.dim()) if d != dim]
    seg, groups = _segments(_host_indices(s), tuple(s.shape), others)
    op = _log_softmax_values if name == "log_softmax" else _softmax_values
    nseg = groups.shape[1] if others else 1
    return _make(s._indices(), op(vals, creation.tensor(seg, device=vals.device), nseg), s.shape, coalesced=True)


def softmax(input: Tensor, dim: int, dtype: Any = None) -> SparseCooTensor:
    """torch.sparse.softmax: softmax along ``dim`` over the specified entries only (the unspecified ones are
    -inf, not 0), a coalesced sparse tensor."""
    return _softmax(input, dim, dtype, "softmax")


def log_softmax(input: Tensor, dim: int, dtype: Any = None) -> SparseCooTensor:
    """torch.sparse.log_softmax: ``log`` of ``torch.sparse.softmax``, computed stably."""
    return _softmax(input, dim, dtype, "log_softmax")


def _dense_other(input: Tensor, other: SparseCooTensor, alpha: Any, out: Any, fn: Any) -> Tensor:
    if out is not None:
        raise NotImplementedError("torchlike: out= with a sparse operand")
    return fn(input, other._dense_like(input), alpha=alpha)


def add(input: Tensor, other: Any, *, alpha: Any = 1, out: Any = None) -> Tensor:
    """torch.add / Tensor.add with a sparse operand: dense + sparse is dense; a sparse ``input`` adds only a
    sparse ``other`` (torch's error otherwise)."""
    if isinstance(input, SparseCooTensor):
        return input.add(other, alpha=alpha)
    return _dense_other(input, other, alpha, out, pointwise.add)


def sub(input: Tensor, other: Any, *, alpha: Any = 1, out: Any = None) -> Tensor:
    """torch.sub / Tensor.sub with a sparse operand (see ``add``)."""
    if isinstance(input, SparseCooTensor):
        return input.sub(other, alpha=alpha)
    return _dense_other(input, other, alpha, out, pointwise.sub)


def _in_place(method: Any) -> Any:
    """``dense.add_(sparse)``: the dense tensor takes the sparse one's dense form."""

    def sparse_fn(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
        if isinstance(self, SparseCooTensor):
            raise NotImplementedError(f"torchlike: in-place {method.__name__} of a sparse tensor")
        return method(self, other._dense_like(self), alpha=alpha)

    return sparse_fn


SPARSE_FORMS = {"sum": sum, "add": add, "sub": sub, "index_select": index_select}
for _name, _fn in SPARSE_FORMS.items():
    setattr(Tensor, _name, sparse_first(getattr(Tensor, _name), _fn))
for _name in ("add_", "sub_"):
    setattr(Tensor, _name, sparse_first(getattr(Tensor, _name), _in_place(getattr(Tensor, _name))))

SparseCooTensor.sum = sum
SparseCooTensor.index_select = index_select
