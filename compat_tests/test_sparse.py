"""Sparse COO tensors under torch and torchlike: construction, repr, coalescing, to_dense/to_sparse, and the
sparse x dense product with gradients to the dense operand and to the values (the graph-network pattern)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from _harness import assert_same

import torchlike

IDX = [[0, 1, 1, 2, 1], [2, 0, 2, 1, 0]]  # (1, 0) twice: uncoalesced
VALS = [3.0, 4.0, 5.0, 6.0, 0.5]
DENSE = np.random.default_rng(0).standard_normal((3, 4))


@pytest.fixture(autouse=True)
def _quiet() -> object:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sparse invariant checks")
        yield


def _sparse(lib: object, dtype: str = "float32", requires_grad: bool = False) -> tuple:
    v = lib.tensor(VALS, dtype=getattr(lib, dtype), requires_grad=requires_grad)
    return lib.sparse_coo_tensor(lib.tensor(IDX), v, (3, 3)), v


def _describe(s: object) -> tuple:
    return (s.is_sparse, str(s.layout), s.is_coalesced(), s._nnz(), tuple(s.shape), str(s.dtype), s.dim(),
            s.sparse_dim(), s.dense_dim(), s.requires_grad, type(s.grad_fn).__name__, s.type())  # fmt: skip


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("requires_grad", [False, True])
def test_construction_and_repr(dtype: str, requires_grad: bool) -> None:
    ref, _ = _sparse(torch, dtype, requires_grad)
    got, _ = _sparse(torchlike, dtype, requires_grad)
    assert _describe(got) == _describe(ref)
    assert repr(got) == repr(ref)
    assert repr(got.coalesce()) == repr(ref.coalesce())
    assert_same(ref.coalesce().indices(), got.coalesce().indices())
    assert_same(ref.coalesce().values(), got.coalesce().values())
    assert_same(ref.to_dense(), got.to_dense())
    for lib in (torch, torchlike):
        leaf = lib.sparse_coo_tensor(lib.tensor(IDX), lib.tensor(VALS), (3, 3), requires_grad=True)
        assert leaf.is_leaf and leaf.requires_grad
    leaves = [lib.sparse_coo_tensor(lib.tensor(IDX), lib.tensor(VALS), (3, 3), requires_grad=True)
              for lib in (torch, torchlike)]  # fmt: skip
    assert repr(leaves[1]) == repr(leaves[0])


def test_to_sparse_to_dense_and_empty() -> None:
    a = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]], np.float32)
    for make in (lambda lib: lib.tensor(a), lambda lib: lib.zeros(2, 2), lambda lib: lib.tensor([0, 3, 0, 7])):
        ref, got = make(torch).to_sparse(), make(torchlike).to_sparse()
        assert repr(got) == repr(ref)
        assert _describe(got) == _describe(ref)
        assert_same(ref.to_dense(), got.to_dense())
    empty = [lib.sparse_coo_tensor(lib.zeros(2, 0, dtype=lib.long), lib.zeros(0), (2, 2)) for lib in (torch, torchlike)]
    assert repr(empty[1]) == repr(empty[0])
    inferred = [lib.sparse_coo_tensor(lib.tensor(IDX), lib.tensor(VALS)) for lib in (torch, torchlike)]
    assert inferred[1].shape == inferred[0].shape
    assert repr(inferred[1].t()) == repr(inferred[0].t())
    dense = [lib.tensor(a) for lib in (torch, torchlike)]
    assert dense[1].to_dense() is dense[1] and dense[0].to_dense() is dense[0]


def test_uncoalesced_errors_and_sums() -> None:
    for lib in (torch, torchlike):
        s, _ = _sparse(lib)
        with pytest.raises(RuntimeError, match="Cannot get indices on an uncoalesced tensor"):
            s.indices()
        with pytest.raises(RuntimeError, match="Cannot get values on an uncoalesced tensor"):
            s.values()
    ref, got = _sparse(torch)[0], _sparse(torchlike)[0]
    assert_same(torch.sparse.sum(ref), torchlike.sparse.sum(got))
    assert_same(ref.sum(), got.sum())
    for dim in (0, 1, -1):
        r, g = torch.sparse.sum(ref, dim=dim), torchlike.sparse.sum(got, dim=dim)
        assert repr(g) == repr(r)
    assert_same(torch.sparse.sum(ref, dim=(0, 1)), torchlike.sparse.sum(got, dim=(0, 1)))


_PRODUCTS = {
    "sparse.mm": lambda lib, s, d: lib.sparse.mm(s, d),
    "spmm": lambda lib, s, d: lib.spmm(s, d),
    "mm": lambda lib, s, d: lib.mm(s, d),
    "matmul": lambda lib, s, d: lib.matmul(s, d),
    "@": lambda lib, s, d: s @ d,
    "Tensor.mm": lambda lib, s, d: s.mm(d),
}


def _product(lib: object, name: str, dtype: str) -> list:
    s, v = _sparse(lib, dtype, requires_grad=True)
    d = lib.tensor(DENSE, dtype=getattr(lib, dtype), requires_grad=True)
    out = _PRODUCTS[name](lib, s, d)
    (out * lib.arange(12.0, dtype=out.dtype).reshape(3, 4)).sum().backward()
    return [out, type(out.grad_fn).__name__, v.grad, d.grad]


@pytest.mark.parametrize("name", list(_PRODUCTS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sparse_dense_product_and_gradients(name: str, dtype: str) -> None:
    assert_same(_product(torch, name, dtype), _product(torchlike, name, dtype))


def test_leaf_sparse_grad() -> None:
    out = []
    for lib in (torch, torchlike):
        s = lib.sparse_coo_tensor(lib.tensor(IDX), lib.tensor(VALS), (3, 3), requires_grad=True)
        lib.sparse.mm(s, lib.tensor(DENSE, dtype=lib.float32)).pow(2).sum().backward()
        out.append(s.grad)
    assert repr(out[1]) == repr(out[0])
    leaf = torchlike.sparse_coo_tensor(torchlike.tensor(IDX), torchlike.tensor(VALS), (3, 3), requires_grad=True)
    with pytest.raises(NotImplementedError, match="dense gradient"):
        leaf @ torchlike.ones(3, 2)


def test_product_errors() -> None:
    for lib in (torch, torchlike):
        s, _ = _sparse(lib)
        with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
            lib.sparse.mm(s, lib.ones(3, 2, dtype=lib.float64))
        with pytest.raises(RuntimeError, match=r"addmm: Argument #3 \(dense\): Expected dim 0 size 3, got 2"):
            lib.sparse.mm(s, lib.ones(2, 2))


def test_unsupported_ops_raise_naming_sparse() -> None:
    s, _ = _sparse(torchlike)
    with pytest.raises(NotImplementedError, match="'SparseCPU' backend"):
        s.view(9)
    with pytest.raises(NotImplementedError, match="'SparseCPU' backend"):
        torchlike.exp(s)
    with pytest.raises(NotImplementedError, match="'SparseCPU' backend"):
        s[0]
    with pytest.raises(NotImplementedError, match="'SparseCPU' backend"):
        torchlike.ones(3, 3) @ s
