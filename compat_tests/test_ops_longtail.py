"""torch's op long tail against torch (issue 20): numerics and statistics, the LU/LDL/eigen family, tensor
methods, signal windows, native norms; edge cases that used to raise; CPU autocast dtypes; and the OpInfo
harness itself on a handful of ops."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from _harness import check, check_raises

import torchlike

rng = np.random.RandomState(0)
X = rng.randn(3, 5).astype(np.float32)
V = rng.randn(6).astype(np.float32)
M = (rng.randn(4, 4) + 4 * np.eye(4)).astype(np.float32)
SYM = (M + M.T).astype(np.float64)
B = rng.randn(4, 2).astype(np.float32)
I = np.array([[3, 1, 4], [1, 5, 9]])
BOOL = np.array([[True, False], [False, True]])

NUMERICS = [
    ("diff", lambda t, x: (t.diff(x), t.diff(x, n=2, dim=0), t.diff(x, prepend=x[:, :1], append=x[:, :2])), [X]),
    ("diff_bool_int", lambda t, b, i: (t.diff(b), t.diff(i, dim=0)), [BOOL, I]),
    ("gradient", lambda t, x: (t.gradient(x), t.gradient(x, spacing=2.0, dim=1, edge_order=2),
                               t.gradient(x, spacing=[t.tensor([0.0, 1.0, 3.0])], dim=0)), [X]),  # fmt: skip
    ("trapezoid", lambda t, x, v: (t.trapezoid(x), t.trapz(x, dx=0.5, dim=0), t.trapezoid(x, x, dim=1),
                                   t.cumulative_trapezoid(x), t.cumulative_trapezoid(x, v[:5])), [X, V]),  # fmt: skip
    ("quantile", lambda t, x: (t.quantile(x, 0.3), t.quantile(x, t.tensor([0.1, 0.5, 1.0]), dim=1, keepdim=True),
                               x.quantile(0.5, dim=0, interpolation="midpoint"),
                               t.quantile(x, 0.25, interpolation="nearest")), [X]),  # fmt: skip
    ("nanquantile", lambda t, x: t.nanquantile(t.where(x > 0.5, float("nan"), x), 0.4, dim=1), [X]),
    ("histogram", lambda t, x: (t.histogram(x, 4), t.histogram(x, bins=3, range=(-1.0, 1.0), density=True),
                                t.histogramdd(x[:, :2], bins=[2, 3])), [X]),  # fmt: skip
    ("isin", lambda t, i: (t.isin(i, t.tensor([1, 9])), t.isin(i, 4, invert=True), t.isin(3, i)), [I]),
    ("cov_corrcoef", lambda t, x, i: (t.cov(x), t.cov(x, correction=0, fweights=t.tensor([1, 2, 1, 1, 3])),
                                      t.corrcoef(x), t.cov(i)), [X, I]),  # fmt: skip
    ("frexp_ldexp", lambda t, x, i: (t.frexp(x), t.ldexp(x, i[0, :1]), x.frexp()), [X, I]),
    ("renorm", lambda t, x: (t.renorm(x, 2, 0, 1.0), x.renorm(1, 1, 0.5)), [X]),
    ("unravel_index", lambda t, i: t.unravel_index(i, (2, 5)), [I]),
]


NO_GRAD = {"histogram", "isin", "unravel_index"}  # torch has no derivative for these


@pytest.mark.parametrize("name,fn,inputs", NUMERICS, ids=[n[0] for n in NUMERICS])
def test_numerics(name, fn, inputs):
    check(fn, inputs, grad=name not in NO_GRAD)


LINALG = [
    ("lu_factor", lambda t, a: (t.linalg.lu_factor(a), t.linalg.lu_factor_ex(a[:, :3]), t.linalg.lu(a),
                                t.lu_unpack(*t.linalg.lu_factor(a))), [M]),  # fmt: skip
    ("lu_solve", lambda t, a, b: (t.linalg.lu_solve(*t.linalg.lu_factor(a), b),
                                  t.linalg.lu_solve(*t.linalg.lu_factor(a), b.mT, left=False),
                                  t.linalg.lu_solve(*t.linalg.lu_factor(a), b, adjoint=True),
                                  t.lu_solve(b, *t.linalg.lu_factor(a))), [M, B]),  # fmt: skip
    ("eig", lambda t, a: (t.linalg.eigvals(a), t.linalg.eig(a).eigenvalues), [M]),
    ("cond", lambda t, a: (t.linalg.cond(a), t.linalg.cond(a, -2)), [M]),
    ("tensor_inv_solve", lambda t, a, b: (t.linalg.tensorinv(a.reshape(2, 2, 4), ind=2),
                                          t.linalg.tensorsolve(a.reshape(2, 2, 2, 2), b.reshape(2, 2, 2)[0])),
     [M, B]),  # fmt: skip
    ("vander", lambda t, v, i: (t.linalg.vander(v[:3]), t.linalg.vander(i[0], N=4)), [V, I]),
    ("triangular_solve", lambda t, a, b: (t.triangular_solve(b, a), b.triangular_solve(a, upper=False,
                                          transpose=True, unitriangular=True)), [M, B]),  # fmt: skip
    ("ormqr", lambda t, a, b, tau: (t.ormqr(a, tau, b), t.ormqr(a, tau, b.mT, left=False, transpose=True)),
     [M, B, V[:4]]),
]


@pytest.mark.parametrize("name,fn,inputs", LINALG, ids=[n[0] for n in LINALG])
def test_linalg(name, fn, inputs):
    check(fn, inputs, rtol=1e-4, atol=1e-5)


def test_eigenvectors_match_lapack_phase():
    check(lambda t, a: t.linalg.eig(a).eigenvectors, [M], grad=False, rtol=1e-4, atol=1e-5)


def test_cond_other_norms():
    check(lambda t, a: (t.linalg.cond(a, "fro"), t.linalg.cond(a, 1), t.linalg.cond(a, "nuc")), [M], grad=False,
          rtol=1e-4)  # fmt: skip


def test_ldl():
    check(lambda t, a, b: (t.linalg.ldl_factor(a), t.linalg.ldl_factor_ex(a, hermitian=True),
                           t.linalg.ldl_solve(*t.linalg.ldl_factor(a), b)), [SYM, B.astype(np.float64)],
          grad=False)  # fmt: skip


def test_lowrank_same_random_draws():
    def fn(t, x):
        t.manual_seed(3)
        U, S, V = t.svd_lowrank(x, q=3)
        t.manual_seed(3)
        return S, t.pca_lowrank(x, q=2)[1], (U * S) @ V.mT

    check(fn, [X], grad=False, rtol=1e-4, atol=1e-4)


TENSOR_METHODS = [
    ("copies", lambda t, x: (t.transpose_copy(x, 0, 1), t.permute_copy(x, (1, 0)), t.t_copy(x), t.view_copy(x, (15,)),
                             t.unsqueeze_copy(x, 0), t.squeeze_copy(x[:1]), t.expand_copy(x[:1], (2, 5)),
                             t.diagonal_copy(x), t.unbind_copy(x), t.split_with_sizes_copy(x, [2, 3], 1),
                             t.unfold_copy(x, 1, 2, 1), t.alias_copy(x), t.as_strided_copy(x, (2, 2), (1, 2))),
     [X]),  # fmt: skip
    ("unsafe", lambda t, x: (t.unsafe_split(x, 2, 1), x.unsafe_chunk(2), t.resolve_neg(x), x.resolve_neg()), [X]),
    ("sum_to_size", lambda t, x, b: (x.sum_to_size(1, 5), x.sum_to_size(5), x.sum_to_size((3, 1)),
                                     b.sum_to_size(1, 2)), [X, BOOL]),  # fmt: skip
]


@pytest.mark.parametrize("name,fn,inputs", TENSOR_METHODS, ids=[n[0] for n in TENSOR_METHODS])
def test_tensor_methods(name, fn, inputs):
    check(fn, inputs)


def test_as_strided_scatter():
    # forward only: torch 2.13's gradient for ``input`` here is nonzero exactly where src was written (and zero
    # elsewhere), the reverse of the function's derivative; torchlike gives the derivative
    check(lambda t, x, b: t.as_strided_scatter(x, b[:2] * 2, (2, 2), (5, 1), 1), [X, B], grad=False)


def test_nonzero_static_and_resize():
    def fn(t, x, i):
        y = x.clone()
        y.resize_(2, 2)
        z = x.clone().resize_(3)
        w = i.clone().resize_as_(i[:1])
        return t.nonzero_static(x > 0, size=4), t.nonzero_static(i, size=9, fill_value=-7), y, z, w

    check(fn, [X, I], grad=False)
    check_raises(lambda t: t.ones(2, requires_grad=True).resize_(4))


def test_empty_variants_metadata():
    got = []
    for lib in (torch, torchlike):
        a = lib.empty_permuted((2, 3, 4), (0, 2, 1))
        b = lib.ones(2).new_empty_strided((2, 3), (1, 2), dtype=lib.float64)
        got.append((tuple(a.shape), str(a.dtype), tuple(b.shape), str(b.dtype)))
    assert got[1] == got[0]
    with pytest.raises(TypeError, match="complex32"):  # no 32-bit complex type in JAX: a clear error
        torchlike.ones(2).chalf()


def test_signal_windows():
    W = torchlike.signal.windows

    def fn(t):
        w = t.signal.windows
        return (w.bartlett(6), w.blackman(5, sym=False), w.cosine(7), w.exponential(6, tau=2.0),
                w.gaussian(5, std=0.7), w.general_cosine(6, a=[0.5, 0.3, 0.2]), w.general_hamming(5, alpha=0.6),
                w.hamming(8, dtype=t.float64), w.hann(1), w.kaiser(6, beta=5.0), w.nuttall(0), w.hann(7, sym=False))

    check(fn, [], grad=False)
    assert W.__name__ == "torchlike.signal.windows"
    check_raises(lambda t: t.signal.windows.hann(-1))
    check_raises(lambda t: t.signal.windows.hann(3, dtype=t.int64))


def test_native_norms():
    x = rng.randn(2, 4, 3).astype(np.float32)
    w, b = rng.rand(4).astype(np.float32), rng.rand(4).astype(np.float32)

    def fn(t, x, w, b):
        rm, rv = t.zeros(4), t.ones(4)
        out = t.native_batch_norm(x, w, b, rm, rv, True, 0.1, 1e-5)
        evalo = t.native_batch_norm(x, w, b, rm, rv, False, 0.1, 1e-5)
        return (t.native_layer_norm(x, (3,), None, None, 1e-5), t.native_group_norm(x, w, b, 2, 4, 3, 2, 1e-5),
                out, rm, rv, evalo)  # fmt: skip

    check(fn, [x, w, b], rtol=1e-4, atol=1e-5)


EDGES = [
    ("bool_scatter_add", lambda t, b: (b.scatter_add(0, t.tensor([[0, 1], [1, 0]]), b),
                                       b.index_add(0, t.tensor([1, 0]), b),
                                       b.put(t.tensor([1, 2]), t.tensor([True, False]), accumulate=True),
                                       t.kron(b, b)), [BOOL]),  # fmt: skip
    ("zero_dim", lambda t, x: (t.softmax(x[0, 0], 0), t.log_softmax(x[0, 0], -1),
                               t.nn.functional.normalize(x[0, 0], dim=0),
                               t.nn.functional.cosine_similarity(x[0, 0], x[0, 1], dim=0),
                               x[0, 0].transpose(0, -1), t.transpose_copy(x[0, 0], 0, 0)), [X]),  # fmt: skip
    ("empty", lambda t, x: (t.softmax(x[:0], 0), t.nn.functional.normalize(x[:0]),
                            t.nn.functional.cosine_similarity(x[:0], x[:0]), x[:0].unfold(1, 2, 1)), [X]),
]  # fmt: skip


@pytest.mark.parametrize("name,fn,inputs", EDGES, ids=[n[0] for n in EDGES])
def test_edge_cases(name, fn, inputs):
    check(fn, inputs)


ERRORS = [
    lambda t: t.nn.functional.cosine_embedding_loss(t.ones(2, 3), t.ones(2, 4), t.ones(2)),
    lambda t: t.nn.functional.cosine_embedding_loss(t.ones(2, 3), t.ones(2, 3), t.ones(3)),
    lambda t: t.addmv(t.ones(3), t.ones(2, 4), t.ones(4)),
    lambda t: t.baddbmm(t.ones(3, 2, 2, dtype=t.float64), t.ones(3, 2, 4), t.ones(3, 4, 2)),
    lambda t: t.quantile(t.ones(3, dtype=t.int64), 0.5),
    lambda t: t.quantile(t.ones(3), 1.5),
    lambda t: t.diff(t.tensor(1.0)),
    lambda t: t.frexp(t.ones(2, dtype=t.int64)),
    lambda t: t.renorm(t.ones(3), 2, 0, 1.0),
    lambda t: t.linalg.vander(t.tensor(2.0)),
    lambda t: t.linalg.tensorinv(t.ones(2, 3), ind=1),
    lambda t: t.ones(2, 3).sum_to_size(2, 2),
    lambda t: t.cov(t.ones(2, 2, 2)),
]


@pytest.mark.parametrize("fn", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors(fn):
    check_raises(fn)


CPU_AUTOCAST = [
    ("layer_norm", lambda t, x: t.nn.functional.layer_norm(x, (5,))),
    ("group_norm", lambda t, x: t.nn.functional.group_norm(x.reshape(1, 3, 5), 3)),
    ("einsum", lambda t, x: t.einsum("ij,kj->ik", x, x)),
    ("tensordot", lambda t, x: t.tensordot(x, x.mT, 1)),
    ("avg_pool3d", lambda t, x: t.nn.functional.avg_pool3d(x[:2, :4].reshape(1, 1, 2, 2, 2), 2)),
    ("interpolate", lambda t, x: t.nn.functional.interpolate(x[None], scale_factor=2.0)),
]


@pytest.mark.parametrize("name,fn", CPU_AUTOCAST, ids=[n[0] for n in CPU_AUTOCAST])
def test_cpu_autocast_dtypes(name, fn):
    """The output dtype under torch.autocast('cpu') for float32 and bfloat16 inputs, as torch 2.13 gives it."""
    got = []
    for lib in (torch, torchlike):
        row = []
        for dt in ("float32", "bfloat16"):
            with lib.autocast("cpu", dtype=lib.bfloat16):
                row.append(str(fn(lib, lib.tensor(X).to(getattr(lib, dt))).dtype).split(".")[-1])
        got.append(row)
    assert got[1] == got[0]


def test_opinfo_harness_runs():
    """The OpInfo measuring script on a handful of ops: it runs, finds the torchlike ops, and they agree."""
    pytest.importorskip("expecttest")
    sys.path.insert(0, str(Path(__file__).parent))
    import opinfo_harness as H

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ops = H.select_ops("add,diff,signal.windows.hann,resize_")
        result = H.measure(ops, max_samples=2, timeout=60)
    t = result["totals"]
    assert result["missing"] == []
    assert t["fwd"] > 0 and t["grad"] > 0
    assert t["fwd_ok"] == t["fwd"], result["failures"]
    assert t["grad_ok"] == t["grad"], result["failures"]
