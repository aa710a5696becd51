"""Products with sparse COO operands: sparse x dense, dense x sparse and sparse x sparse 2-D products
(``torch.sparse.mm``, ``torch.spmm``, ``torch.mm``, ``torch.matmul``, ``@``), ``torch.mv`` and ``addmm``.

Each product is a gather of the entries that meet and a segment sum, so gradients reach the dense operand and
the values through ``jax.vjp``. Which entries meet is decided on the host from the indices (they never need a
gradient); a sparse x sparse product is a coalesced sparse tensor, as in torch.
"""

from __future__ import annotations

import inspect
from typing import Any

import jax
import numpy as np

from .._core import dtype as D
from .._core.tensor import Tensor
from .._ops import creation
from .._ops.registry import RawTensor, defop
from ._coo import SparseCooTensor, _host_indices, _make, matches

__all__ = ["addmm", "mm", "mv", "spmm", "sparse_first"]


def _spmm_kernel(indices: Any, values: Any, dense: Any, rows: int) -> Any:
    gathered = values[:, None] * dense[indices[1]]
    return jax.ops.segment_sum(gathered, indices[0], num_segments=rows)


@defop(promote=None, method=False, grad_name="SparseAddmmBackward0")
def _sparse_mm(indices: RawTensor, values: RawTensor, dense: RawTensor, rows: int) -> Any:
    return _spmm_kernel(indices, values, dense, rows)


@defop(promote=None, method=False, grad_name="MmBackward0")
def _sparse_mm_as_mm(indices: RawTensor, values: RawTensor, dense: RawTensor, rows: int) -> Any:
    return _spmm_kernel(indices, values, dense, rows)


@defop(promote=None, method=False, grad_name="MmBackward0")
def _dense_sparse_mm(dense: RawTensor, indices: RawTensor, values: RawTensor, cols: int) -> Any:
    """``dense @ sparse``: column j gathers the dense columns of the rows that hold an entry in column j."""
    return _spmm_kernel(indices[::-1], values, dense.T, cols).T


@defop(promote=None, method=False, grad_name="MvBackward0")
def _sparse_mv(indices: RawTensor, values: RawTensor, vec: RawTensor, rows: int) -> Any:
    return jax.ops.segment_sum(values * vec[indices[1]], indices[0], num_segments=rows)


def _pair_values(va: Any, vb: Any, ka: Any, kb: Any, segments: Any, nnz: int) -> Any:
    return jax.ops.segment_sum(va[ka] * vb[kb], segments, num_segments=nnz)


@defop(promote=None, method=False, grad_name="MmBackward0")
def _sparse_sparse_mm(va: RawTensor, vb: RawTensor, ka: RawTensor, kb: RawTensor, segments: RawTensor,
                      nnz: int) -> Any:  # fmt: skip
    return _pair_values(va, vb, ka, kb, segments, nnz)


@defop(promote=None, method=False, grad_name="SparseSparseMatmulBackward0")
def _sparse_sparse_matmul(va: RawTensor, vb: RawTensor, ka: RawTensor, kb: RawTensor, segments: RawTensor,
                          nnz: int) -> Any:  # fmt: skip
    return _pair_values(va, vb, ka, kb, segments, nnz)


def _no_dense_leaf_grad(s: SparseCooTensor) -> None:
    if s._rg and s._node is None:
        # torch: these products give a sparse leaf a gradient at every position (or, for sparse x sparse, at
        # every position the product reaches), not only at its pattern
        raise NotImplementedError("torchlike: this product with a sparse leaf tensor that requires grad (torch "
                                  "gives it a gradient outside its pattern) is not supported; build the values "
                                  "from a leaf (sparse_coo_tensor(indices, leaf * 1, size)) or use "
                                  "torch.sparse.mm(sparse, dense)")  # fmt: skip


def _check_matrices(a: Tensor, b: Tensor) -> None:
    for t, d in ((a, -2), (b, 1)):
        if t.dim() == 1:  # torch: mm indexes the missing dim first
            raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got {d})")
        if t.dim() != 2:
            raise RuntimeError(f"addmm: matrices expected, got {t.dim()}D tensor")


def _sparse_dense(sparse: SparseCooTensor, dense: Tensor, name: str) -> Tensor:
    if dense.dtype is not sparse.dtype:
        raise RuntimeError(f"expected scalar type {D._CPP_NAME[sparse.dtype]} but found {D._CPP_NAME[dense.dtype]}")
    if dense.shape[0] != sparse.shape[1]:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {sparse.shape[1]}, got {dense.shape[0]}")
    if name != "SparseAddmmBackward0":
        _no_dense_leaf_grad(sparse)
    op = _sparse_mm if name == "SparseAddmmBackward0" else _sparse_mm_as_mm
    return op(sparse._indices(), sparse._values(), dense, sparse.shape[0])


def _dense_sparse(dense: Tensor, sparse: SparseCooTensor, name: str) -> Tensor:
    # torch computes dense @ sparse as (sparse.t() @ dense.t()).t(): its errors speak of that product
    if dense.dtype is not sparse.dtype:
        raise RuntimeError(f"expected scalar type {D._CPP_NAME[sparse.dtype]} but found {D._CPP_NAME[dense.dtype]}")
    if dense.shape[1] != sparse.shape[0]:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {sparse.shape[0]}, got {dense.shape[1]}")
    _no_dense_leaf_grad(sparse)
    idx = sparse._indices()
    if name == "SparseAddmmBackward0":  # torch.sparse.mm: a TransposeBackward0 over SparseAddmmBackward0
        return _sparse_mm(idx.flip(0), sparse._values(), dense.t(), sparse.shape[1]).transpose(0, 1)
    return _dense_sparse_mm(dense, idx, sparse._values(), sparse.shape[1])


def _sparse_sparse(a: SparseCooTensor, b: SparseCooTensor, name: str) -> SparseCooTensor:
    if a.dtype is not b.dtype:
        raise RuntimeError(f"mat1 dtype {D._CPP_NAME[a.dtype]} does not match mat2 dtype {D._CPP_NAME[b.dtype]}")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
                           f"{b.shape[0]}x{b.shape[1]})")  # fmt: skip
    if not (a.dtype.is_floating_point or a.dtype.is_complex):
        raise NotImplementedError(f"\"sparse_matmul\" not implemented for '{D._CPP_NAME[a.dtype]}'")
    _no_dense_leaf_grad(a)
    _no_dense_leaf_grad(b)
    ia, ib = _host_indices(a), _host_indices(b)
    ka, kb = matches(ia[1], ib[0])  # entry a[i, k] meets entry b[k, j]
    cols = b.shape[1]
    uniq, seg = np.unique(ia[0][ka] * cols + ib[1][kb], return_inverse=True)
    dev = a.device
    as_tensor = lambda x: creation.tensor(np.asarray(x, np.int64).reshape(-1), device=dev)  # noqa: E731
    op = _sparse_sparse_matmul if name == "SparseAddmmBackward0" else _sparse_sparse_mm
    vals = op(a._values(), b._values(), as_tensor(ka), as_tensor(kb), as_tensor(seg), len(uniq))
    idx = np.stack([uniq // cols, uniq % cols]).astype(np.int64).reshape(2, -1)
    return _make(creation.tensor(idx, device=dev), vals, (a.shape[0], cols), coalesced=True)


def product(a: Any, b: Any, name: str = "MmBackward0") -> Tensor:
    """The 2-D product of two tensors, one of them or both sparse; ``name`` is the backward node torch shows
    (``SparseAddmmBackward0`` for ``torch.sparse.mm``, ``MmBackward0`` for ``torch.mm`` and the others)."""
    if not isinstance(b, Tensor):
        raise TypeError(f"mm(): argument 'mat2' (position 2) must be Tensor, not {type(b).__name__}")
    _check_matrices(a, b)
    if isinstance(a, SparseCooTensor) and isinstance(b, SparseCooTensor):
        return _sparse_sparse(a, b, name)
    if isinstance(a, SparseCooTensor):
        return _sparse_dense(a, b, name)
    return _dense_sparse(a, b, name)


def mm(mat1: Tensor, mat2: Tensor, reduce: str = "sum") -> Tensor:
    """torch.sparse.mm: a 2-D product with a sparse operand or two (``reduce='sum'`` only), or dense x dense."""
    if reduce != "sum":
        raise NotImplementedError(f"torchlike: torch.sparse.mm(reduce={reduce!r}) is not supported")
    if isinstance(mat1, SparseCooTensor) or isinstance(mat2, SparseCooTensor):
        return product(mat1, mat2, "SparseAddmmBackward0")
    return mat1.mm(mat2)


def addmm(mat: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1.0, alpha: Any = 1.0) -> Tensor:
    """torch.sparse.addmm: ``beta * mat + alpha * (mat1 @ mat2)`` with a sparse ``mat1``."""
    return mat * beta + mm(mat1, mat2) * alpha


def spmm(input: Tensor, mat2: Tensor) -> Tensor:
    """torch.spmm: ``torch.mm`` where either operand may be sparse."""
    if isinstance(input, SparseCooTensor) or isinstance(mat2, SparseCooTensor):
        return product(input, mat2)
    return input.mm(mat2)


def mv(input: Tensor, vec: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.mv with a sparse matrix: a dense vector (``MvBackward0``)."""
    if out is not None:
        raise NotImplementedError("torchlike: out= with a sparse operand")
    if not isinstance(input, SparseCooTensor) or isinstance(vec, SparseCooTensor):
        raise NotImplementedError("torchlike: torch.mv with a sparse vector; only the matrix may be sparse")
    if input.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"mv: two tensor dim should be 2 and 1, but got SparseTensor Dim: {input.dim()}Tensor "
                           f"Dim: {vec.dim()}")  # fmt: skip
    if vec.shape[0] != input.shape[1]:
        raise RuntimeError("mv: expected self.size(-1) == vec.size(-1)")
    if vec.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {D._CPP_NAME[input.dtype]} but found {D._CPP_NAME[vec.dtype]}")
    _no_dense_leaf_grad(input)
    return _sparse_mv(input._indices(), input._values(), vec, input.shape[0])


def matmul(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.matmul with a sparse operand: 2-D products, and a sparse matrix times a vector (``mv``)."""
    if out is not None:
        raise NotImplementedError("torchlike: out= with a sparse operand")
    if isinstance(input, SparseCooTensor) and isinstance(other, Tensor) and other.dim() == 1:
        return mv(input, other)
    if isinstance(other, SparseCooTensor) and input.dim() == 1 and other.dim() == 2:
        return product(input.unsqueeze(0), other).squeeze(0)
    if isinstance(input, SparseCooTensor) and other.dim() > 2:  # torch: broadcasting would expand the sparse one
        raise RuntimeError("expand is unsupported for Sparse tensors")
    if input.dim() != 2 or other.dim() != 2:
        raise NotImplementedError("torchlike: torch.matmul with a sparse operand supports 2-D x 2-D and a sparse "
                                  "matrix with a vector")  # fmt: skip
    return product(input, other)


def _mm(input: Tensor, mat2: Tensor, *, out: Tensor | None = None) -> Tensor:
    if out is not None:
        raise NotImplementedError("torchlike: out= with a sparse operand")
    return product(input, mat2)


def sparse_first(fn: Any, sparse_fn: Any) -> Any:
    """``fn`` (a torch function or Tensor method whose first two arguments are tensors), calling ``sparse_fn``
    with the same arguments when one of those two is sparse."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        # NOTE: on every dense call of these ops, so a cheap exact-type test (no subclass of it exists)
        for a in args[:2]:
            if type(a) is SparseCooTensor:
                return sparse_fn(*args, **kwargs)
        if kwargs and any(type(v) is SparseCooTensor for v in kwargs.values()):
            return sparse_fn(*args, **kwargs)
        return fn(*args, **kwargs)

    wrapper.__name__ = wrapper.__qualname__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    wrapper.__wrapped__ = getattr(fn, "__wrapped__", fn)  # "go to definition" still lands on the op's entry
    wrapper._op = getattr(fn, "_op", None)
    wrapper.__signature__ = inspect.signature(fn)
    return wrapper


# the dense-first forms (dense.mm(sparse), dense @ sparse goes through SparseCooTensor.__rmatmul__)
SPARSE_FORMS = {"mm": _mm, "matmul": matmul, "mv": mv}
for _name, _fn in SPARSE_FORMS.items():
    setattr(Tensor, _name, sparse_first(getattr(Tensor, _name), _fn))


def _operand(other: Any, message: str) -> Any:
    if not isinstance(other, Tensor):
        raise TypeError(message.format(type(other).__name__))
    return other


def _mm_method(self: SparseCooTensor, mat2: Tensor) -> Tensor:
    return product(self, _operand(mat2, "mm(): argument 'mat2' (position 1) must be Tensor, not {}"))


def _mv_method(self: SparseCooTensor, vec: Tensor) -> Tensor:
    return mv(self, vec)


def _matmul_method(self: SparseCooTensor, other: Tensor) -> Tensor:
    return matmul(self, other)


def _matmul_operator(self: SparseCooTensor, other: Any) -> Tensor:
    return matmul(self, _operand(other, "unsupported operand type(s) for @: 'Tensor' and '{}'"))


def _rmatmul_operator(self: SparseCooTensor, other: Any) -> Tensor:
    # dense @ sparse: Python asks a subclass's reflected operator first
    return matmul(_operand(other, "unsupported operand type(s) for @: '{}' and 'Tensor'"), self)


SparseCooTensor.mm, SparseCooTensor.mv, SparseCooTensor.matmul = _mm_method, _mv_method, _matmul_method
SparseCooTensor.__matmul__, SparseCooTensor.__rmatmul__ = _matmul_operator, _rmatmul_operator
