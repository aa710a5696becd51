"""Sparse COO tensors: ``torch.sparse_coo_tensor``, ``Tensor.to_sparse``/``to_dense``, coalescing and the
arithmetic on the values (products live in ``_matmul``, reductions, softmax and index_select in ``_functions``).

A ``SparseCooTensor`` is a ``Tensor`` that holds an int64 ``(ndim, nnz)`` indices tensor and a 1-D values tensor;
it has no dense array. Ops compute new values from the old ones with pure JAX bodies (gathers and segment sums),
so their gradients come from ``jax.vjp`` like any op's; which entries meet is decided on the host from the
indices. Only sparse dims are supported (no hybrid tensors with dense dims in the values); any other op on a
sparse tensor raises torch's NotImplementedError for the SparseCPU backend.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from .._core import dtype as D
from .._core import layout as _layout
from .._core import printing
from .._core import tensor as T
from .._core.size import Size
from .._core.tensor import Tensor
from .._ops import creation
from .._ops import shape as S
from .._ops.registry import RawTensor, TensorArg, defop

__all__ = ["SparseCooTensor", "matches", "segment_sum", "sparse_coo_tensor", "to_dense", "to_sparse"]

_UNSUPPORTED = (
    "Could not run this operation with arguments from the 'SparseCPU' backend: torchlike's sparse COO tensors "
    "support indices(), values(), coalesce(), to_dense(), sum(), t(), transpose(), clone(), to(), index_select(), "
    "sparse + sparse, dense + sparse, - and * (with a sparse, a dense of the same shape or a number), / and ** by "
    "a number, 2-D products with a dense or sparse operand (torch.sparse.mm, torch.sparse.addmm, torch.spmm, "
    "torch.mm, torch.matmul, @, torch.mv) and torch.sparse.softmax/log_softmax; call .to_dense() first"
)


class _SparseBuffer:
    """Stands where a dense tensor keeps its array: any op that reaches for the array raises."""

    __slots__ = ("device",)
    np = None
    np_strides = None

    def __init__(self, device: Any) -> None:
        self.device = device

    @property
    def array(self) -> Any:
        raise NotImplementedError(_UNSUPPORTED)

    def get(self) -> Any:
        raise NotImplementedError(_UNSUPPORTED)

    peek = get


class SparseCooTensor(Tensor):
    """A torch sparse COO tensor (``layout=torch.sparse_coo``)."""

    def _data(self) -> Any:
        raise NotImplementedError(_UNSUPPORTED)

    _peek = _data

    @property
    def is_sparse(self) -> bool:
        return True

    @property
    def layout(self) -> Any:
        return _layout.sparse_coo

    def is_coalesced(self) -> bool:
        return self.__dict__["_coalesced"]

    def _nnz(self) -> int:
        return self.__dict__["_vals"].shape[0]

    def sparse_dim(self) -> int:
        return self.dim()

    def dense_dim(self) -> int:
        return 0

    def indices(self) -> Tensor:
        if not self.is_coalesced():
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self.__dict__["_idx"]

    def values(self) -> Tensor:
        if not self.is_coalesced():
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return self.__dict__["_vals"]

    def _indices(self) -> Tensor:
        return self.__dict__["_idx"]

    def _values(self) -> Tensor:
        return self.__dict__["_vals"]

    def coalesce(self) -> SparseCooTensor:
        if self.is_coalesced():
            return self
        uniq, seg = np.unique(_flat(self), return_inverse=True)
        new_idx = np.stack(np.unravel_index(uniq, tuple(self.shape))).astype(np.int64).reshape(self.dim(), -1)
        vals = self._values()
        summed = _coalesce_values(vals, creation.tensor(seg.reshape(-1), device=vals.device), len(uniq))
        return _make(creation.tensor(new_idx, device=vals.device), summed, self.shape, coalesced=True)

    def to_dense(self, dtype: Any = None, *, masked_grad: bool | None = None) -> Tensor:
        vals = self._values() if dtype is None else self._values().to(dtype)
        return _to_dense(self._indices(), vals, tuple(self.shape))

    def to_sparse(self, *args: Any, **kwargs: Any) -> SparseCooTensor:
        if args or kwargs.get("sparse_dim") not in (None, self.dim()):
            raise NotImplementedError("torchlike: to_sparse() of a sparse tensor to another sparse_dim")
        return self

    def t(self) -> SparseCooTensor:
        if self.dim() != 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but got {self.dim()} "
                               "sparse and 0 dense dimensions")  # fmt: skip
        return self.transpose(0, 1)

    # --- arithmetic on the values (GCN code normalises adjacencies so: adj + eye, adj * c, adj / deg) -----

    def add(self, other: Any, *, alpha: Any = 1) -> SparseCooTensor:
        if not isinstance(other, SparseCooTensor):
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
        if other.shape != self.shape:
            raise RuntimeError(f"add: expected sizes of 'self' and 'other' to match, but {list(self.shape)} != "
                               f"{list(other.shape)}")  # fmt: skip
        vals = other._values() if alpha == 1 else other._values() * alpha
        both = _make(S.cat([self._indices(), other._indices()], 1), S.cat([self._values(), vals]), self.shape, False)
        out = both.coalesce()  # torch merges equal indices; the result is coalesced when both inputs were
        out.__dict__["_coalesced"] = self.is_coalesced() and other.is_coalesced()
        return out

    def sub(self, other: Any, *, alpha: Any = 1) -> SparseCooTensor:
        return self.add(other, alpha=-alpha)

    def mul(self, other: Any) -> SparseCooTensor:
        if isinstance(other, SparseCooTensor):  # the product is zero off the common pattern
            if other.shape != self.shape:
                raise RuntimeError(f"mul: expected 'self' and 'other' to have same sizes, but {list(self.shape)} != "
                                   f"{list(other.shape)}")  # fmt: skip
            a, b = self.coalesce(), other.coalesce()
            _, ia, ib = np.intersect1d(_flat(a), _flat(b), assume_unique=True, return_indices=True)
            ia, ib = (creation.tensor(k.astype(np.int64), device=a.device) for k in (ia, ib))
            vals = a._values()[ia] * b._values()[ib]
            return _make(a._indices()[:, ia], vals, self.shape, self.is_coalesced() and other.is_coalesced())
        if isinstance(other, Tensor) and other.dim() > 0:
            if other.shape != self.shape:
                raise NotImplementedError("torchlike: sparse * dense with broadcasting; the shapes must be equal")
            idx = self._indices()
            return self._with_values(self._values() * other[tuple(idx[d] for d in range(self.dim()))])
        return self._with_values(self._values() * other)

    def div(self, other: Any, *, rounding_mode: str | None = None) -> SparseCooTensor:
        if isinstance(other, Tensor) and other.dim() > 0:
            raise RuntimeError("Sparse division requires a scalar or zero-dim dense tensor divisor (got shape "
                               f"{list(other.shape)} for divisor)")  # fmt: skip
        return self._with_values(self._values().div(other, rounding_mode=rounding_mode))

    def neg(self) -> SparseCooTensor:
        return self._with_values(-self._values())

    def pow(self, exponent: Any) -> SparseCooTensor:
        if not isinstance(exponent, Tensor) and exponent == 0:
            raise RuntimeError("pow: cannot raise to zeroth power on sparse tensor; it would make the result tensor "
                               "dense")  # fmt: skip
        base = self.coalesce()  # not linear: equal indices are summed first, as torch does
        return base._with_values(base._values().pow(exponent))

    __add__, __sub__, __mul__, __rmul__, __truediv__, __neg__, __pow__ = add, sub, mul, mul, div, neg, pow

    # dense + sparse and dense - sparse: a dense result in the promoted dtype (torch.eye(V) + adj). Python asks a
    # subclass's reflected operator first, so these run before Tensor.__add__ reaches for the missing array.
    def __radd__(self, other: Any) -> Tensor:
        if not isinstance(other, Tensor):  # torch: a number becomes a 0-d dense tensor on the right of add
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
        return other + self._dense_like(other)

    def __rsub__(self, other: Any) -> Tensor:
        return other - self._dense_like(other)

    def _dense_like(self, other: Any) -> Tensor:
        shape = list(other.shape) if isinstance(other, Tensor) else []
        if shape != list(self.shape):
            raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size {shape} while "
                               f"other has size {list(self.shape)} (FYI: dense-sparse addition does not currently "
                               "support broadcasting)")  # fmt: skip
        return self.to_dense()

    def clone(self, *, memory_format: Any = None) -> SparseCooTensor:
        return _make(self._indices().clone(), self._values().clone(), self.shape, self.is_coalesced())

    def to(self, *args: Any, **kwargs: Any) -> SparseCooTensor:
        vals = self._values().to(*args, **kwargs)
        if vals is self._values():
            return self
        return _make(self._indices().to(vals.device), vals, self.shape, self.is_coalesced())

    def transpose(self, dim0: int, dim1: int) -> SparseCooTensor:
        n = self.dim()
        for d in (dim0, dim1):
            if not -n <= d < n:
                raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
        order = list(range(n))
        order[dim0], order[dim1] = order[dim1], order[dim0]
        idx = self._indices()
        shape = tuple(self.shape[d] for d in order)
        return _make(S.stack([idx[d] for d in order]), self._values(), Size(shape), False)

    def _with_values(self, vals: Tensor) -> SparseCooTensor:
        return _make(self._indices(), vals, self.shape, self.is_coalesced())

    def type(self, dtype: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
        if dtype is None:
            return "torch.sparse." + Tensor.type(self._values()).split(".")[-1]
        raise NotImplementedError("torchlike: Tensor.type(dtype) of a sparse tensor")

    @property
    def grad(self) -> Tensor | None:
        leaf = self.__dict__["_vals"]
        if self._node is not None or leaf._grad is None:
            return None
        # torch.sparse.mm's gradient: the dense gradient at the coalesced pattern (one value per position, however
        # many duplicates the tensor holds)
        uniq, first = np.unique(_flat(self), return_index=True)
        new_idx = np.stack(np.unravel_index(uniq, tuple(self.shape))).astype(np.int64).reshape(self.dim(), -1)
        dev = leaf.device
        vals = leaf._grad[creation.tensor(first.astype(np.int64), device=dev)]
        return _make(creation.tensor(new_idx, device=dev), vals, self.shape, True)

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            raise NotImplementedError("torchlike: assigning .grad of a sparse tensor")
        self.__dict__["_vals"]._grad = None

    def requires_grad_(self, requires_grad: bool = True) -> SparseCooTensor:
        vals = self.__dict__["_vals"]
        if self._node is None:
            vals.requires_grad_(requires_grad)
            self._rg = vals._rg
        elif not requires_grad:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to use a "
                               "computed variable in a subgraph that doesn't require differentiation use "
                               "var_no_grad = var.detach().")  # fmt: skip
        return self

    def detach(self) -> SparseCooTensor:
        return _make(self._indices(), self._values().detach(), self.shape, self.is_coalesced())

    def __repr__(self, *, tensor_contents: Any = None) -> str:
        idx, vals = self._indices(), self._values()
        indent = len("tensor(")
        suffixes = [f"size={tuple(self.shape)}", f"nnz={self._nnz()}"]
        if vals.dtype not in (D.get_default_dtype(), D.default_complex(), D.int64, D.bool):
            suffixes.append(f"dtype={vals.dtype}")
        suffixes.append("layout=torch.sparse_coo")
        node = self.grad_fn
        if node is not None:
            suffixes.append(f"grad_fn=<{type(node).__name__}>")
        elif self._rg:
            suffixes.append("requires_grad=True")
        parts = []
        for name, t in (("indices", idx), ("values", vals)):
            head = f"{name}=tensor("
            body = printing.tensor_str(np.asarray(t._data()), t.dtype, indent + len(head))
            if t.numel() == 0:
                body += f", size={tuple(t.shape)}"
            parts.append(head + body + ")")
        text = "tensor(" + parts[0] + ",\n" + " " * indent + parts[1]
        # torch: the first suffix always starts a new line, the rest wrap at the line width
        out, last = [text], 0
        for i, suffix in enumerate(suffixes):
            if i == 0 or last + len(suffix) + 2 > printing.PRINT_OPTS.linewidth:
                out.append(",\n" + " " * indent + suffix)
                last = indent + len(suffix)
            else:
                out.append(", " + suffix)
                last += len(suffix) + 2
        return "".join(out) + ")"

    __str__ = __repr__


@defop(promote=None, method=False, grad_name="SparseCooTensorWithDimsAndTensorsBackward0")
def _sparse_values(values: TensorArg) -> Any:
    """The values a sparse tensor holds (identity): the node torch shows as the sparse tensor's grad_fn."""
    return values


@defop(promote=None, method=False, grad_name="ToSparseBackward1")
def _to_sparse_values(values: TensorArg) -> Any:
    """The values ``Tensor.to_sparse`` picked (identity): the node torch shows as the result's grad_fn."""
    return values


@defop(promote=None, method=False, grad_name="ToDenseBackward0")
def _to_dense(indices: RawTensor, values: RawTensor, size: tuple) -> Any:
    """The dense tensor of ``size`` with ``values`` added at ``indices`` (duplicates summed; or-ed for bool)."""
    boolean = values.dtype == jax.numpy.bool_
    if not size:  # a 0-dim tensor: its one value, if it has one
        return (values.any() if boolean else values.sum()).astype(values.dtype)
    at = jax.numpy.zeros(size, values.dtype).at[tuple(indices)]
    return at.max(values) if boolean else at.add(values)


@defop(promote=None, method=False, grad_name="CoalesceBackward0")
def _coalesce_values(values: RawTensor, segments: RawTensor, nnz: int) -> Any:
    """Values of equal indices summed (``segments``: each value's index among the sorted unique indices)."""
    return segment_sum(values, segments, nnz)


def segment_sum(values: Any, segments: Any, nnz: int) -> Any:
    """``jax.ops.segment_sum``, or-ing bool values as torch adds them."""
    if values.dtype == jax.numpy.bool_:
        return jax.ops.segment_max(values, segments, num_segments=nnz)
    return jax.ops.segment_sum(values, segments, num_segments=nnz)


def _host_indices(t: SparseCooTensor) -> np.ndarray:
    return np.asarray(t._indices()._data())


def matches(outer: np.ndarray, inner: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pairs ``(i, j)`` with ``outer[i] == inner[j]``, ordered by ``i`` then ``j`` (torch's nested loop)."""
    order = np.argsort(inner, kind="stable")
    lo = np.searchsorted(inner[order], outer, "left")
    counts = np.searchsorted(inner[order], outer, "right") - lo
    i = np.repeat(np.arange(len(outer)), counts)
    within = np.arange(len(i)) - np.repeat(np.cumsum(counts) - counts, counts)
    return i, order[np.repeat(lo, counts) + within]


def _flat(t: SparseCooTensor) -> np.ndarray:
    """Each stored element's row-major position (host indices)."""
    idx = _host_indices(t)
    return np.ravel_multi_index(tuple(idx), tuple(t.shape)) if idx.shape[1] else np.zeros(0, np.int64)


def _make(indices: Tensor, values: Tensor, size: Any, coalesced: bool) -> SparseCooTensor:
    t = T._tensor(SparseCooTensor, _SparseBuffer(values.device), T.VersionCounter(), None, None, Size(size),
                  values.dtype)  # fmt: skip
    t._rg, t._node, t._out_nr = values._rg, values._node, values._out_nr  # its history is the values'
    t.__dict__.update(_idx=indices, _vals=values, _coalesced=coalesced)
    return t


def sparse_coo_tensor(
    indices: Any, values: Any, size: Any = None, *, dtype: Any = None, device: Any = None, pin_memory: bool = False,
    requires_grad: bool = False, check_invariants: bool | None = None, is_coalesced: bool | None = None,
) -> SparseCooTensor:  # fmt: skip
    """torch.sparse_coo_tensor for sparse dims only (1-D values)."""
    # torch: indices of any dtype (a NumPy int32 edge list's transpose, a list, an int32 tensor) become int64
    idx = indices if isinstance(indices, Tensor) else creation.tensor(np.asarray(indices), device=device)
    vals = values if isinstance(values, Tensor) else creation.tensor(values, dtype=dtype, device=device)
    if dtype is not None and vals.dtype is not dtype:
        vals = vals.to(dtype)
    if idx.dtype is not D.int64:
        idx = idx.to(D.int64)
    if idx.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(idx.shape)}")
    if vals.dim() != 1:
        raise NotImplementedError("torchlike: hybrid sparse COO tensors (values with dense dimensions) are not "
                                  "supported; values must be 1-D")  # fmt: skip
    if idx.shape[1] != vals.shape[0]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {idx.shape[1]}, "
                           f"nnz from values: {vals.shape[0]}")  # fmt: skip
    host = np.asarray(idx._data())
    if size is None:
        size = tuple(int(m) + 1 for m in host.max(axis=1)) if host.shape[1] else (0,) * host.shape[0]
    size = tuple(int(s) for s in size)
    if len(size) != host.shape[0]:
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                           f"sparse_dim = {host.shape[0]}, dense_dim = 0")  # fmt: skip
    for d in range(host.shape[0]):
        if host.shape[1] and (host[d].max() >= size[d] or host[d].min() < 0):
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} but found index "
                               f"{int(host[d].max())}")  # fmt: skip
    idx = idx.detach()
    if requires_grad:
        if vals._node is not None:
            raise RuntimeError("torchlike: requires_grad=True with values that already have a grad_fn")
        vals = vals.detach().requires_grad_()
    elif vals._rg:
        vals = _sparse_values(vals)
    coalesced = bool(is_coalesced) if is_coalesced is not None else host.shape[1] <= 1
    return _make(idx, vals, size, coalesced)


def to_sparse(self: Tensor, sparse_dim: int | None = None, *, layout: Any = None, blocksize: Any = None,
              dense_dim: Any = None) -> SparseCooTensor:  # fmt: skip
    """Tensor.to_sparse (COO, all dims sparse): indices of the nonzeros in row-major order, coalesced."""
    if layout not in (None, _layout.sparse_coo) or blocksize is not None or dense_dim not in (None, 0):
        raise NotImplementedError("torchlike: to_sparse() supports only the COO layout without dense dims")
    if sparse_dim not in (None, self.dim()):
        raise NotImplementedError("torchlike: to_sparse(sparse_dim) with dense dims (hybrid COO tensors)")
    host = np.asarray(self.detach()._data())
    if self.dim():
        nz = np.stack(np.nonzero(host)).astype(np.int64).reshape(self.dim(), -1)
    else:  # torch: a 0-dim tensor keeps its one value unless it is zero
        nz = np.zeros((0, int(host != 0)), np.int64)
    idx = creation.tensor(nz, device=self.device)
    if self.dim() and nz.shape[1]:
        vals = self[tuple(idx[d] for d in range(self.dim()))]
    else:
        vals = self.reshape(-1)[: nz.shape[1]]
    if vals._rg:
        vals = _to_sparse_values(vals)
    return _make(idx, vals, self.shape, coalesced=True)


def to_dense(self: Tensor, dtype: Any = None, *, masked_grad: bool | None = None) -> Tensor:
    """Tensor.to_dense of a strided tensor: the tensor itself, as torch returns it."""
    return self if dtype is None or dtype is self.dtype else self.to(dtype)


def _unsupported(name: str) -> Any:
    def method(self: SparseCooTensor, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(_UNSUPPORTED.replace("this operation", f"'{name}'", 1))

    method.__name__ = name
    return method


# dtype conversions keep the pattern: double(), float(), ...
for _name, _dt in (("double", D.float64), ("float", D.float32), ("half", D.float16), ("bfloat16", D.bfloat16),
                   ("long", D.int64), ("int", D.int32), ("bool", D.bool)):  # fmt: skip
    setattr(SparseCooTensor, _name, lambda self, _dt=_dt: self.to(_dt))

# views work on metadata alone, so they would not reach the array: refuse them up front
for _name in ("view", "view_as", "reshape", "reshape_as", "expand", "expand_as", "permute",
              "unsqueeze", "squeeze", "flatten", "narrow", "select", "unfold", "as_strided", "__getitem__",
              "__setitem__", "numpy", "tolist", "item", "contiguous"):  # fmt: skip
    setattr(SparseCooTensor, _name, _unsupported(_name))

Tensor.to_sparse = to_sparse
Tensor.to_sparse_coo = to_sparse
Tensor.to_dense = to_dense
