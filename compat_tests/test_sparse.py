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


def _same_error(expr: str) -> None:
    """``expr`` (over ``lib`` and a sparse ``s``) raises the same exception type and message in both libraries."""
    caught = []
    for lib in (torch, torchlike):
        s, _ = _sparse(lib)
        with pytest.raises(Exception) as info:
            eval(expr, {"lib": lib, "s": s})  # noqa: S307 - the test's own expressions
        caught.append((type(info.value).__name__, str(info.value)))
    assert caught[1] == caught[0]


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
    for product in (lambda: leaf @ torchlike.ones(3, 2), lambda: torchlike.ones(2, 3) @ leaf,
                    lambda: torchlike.mv(leaf, torchlike.ones(3)), lambda: leaf @ leaf):  # fmt: skip
        with pytest.raises(NotImplementedError, match="gradient outside its pattern"):
            product()


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
        torchlike.mean(s)


# --- arithmetic on sparse tensors: how graph code normalises an adjacency ---------------------------------

_ARITH = {
    "add": lambda lib, a, b: a + b,
    "sub": lambda lib, a, b: a - b,
    "add_alpha": lambda lib, a, b: a.add(b, alpha=0.5),
    "mul_sparse": lambda lib, a, b: a * b,
    "mul_dense": lambda lib, a, b: a * lib.arange(9.0, dtype=a.dtype).reshape(3, 3),
    "mul_number": lambda lib, a, b: a * 2.5,
    "rmul_number": lambda lib, a, b: 3 * a,
    "mul_0d": lambda lib, a, b: a * lib.tensor(2.0, dtype=a.dtype),
    "div_number": lambda lib, a, b: a / 4,
    "neg": lambda lib, a, b: -a,
    "pow": lambda lib, a, b: a.pow(2),
    "transpose": lambda lib, a, b: a.transpose(0, 1),
    "transpose_neg": lambda lib, a, b: a.transpose(-1, 0),
    "t": lambda lib, a, b: a.t(),
    "clone": lambda lib, a, b: a.clone(),
    "double": lambda lib, a, b: a.double(),
    "to_dtype": lambda lib, a, b: a.to(lib.float64),
}


def _arith(lib: object, name: str, coalesce: bool) -> list:
    s, v = _sparse(lib, requires_grad=True)
    other = lib.sparse_coo_tensor(lib.tensor([[0, 1, 2], [2, 2, 2]]), lib.tensor([1.0, -2.0, 0.25]), (3, 3))
    if coalesce:
        s, other = s.coalesce(), other.coalesce()
    out = _ARITH[name](lib, s, other)
    dense = out.to_dense()
    (dense * lib.arange(9.0, dtype=dense.dtype).reshape(3, 3)).sum().backward()
    return [dense, out.is_coalesced(), str(out.layout), out.dtype, tuple(out.shape), out.requires_grad, v.grad]


@pytest.mark.parametrize("coalesce", [False, True])
@pytest.mark.parametrize("name", list(_ARITH))
def test_arithmetic(name: str, coalesce: bool) -> None:
    assert_same(_arith(torch, name, coalesce), _arith(torchlike, name, coalesce))


def test_arithmetic_errors() -> None:
    for bad, message in [
        (lambda lib, s: s + lib.ones(3, 3), r"add\(sparse, dense\) is not supported"),
        (lambda lib, s: s - 1, r"add\(sparse, dense\) is not supported"),
        (lambda lib, s: s + lib.sparse_coo_tensor(lib.tensor([[0], [0]]), lib.tensor([1.0]), (2, 2)),
         r"add: expected sizes of 'self' and 'other' to match, but \[3, 3\] != \[2, 2\]"),
        (lambda lib, s: s / lib.ones(3, 3), r"Sparse division requires a scalar or zero-dim dense tensor divisor"),
        (lambda lib, s: s.pow(0), "pow: cannot raise to zeroth power on sparse tensor"),
    ]:  # fmt: skip
        for lib in (torch, torchlike):
            s, _ = _sparse(lib)
            with pytest.raises(RuntimeError, match=message):
                bad(lib, s)
    for lib in (torch, torchlike):
        with pytest.raises(
            IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"
        ):
            _sparse(lib)[0].transpose(0, 2)


def _gcn(lib: object) -> list:
    """Two steps of a one-layer graph convolution on a normalised adjacency (A + I) D^-1, as GCN code does."""
    lib.manual_seed(0)
    n = 5
    edges = lib.tensor([[0, 1, 1, 2, 3, 4, 2], [1, 0, 2, 1, 4, 3, 0]])
    adj = lib.sparse_coo_tensor(edges, lib.ones(edges.shape[1]), (n, n))
    eye = lib.sparse_coo_tensor(lib.arange(n).repeat(2, 1), lib.ones(n), (n, n))
    adj = adj + eye
    deg = lib.sparse.sum(adj, dim=1).to_dense()
    adj = adj * (1.0 / deg).reshape(n, 1).expand(n, n)
    lin = lib.nn.Linear(3, 2)
    x = lib.randn(n, 3)
    opt = lib.optim.SGD(lin.parameters(), lr=0.1)
    losses = []
    for _ in range(2):
        opt.zero_grad()
        h = lib.sparse.addmm(lib.zeros(n, 2), adj, lin(x), beta=0.5, alpha=2.0)
        loss = lib.spmm(adj.t().coalesce(), h).pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return [losses, lin.weight, adj.to_dense(), adj.is_coalesced()]


def test_gcn_normalisation_and_training() -> None:
    assert_same(_gcn(torch), _gcn(torchlike))


_LEGACY = ["(idx, vals)", "(idx, vals, lib.Size([3, 3]))", "(idx, vals, (3, 4))", "(2, 3)", "(lib.Size([2, 2]),)",
           "()", "(idx, vals.double(), lib.Size([3, 3]))"]  # fmt: skip


@pytest.mark.parametrize("args", _LEGACY)
@pytest.mark.parametrize("name", ["FloatTensor", "DoubleTensor", "LongTensor"])
def test_legacy_sparse_types(name: str, args: str) -> None:
    got = []
    for lib in (torch, torchlike):
        idx, vals = lib.tensor(IDX), lib.tensor(VALS)  # noqa: F841 - read by eval
        cls = getattr(lib.sparse, name)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            s = cls(*eval(args))
        got.append([s.to_dense(), s.dtype, tuple(s.shape), s.is_coalesced(), s._nnz(), isinstance(s, cls),
                    isinstance(s, lib.sparse.FloatTensor), isinstance(s, lib.FloatTensor), s.type(), cls.__name__,
                    cls.is_sparse, str(cls.layout), cls.dtype, type(cls).__name__,
                    [str(w.message).split(" (Triggered")[0] for w in caught if "SparseTensor" in str(w.message)]])  # fmt: skip
    # torch warns once per process and form: compare the message only where both warned
    if not got[0][-1] or not got[1][-1]:
        got[0][-1] = got[1][-1] = []
    assert_same(got[0], got[1])


def test_legacy_sparse_types_exist() -> None:
    names = sorted(n for n in dir(torch.sparse) if n.endswith("Tensor") and n[0].isupper() and n not in
                   ("Tensor", "SparseSemiStructuredTensor"))  # fmt: skip
    assert names == sorted(n for n in dir(torchlike.sparse) if n.endswith("Tensor") and n[0].isupper())


@pytest.mark.parametrize("form", ["numpy_int32_transposed", "list", "int32_tensor", "float_numpy"])
def test_indices_of_any_integer_array_like_become_int64(form: str) -> None:
    # the classic Cora-style adjacency: torch.sparse_coo_tensor(edges.T, ones(E), (V, V), dtype=int64)
    edges = np.array([[0, 1], [1, 2], [2, 0], [0, 1]], dtype=np.int32)

    def build(lib: object) -> object:
        idx = {"numpy_int32_transposed": edges.T, "list": edges.T.tolist(),
               "int32_tensor": lib.tensor(edges.T), "float_numpy": edges.T.astype(np.float32)}[form]  # fmt: skip
        adj = lib.sparse_coo_tensor(idx, lib.ones(len(edges)), (3, 3), dtype=lib.int64)
        return adj._indices(), adj._values(), adj.is_coalesced(), adj.to_dense(), adj.coalesce().to_dense()

    assert_same(build(torch), build(torchlike))


@pytest.mark.parametrize("expr", ["eye + adj", "eye - adj", "ints + adj", "1 + adj", "1 - adj", "row + adj"])
def test_dense_plus_sparse_is_dense_with_torchs_promotion(expr: str) -> None:
    def run(lib: object) -> object:
        adj = lib.sparse_coo_tensor(np.array([[0, 1, 1], [1, 0, 2]]), lib.tensor([1, 2, 3]), (3, 3))
        env = {"adj": adj, "eye": lib.eye(3), "ints": lib.ones(3, 3, dtype=lib.int64), "row": lib.ones(3)}
        try:
            out = eval(expr, env)  # noqa: S307 - the test's own expressions
        except RuntimeError as e:
            return ("error", str(e))
        return out, out.layout == lib.strided

    assert_same(run(torch), run(torchlike))


def test_dense_plus_sparse_gradients_reach_the_values() -> None:
    def run(lib: object) -> object:
        v = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = lib.ones(3, 3, requires_grad=True)
        adj = lib.sparse_coo_tensor([[0, 1, 1], [1, 0, 2]], v, (3, 3))
        ((w + adj) ** 2).sum().backward()
        return v.grad, w.grad

    assert_same(run(torch), run(torchlike))


# --- every 2-D pairing with a sparse operand: dense x sparse, sparse x sparse, and mv ----------------------


def _show(out: object) -> list:
    """What a product gives: its layout, values, backward node, and (sparse) its entries and coalesced flag."""
    seen = [str(out.layout), out.to_dense(), type(out.grad_fn).__name__]
    if out.is_sparse:
        seen += [out.is_coalesced(), out._indices(), out._values(), out._nnz()]
    return seen


_FORMS = {
    "mm": lambda lib, a, b: lib.mm(a, b),
    "matmul": lambda lib, a, b: lib.matmul(a, b),
    "@": lambda lib, a, b: a @ b,
    "Tensor.mm": lambda lib, a, b: a.mm(b),
    "Tensor.matmul": lambda lib, a, b: a.matmul(b),
    "sparse.mm": lambda lib, a, b: lib.sparse.mm(a, b),
    "spmm": lambda lib, a, b: lib.spmm(a, b),
}


def _pairing(lib: object, pairing: str, form: str, dtype: str) -> list:
    s, v = _sparse(lib, dtype, requires_grad=True)
    v2 = lib.tensor([2.0, 7.0, -1.5], dtype=getattr(lib, dtype), requires_grad=True)
    s2 = lib.sparse_coo_tensor(lib.tensor([[0, 2, 2], [1, 1, 0]]), v2, (3, 3))
    d = lib.tensor(DENSE.T, dtype=getattr(lib, dtype), requires_grad=True)  # 4 x 3
    a, b = {"dense@sparse": (d, s), "sparse@sparse": (s, s2), "sparse@sparse_uncoalesced": (s2, s)}[pairing]
    out = _FORMS[form](lib, a, b)
    dense = out.to_dense()
    (dense * lib.arange(float(dense.numel()), dtype=dense.dtype).reshape(dense.shape)).sum().backward()
    return [*_show(out), v.grad, v2.grad, d.grad]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("form", list(_FORMS))
@pytest.mark.parametrize("pairing", ["dense@sparse", "sparse@sparse", "sparse@sparse_uncoalesced"])
def test_products_of_every_pairing(pairing: str, form: str, dtype: str) -> None:
    assert_same(_pairing(torch, pairing, form, dtype), _pairing(torchlike, pairing, form, dtype))


def _diag_chain(lib: object, middle: str) -> list:
    """GCN's renormalisation D^-1/2 A D^-1/2 with D = diag(v).to_sparse(), A sparse or dense."""
    w = lib.tensor([1.0, 2.0, 0.5, 4.0], requires_grad=True)
    deg = lib.tensor([2.0, 3.0, 1.0, 2.0])
    d = lib.diag(deg.pow(-0.5)).to_sparse()
    edges = lib.tensor([[0, 1, 1, 2, 3, 0], [1, 0, 2, 1, 0, 3]])
    a = lib.sparse_coo_tensor(edges, lib.ones(6), (4, 4)) + lib.diag(w).to_sparse()
    if middle == "dense":
        a = a.to_dense()
    out = d @ a @ d
    x = lib.arange(8.0).reshape(4, 2)
    (lib.mm(out, x) if middle == "dense" else lib.spmm(out, x)).pow(2).sum().backward()
    return [*_show(out), w.grad]


@pytest.mark.parametrize("middle", ["sparse", "dense"])
def test_diag_chain_renormalisation(middle: str) -> None:
    assert_same(_diag_chain(torch, middle), _diag_chain(torchlike, middle))


_MV = {
    "torch.mv": lambda lib, s, x: lib.mv(s, x),
    "Tensor.mv": lambda lib, s, x: s.mv(x),
    "matmul": lambda lib, s, x: lib.matmul(s, x),
    "@": lambda lib, s, x: s @ x,
}


@pytest.mark.parametrize("form", list(_MV))
def test_mv(form: str) -> None:
    def run(lib: object) -> list:
        s, v = _sparse(lib, requires_grad=True)
        x = lib.tensor([1.0, -2.0, 0.5], requires_grad=True)
        out = _MV[form](lib, s, x)
        (out * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
        return [out, type(out.grad_fn).__name__, v.grad, x.grad]

    assert_same(run(torch), run(torchlike))


def test_vector_times_sparse() -> None:
    def run(lib: object) -> list:
        s, v = _sparse(lib, requires_grad=True)
        x = lib.tensor([1.0, -2.0, 0.5], requires_grad=True)
        out = x @ s
        out.pow(2).sum().backward()
        return [out, v.grad, x.grad]

    assert_same(run(torch), run(torchlike))


_PRODUCT_ERRORS = [
    "lib.mm(lib.ones(2, 3, dtype=lib.float64), s)", "lib.mm(lib.ones(2, 4), s)", "s @ lib.ones(2, 4)",
    "lib.mm(s, s.double())", "lib.sparse.mm(s, lib.sparse_coo_tensor([[0], [0]], [1.0], (4, 2)))",
    "lib.mm(s, lib.ones(3))", "lib.mm(lib.ones(3), s)", "lib.spmm(s, lib.ones(2, 3, 3))",
    "lib.mm(s.long(), s.long())", "lib.mv(s, lib.ones(4))", "lib.mv(s, lib.ones(3, 1))",
    "lib.mv(s, lib.ones(3, dtype=lib.float64))", "s.mv(lib.ones(2))", "s @ 3", "3 @ s", "s.mm(3)", "lib.mm(s, 3)",
    "lib.matmul(s, lib.ones(2, 3, 3))",
]  # fmt: skip


@pytest.mark.parametrize("expr", _PRODUCT_ERRORS)
def test_product_errors_of_every_pairing(expr: str) -> None:
    caught = []
    for lib in (torch, torchlike):
        s, _ = _sparse(lib)
        with pytest.raises(Exception) as info:
            eval(expr, {"lib": lib, "s": s})  # noqa: S307 - the test's own expressions
        caught.append((type(info.value).__name__, str(info.value).split("\n")[0]))
    assert caught[1] == caught[0]
    for lib in (torch, torchlike):  # integer sparse x dense products are fine
        assert_same(
            *[lib.tensor([[1, 0], [2, 3]]).to_sparse() @ lib.tensor([[1, 0], [2, 3]]) for lib in (torch, torchlike)]
        )


# --- torch.add / Tensor.add, sums over dims, to_sparse, index_select, softmax -----------------------------

_ADD = {
    "torch.add": lambda lib, d, s: lib.add(d, s),
    "torch.add_alpha": lambda lib, d, s: lib.add(d, s, alpha=2),
    "Tensor.add": lambda lib, d, s: d.add(s),
    "Tensor.add_alpha": lambda lib, d, s: d.add(s, alpha=-0.5),
    "torch.sub": lambda lib, d, s: lib.sub(d, s),
    "Tensor.sub": lambda lib, d, s: d.sub(s, alpha=2),
    "add_": lambda lib, d, s: d.clone().add_(s),
    "sub_": lambda lib, d, s: d.clone().sub_(s),
    "int_dense": lambda lib, d, s: lib.add(lib.ones(3, 3, dtype=lib.int64), s),
}


@pytest.mark.parametrize("form", list(_ADD))
def test_add_function_and_method_forms(form: str) -> None:
    def run(lib: object) -> list:
        s, v = _sparse(lib, requires_grad=True)
        d = lib.ones(3, 3, requires_grad=True)
        out = _ADD[form](lib, d, s)
        (out * lib.arange(9.0).reshape(3, 3)).sum().backward()
        return [out, str(out.layout), type(out.grad_fn).__name__, v.grad, d.grad]

    assert_same(run(torch), run(torchlike))


@pytest.mark.parametrize("expr", ["lib.add(s, lib.ones(3, 3))", "lib.sub(s, lib.ones(3, 3))",
                                  "lib.add(lib.ones(3), s)", "lib.ones(2, 3).add(s)", "lib.ones(3).add_(s)"])  # fmt: skip
def test_add_errors(expr: str) -> None:
    caught = []
    for lib in (torch, torchlike):
        s, _ = _sparse(lib)
        with pytest.raises(RuntimeError) as info:
            eval(expr, {"lib": lib, "s": s})  # noqa: S307 - the test's own expressions
        caught.append(str(info.value))
    assert caught[1] == caught[0]
    assert repr(torchlike.add(*[_sparse(torchlike)[0]] * 2).to_dense()) == repr(
        torch.add(*[_sparse(torch)[0]] * 2).to_dense()
    )


_SUMS = {
    "torch.sum(s, dim=1)": lambda lib, s: lib.sum(s, dim=1),
    "s.sum(dim=1)": lambda lib, s: s.sum(dim=1),
    "s.sum(0)": lambda lib, s: s.sum(0),
    "s.sum(-1, keepdim=True)": lambda lib, s: s.sum(-1, keepdim=True),
    "torch.sum(s, [1])": lambda lib, s: lib.sum(s, [1]),
    "torch.sum(s, (0, 1))": lambda lib, s: lib.sum(s, (0, 1)),
    "torch.sum(s, (0, 1), keepdim=True)": lambda lib, s: lib.sum(s, (0, 1), keepdim=True),
    "torch.sum(s)": lambda lib, s: lib.sum(s),
    "s.sum()": lambda lib, s: s.sum(),
    "torch.sum(s, 1, dtype=float64)": lambda lib, s: lib.sum(s, 1, dtype=lib.float64),
    "torch.sparse.sum(s, 1)": lambda lib, s: lib.sparse.sum(s, 1),
    "torch.sparse.sum(s, (0, 1))": lambda lib, s: lib.sparse.sum(s, (0, 1)),
    "torch.sparse.sum(s)": lambda lib, s: lib.sparse.sum(s),
}


@pytest.mark.parametrize("dtype", ["float32", "int64", "int32", "bool"])
@pytest.mark.parametrize("form", list(_SUMS))
def test_sum_over_dims_layout_and_dtype(form: str, dtype: str) -> None:
    def run(lib: object) -> list:
        s = lib.sparse_coo_tensor(lib.tensor(IDX), lib.tensor([1, 2, 0, 3, 1]).to(getattr(lib, dtype)), (3, 3))
        out = _SUMS[form](lib, s)
        return [str(out.layout), out.dtype, tuple(out.shape), out.to_dense(), repr(out)]

    assert_same(run(torch), run(torchlike))


@pytest.mark.parametrize("form", ["torch.sparse.sum(s, 1)", "torch.sparse.sum(s, (0, 1))", "torch.sum(s)"])
def test_sum_gradients(form: str) -> None:
    def run(lib: object) -> list:
        s, v = _sparse(lib, requires_grad=True)
        out = _SUMS[form](lib, s)
        (out.to_dense() if out.is_sparse else out).pow(2).sum().backward()
        return [repr(out), v.grad]

    assert_same(run(torch), run(torchlike))


@pytest.mark.parametrize("expr", ["lib.sum(s, 2)", "lib.sparse.sum(s, -3)", "lib.sum(s, (1, 1))"])
def test_sum_errors(expr: str) -> None:
    _same_error(expr)


_DENSE = {
    "diag": lambda lib: lib.diag(lib.tensor([1.0, 2.0, 3.0])),
    "diag_with_zero": lambda lib: lib.diag(lib.tensor([1.0, 0.0, 3.0])),
    "1d": lambda lib: lib.tensor([0.0, 1.5, 0.0, -2.0]),
    "0d": lambda lib: lib.tensor(2.5),
    "0d_zero": lambda lib: lib.tensor(0.0),
    "3d": lambda lib: lib.tensor([[[0.0, 1.0], [2.0, 0.0]], [[0.0, 0.0], [0.0, 3.0]]]),
    "int": lambda lib: lib.tensor([[0, 4], [5, 0]]),
    "bool": lambda lib: lib.tensor([[False, True], [True, True]]),
    "empty": lambda lib: lib.zeros(0, 3),
}


@pytest.mark.parametrize("name", list(_DENSE))
def test_to_sparse_of_any_dense(name: str) -> None:
    def run(lib: object) -> list:
        s = _DENSE[name](lib).to_sparse()
        return [repr(s), s.is_coalesced(), s.to_dense(), s.sparse_dim(), s.coalesce().to_dense()]

    assert_same(run(torch), run(torchlike))


def test_to_sparse_of_a_diag_keeps_the_gradient() -> None:
    def run(lib: object) -> list:
        w = lib.tensor([1.0, 0.0, 3.0], requires_grad=True)
        s = lib.diag(w).to_sparse()
        lib.spmm(s, lib.arange(6.0).reshape(3, 2)).pow(2).sum().backward()
        return [s.to_dense(), w.grad, repr(s), repr(w.to_sparse())]

    assert_same(run(torch), run(torchlike))


_SELECT = [(0, [2, 1]), (1, [0, 0, 2]), (-1, [1]), (0, [-1, 0]), (0, []), (1, [2, 2, 2, 0, 1, 1, 0])]


@pytest.mark.parametrize("coalesce", [False, True])
@pytest.mark.parametrize("dim,index", _SELECT)
def test_index_select(dim: int, index: list, coalesce: bool) -> None:
    def run(lib: object) -> list:
        s, _ = _sparse(lib, requires_grad=True)
        s = s.coalesce() if coalesce else s
        i = lib.tensor(index, dtype=lib.int64)
        outs = [lib.index_select(s, dim, i), s.index_select(dim, i)]
        return [[repr(o), o.is_coalesced(), o.to_dense()] for o in outs]

    assert_same(run(torch), run(torchlike))


def test_index_select_of_a_vector_loops_over_the_entries() -> None:
    # more index entries than nnz: torch's nested loop runs over the stored entries outside
    out = [
        lib.tensor([0.0, 1.0, 0.0, 2.0]).to_sparse().index_select(0, lib.tensor([3, 1, 1, 0]))
        for lib in (torch, torchlike)
    ]
    assert repr(out[1]) == repr(out[0])


@pytest.mark.parametrize("expr", [
    "lib.index_select(s, 2, lib.tensor([0]))", "lib.index_select(s, 0, lib.tensor([5]))",
    "lib.index_select(s, 1, lib.tensor([-4]))", "lib.index_select(s, 0, lib.tensor([0.0]))",
    "lib.index_select(s, 0, lib.tensor([[0]]))", "lib.index_select(s, 0, lib.tensor([0], dtype=lib.int32))",
    "lib.index_select(s, 0, lib.tensor([0]).to_sparse())", "lib.index_select(s, 0, [1])",
    "lib.index_select(lib.tensor(1.0).to_sparse(), 0, lib.tensor([0]))",
])  # fmt: skip
def test_index_select_errors(expr: str) -> None:
    _same_error(expr)


_SOFTMAX = {
    "softmax_1": lambda lib, s: lib.sparse.softmax(s, 1),
    "softmax_0": lambda lib, s: lib.sparse.softmax(s, dim=0),
    "softmax_-1_float64": lambda lib, s: lib.sparse.softmax(s, -1, dtype=lib.float64),
    "log_softmax_1": lambda lib, s: lib.sparse.log_softmax(s, 1),
    "log_softmax_0": lambda lib, s: lib.sparse.log_softmax(s, 0),
}


@pytest.mark.parametrize("coalesce", [False, True])
@pytest.mark.parametrize("name", list(_SOFTMAX))
def test_sparse_softmax(name: str, coalesce: bool) -> None:
    def run(lib: object) -> list:
        s, v = _sparse(lib, requires_grad=True)
        out = _SOFTMAX[name](lib, s.coalesce() if coalesce else s)
        (out.to_dense() * lib.arange(9.0, dtype=out.dtype).reshape(3, 3)).sum().backward()
        # torch's gradient through softmax(dtype=) does not sum to zero over a row: compare the forward only
        return [*_show(out), out.dtype, None if "float64" in name else v.grad]

    assert_same(run(torch), run(torchlike))


def test_sparse_softmax_of_vectors_and_empty() -> None:
    for make in (lambda lib: lib.tensor([0.0, 1.0, 0.0, 2.0]).to_sparse(), lambda lib: lib.zeros(2, 2).to_sparse(),
                 lambda lib: lib.tensor([[[0.0, 1.0], [2.0, 3.0]], [[4.0, 0.0], [0.0, 5.0]]]).to_sparse()):  # fmt: skip
        for dim in range(make(torch).dim()):
            assert_same(*[_show(lib.sparse.softmax(make(lib), dim)) for lib in (torch, torchlike)])
            assert_same(*[_show(lib.sparse.log_softmax(make(lib), dim)) for lib in (torch, torchlike)])


@pytest.mark.parametrize("expr", ["lib.sparse.softmax(lib.tensor([[0, 1], [2, 0]]).to_sparse(), 1)",
                                  "lib.sparse.log_softmax(lib.tensor([[0, 1], [2, 0]]).to_sparse(), 1)",
                                  "lib.sparse.softmax(s, 2)"])  # fmt: skip
def test_sparse_softmax_errors(expr: str) -> None:
    _same_error(expr)
    for lib in (torch, torchlike):  # a dense input: torch's backend error
        with pytest.raises(NotImplementedError, match="aten::_sparse_softmax' with arguments from the 'CPU' backend"):
            lib.sparse.softmax(lib.ones(2, 2), 1)


# --- sparse tensors inside an nn.Module: to(device), coalesce(), to_dense() round trips -------------------


def _module_forward(lib: object, form: str) -> list:
    lib.manual_seed(0)
    device = lib.device("cpu")

    class GraphConv(lib.nn.Module):
        def __init__(self, fin: int, fout: int) -> None:
            super().__init__()
            self.weight = lib.nn.Parameter(lib.randn(fin, fout))

        def forward(self, x: object, adj: object) -> object:
            support = lib.mm(x, self.weight) if not x.is_sparse else lib.spmm(x, self.weight)
            return lib.spmm(adj, support) if form == "spmm" else lib.mm(adj, support)

    layer = GraphConv(4, 3).to(device)
    features = lib.tensor([[1.0, 0.0, 0.0, 2.0], [0.0, 0.0, 3.0, 0.0], [0.0, 1.0, 0.0, 0.0]])
    features = features.to_sparse().to(device)
    adj = lib.sparse_coo_tensor(lib.tensor(IDX), lib.tensor(VALS), (3, 3)).to(device).coalesce()
    out = layer(features, adj)
    back = adj.to_dense().to_sparse().coalesce().to(device)
    out2 = layer(features.coalesce().to_dense(), back)
    (out.pow(2).sum() + out2.sum()).backward()
    return [out, out2, layer.weight.grad, str(features.device), str(adj.device), adj.is_coalesced(),
            back.is_coalesced()]  # fmt: skip


@pytest.mark.parametrize("form", ["spmm", "mm"])
def test_sparse_inputs_inside_a_module(form: str) -> None:
    assert_same(_module_forward(torch, form), _module_forward(torchlike, form))
